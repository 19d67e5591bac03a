/* evalsite checker review.
 *
 * Every decision is posted at once through htmx and the server answers with the criterion row.
 * A decision that did not reach the server is never lost quietly: the row says so and the
 * choice can be sent again (htmx 2 does not swap error answers).
 *
 * Keyboard: the highlighted row is the one keys act on; it moves only with j/k (or the arrows),
 * d (next undecided disagreement) or a click, never by itself. Digits (and c) record a
 * decision, y confirms the shared one, n
 * goes to the note, Enter completes the review, ? shows the help. Overriding a decision the
 * annotators share needs a note: the key then waits in the note field, and Enter there sends
 * it. No shortcut fires while a text field has focus; Escape leaves the field.
 */
(function () {
  "use strict";
  const page = document.getElementById("review-page");
  if (!page) return;
  const readOnly = page.dataset.readOnly === "true";
  let currentId = null;

  const rows = () => Array.from(document.querySelectorAll("#rubric form.review-row"));
  const current = () => (currentId && document.getElementById(currentId)) || null;

  function report(elt, why) {
    const form = elt && elt.closest && elt.closest("form.review-row");
    if (!form) return;
    let note = form.querySelector(".send-error");
    if (!note) {
      note = document.createElement("p");
      note.className = "error send-error";
      note.setAttribute("role", "alert");
      form.prepend(note);
    }
    note.textContent = "Not saved (" + why + "). Press the button (or the key) again.";
  }
  if (typeof htmx !== "undefined") {
    htmx.config.timeout = 15000;
    document.body.addEventListener("htmx:responseError", (e) => report(e.detail.elt, "server answered " + e.detail.xhr.status));
    document.body.addEventListener("htmx:sendError", (e) => report(e.detail.elt, "no connection"));
    document.body.addEventListener("htmx:timeout", (e) => report(e.detail.elt, "no answer"));
    // The swapped-in row keeps the highlight; focus returns to the page so keys work again.
    document.body.addEventListener("htmx:afterSwap", () => {
      highlight(current());
      if (document.activeElement === document.body || !document.activeElement) return;
      if (!document.activeElement.isConnected) document.body.focus();
    });
  }

  function highlight(form) {
    rows().forEach((r) => {
      const on = r === form;
      r.classList.toggle("focused", on);
      if (on) r.setAttribute("aria-current", "true"); else r.removeAttribute("aria-current");
    });
    if (form) currentId = form.id;
  }

  function move(step) {
    const all = rows();
    if (!all.length) return;
    const at = all.indexOf(current());
    const next = all[Math.max(0, Math.min(all.length - 1, at < 0 ? 0 : at + step))];
    highlight(next);
    next.scrollIntoView({ block: "nearest" });
  }

  function hint(form, text) {
    let el = form.querySelector(".note-hint");
    if (!el) {
      el = document.createElement("p");
      el.className = "note-hint warn";
      el.setAttribute("role", "status");
      form.querySelector("label.note").after(el);
    }
    el.textContent = text;
  }

  function choose(form, button) {
    const agreed = form.dataset.agreed === "true";
    const note = form.querySelector("[data-note]");
    if (agreed && button.value !== form.dataset.shared && note && !note.value.trim()) {
      form.dataset.pending = button.value;
      hint(form, "The annotators agree on another decision: write why you override them, then press Enter.");
      note.focus();
      return;
    }
    button.click();
  }

  function sendPending(form) {
    const value = form.dataset.pending;
    if (value) {
      const button = Array.from(form.querySelectorAll("button[name=choice]")).find((b) => b.value === value);
      if (button) button.click();
      return;
    }
    const confirm = form.querySelector("button.confirm");
    if (confirm) confirm.click();
  }

  function toggleHelp() {
    const help = document.getElementById("help");
    help.hidden = !help.hidden;
  }

  document.addEventListener("click", (e) => {
    if (e.target.closest("[data-help-toggle]")) { toggleHelp(); return; }
    const form = e.target.closest("form.review-row");
    if (form) highlight(form);
  });

  document.addEventListener("keydown", (e) => {
    const field = e.target.closest && e.target.closest("input, textarea, select, [contenteditable]");
    if (field) {
      if (e.key === "Escape") { field.blur(); document.body.focus(); e.preventDefault(); return; }
      const form = field.closest("form.review-row");
      if (e.key === "Enter" && form && field.matches("[data-note]")) {
        e.preventDefault();
        sendPending(form);
      }
      return;  // typing: no shortcut fires
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const help = document.getElementById("help");
    if (e.key === "?") { toggleHelp(); e.preventDefault(); return; }
    if (e.key === "Escape" && !help.hidden) { help.hidden = true; return; }
    if (e.key === "j" || e.key === "ArrowDown") { move(1); e.preventDefault(); return; }
    if (e.key === "k" || e.key === "ArrowUp") { move(-1); e.preventDefault(); return; }
    if (e.key === "d") {  // the next disagreement that still needs a decision
      const all = rows();
      const at = all.indexOf(current());
      const next = all.slice(at + 1).concat(all.slice(0, at + 1))
        .find((r) => r.classList.contains("disagreed") && !r.classList.contains("decided"));
      if (next) { highlight(next); next.scrollIntoView({ block: "nearest" }); e.preventDefault(); }
      return;
    }
    if (readOnly) return;
    if (e.key === "Enter") {
      const complete = document.getElementById("complete-btn");
      if (complete) { e.preventDefault(); complete.click(); }
      return;
    }
    const form = current();
    if (!form) return;  // nothing highlighted yet: keys never act on a row the checker has not chosen
    if (e.key === "y") {
      const confirm = form.querySelector("button.confirm");
      if (confirm) { e.preventDefault(); confirm.click(); }
      return;
    }
    if (e.key === "n") {
      const note = form.querySelector("[data-note]");
      if (note) { e.preventDefault(); note.focus(); }
      return;
    }
    const button = Array.from(form.querySelectorAll("button[name=choice]")).find((b) => b.dataset.key === e.key);
    if (button) { e.preventDefault(); choose(form, button); }
  });

  highlight(rows()[0] || null);
  document.body.dataset.ready = "true";  // the keyboard is live (browser tests wait for it)
})();
