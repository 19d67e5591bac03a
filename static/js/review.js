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
  const { rows, current, highlight, navigate } = window.evalsiteRows("#rubric form.review-row");
  if (typeof htmx !== "undefined") {
    // The swapped-in row keeps the highlight; focus returns to the page so keys work again.
    document.body.addEventListener("htmx:afterSwap", () => {
      highlight(current());
      if (document.activeElement === document.body || !document.activeElement) return;
      if (!document.activeElement.isConnected) document.body.focus();
    });
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
    // d: the next disagreement that still needs a decision
    if (navigate(e, (r) => r.classList.contains("disagreed") && !r.classList.contains("decided"))) return;
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
