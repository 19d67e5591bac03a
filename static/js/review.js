/* evalsite checker review: a confirm / override that did not reach the server is never lost
 * quietly — the row says so and offers to send it again (htmx 2 does not swap error answers). */
(function () {
  "use strict";
  if (!document.getElementById("review-page")) return;
  function report(e, why) {
    const form = e.detail.elt.closest && e.detail.elt.closest("form.review-form");
    if (!form) return;
    let note = form.querySelector(".send-error");
    if (!note) {
      note = document.createElement("p");
      note.className = "error send-error";
      form.prepend(note);
    }
    note.textContent = "Not saved (" + why + "). Your choice is still selected: press the button again.";
  }
  document.body.addEventListener("htmx:responseError", (e) => report(e, "server answered " + e.detail.xhr.status));
  document.body.addEventListener("htmx:sendError", (e) => report(e, "no connection"));
  document.body.addEventListener("htmx:timeout", (e) => report(e, "no answer"));
  htmx.config.timeout = 15000;
})();
