/* evalsite rows: the keyboard row navigation and the failed-save notice shared by the checker
 * review and the adjudication page (each page's own script loads after this one).
 *
 * evalsiteRows(selector, {place}) gives the page its rows (the forms matching selector) and:
 * - one highlighted row, the one keys act on; it moves only with navigate() keys or a click;
 * - navigate(event, isOpen): ? toggles the help, Escape closes it, j/k (and the arrows) move,
 *   d goes to the next row isOpen(row) accepts (wrapping); true when the key was one of these;
 * - a failed save (server error, no connection, no answer) said on its row, never lost quietly
 *   (htmx 2 does not swap error answers): place(form, note) puts the notice in the row, and the
 *   page's onFailure(form) hears of it.
 */
window.evalsiteRows = function (selector, options) {
  "use strict";
  const place = (options && options.place) || ((form, note) => form.prepend(note));
  const onFailure = (options && options.onFailure) || (() => {});
  let currentId = null;

  const rows = () => Array.from(document.querySelectorAll(selector));
  const current = () => (currentId && document.getElementById(currentId)) || null;

  function highlight(form) {
    rows().forEach((r) => {
      const on = r === form;
      r.classList.toggle("focused", on);
      if (on) r.setAttribute("aria-current", "true"); else r.removeAttribute("aria-current");
    });
    if (form) currentId = form.id;
    document.dispatchEvent(new CustomEvent("evalsite:row-focus", { detail: { id: form ? form.id : null } }));
  }

  function show(form) {
    highlight(form);
    form.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    const all = rows();
    if (!all.length) return;
    const at = all.indexOf(current());
    show(all[Math.max(0, Math.min(all.length - 1, at < 0 ? 0 : at + step))]);
  }

  function toggleHelp() {
    const help = document.getElementById("help");
    help.hidden = !help.hidden;
  }

  function navigate(e, isOpen) {
    const help = document.getElementById("help");
    if (e.key === "?") { toggleHelp(); e.preventDefault(); return true; }
    if (e.key === "Escape" && !help.hidden) { help.hidden = true; return true; }
    if (e.key === "j" || e.key === "ArrowDown") { move(1); e.preventDefault(); return true; }
    if (e.key === "k" || e.key === "ArrowUp") { move(-1); e.preventDefault(); return true; }
    if (e.key === "d") {
      const all = rows();
      const at = all.indexOf(current());
      const next = all.slice(at + 1).concat(all.slice(0, at + 1)).find(isOpen);
      if (next) { show(next); e.preventDefault(); }
      return true;
    }
    return false;
  }

  function report(elt, why) {
    const form = elt && elt.closest && elt.closest(selector);
    if (!form) return;
    let note = form.querySelector(".send-error");
    if (!note) {
      note = document.createElement("p");
      note.className = "error send-error";
      note.setAttribute("role", "alert");
      place(form, note);
    }
    note.textContent = "Not saved (" + why + "). Press the button (or the key) again.";
    onFailure(form);
  }

  if (typeof htmx !== "undefined") {
    htmx.config.timeout = 15000;
    document.body.addEventListener("htmx:responseError", (e) => report(e.detail.elt, "server answered " + e.detail.xhr.status));
    document.body.addEventListener("htmx:sendError", (e) => report(e.detail.elt, "no connection"));
    document.body.addEventListener("htmx:timeout", (e) => report(e.detail.elt, "no answer"));
  }

  document.addEventListener("click", (e) => {
    if (e.target.closest("[data-help-toggle]")) { toggleHelp(); return; }
    const form = e.target.closest(selector);
    if (form) highlight(form);
  });

  return { rows, current, highlight, navigate };
};
