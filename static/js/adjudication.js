/* evalsite adjudication page.
 *
 * Every decision, confidence, category and note is saved at once through htmx; the server
 * answers with the criterion row (and the progress out of band). A save that did not reach the
 * server is never lost quietly: the row says so (htmx 2 does not swap error answers).
 *
 * Keyboard: the highlighted row is the one keys act on; it moves only with j/k (or the arrows),
 * d (next disputed criterion still open) or a click, never by itself, and a folded row must be
 * opened (o) before keys decide it. Digits (and c) give the final decision, C/P/U the
 * confidence, g goes to the error category, n to the note, Enter to the next item, ? shows the
 * help. No shortcut fires while a field has focus; Escape leaves the field.
 *
 * A row sends one request at a time: the answer replaces the row (with a new revision), so a
 * second request sent meanwhile would be dropped by htmx or refused as stale. A key or click on a
 * row that is saving waits and is sent when the row comes back; text typed meanwhile is carried
 * into the new row. A category chosen with the keyboard is saved when the field is left (Enter,
 * Escape, Tab), not at every arrow step; the note likewise.
 */
(function () {
  "use strict";
  const page = document.getElementById("adjudication-page");
  if (!page) return;
  const isOpen = (form) => !!(form && form.querySelector("details") && form.querySelector("details").open);
  const busy = (form) => form.classList.contains("htmx-request");
  const deferred = [];  // {id, name, value}: a button (name, value) or the form's fields (name null) to send after the swap
  const carried = {};  // row id -> what the user was doing in it when its answer arrived
  let lastInput = "pointer";
  let leaving = false;  // Enter was pressed while saves were pending: go once they are done
  let replacing = null;  // the row being swapped out right now

  // Only the focused criterion's quotes are marked in the response (its raters' and judges'),
  // unless "show every criterion's quotes" is ticked.
  function markQuotes(id) {
    const pk = id ? id.replace(/^crit-/, "") : null;
    document.querySelectorAll("#response-body mark.quote").forEach((mark) => {
      mark.classList.toggle("on", pk !== null && (mark.dataset.criteria || "").includes(" " + pk + " "));
    });
  }
  document.addEventListener("evalsite:row-focus", (event) => markQuotes(event.detail.id));
  const allQuotes = document.getElementById("all-quotes");
  if (allQuotes) allQuotes.addEventListener("change", () => document.getElementById("response").classList.toggle("all-quotes", allQuotes.checked));

  const { rows, current, highlight, navigate } = window.evalsiteRows("#rubric form.adjudication-row", {
    place: (form, note) => form.querySelector("details").append(note),
    onFailure: (form) => {
      // What waited for this row was not sent either; the row's notice says so.
      for (let i = deferred.length - 1; i >= 0; i--) if (deferred[i].id === form.id) deferred.splice(i, 1);
      leaving = false;
    },
  });
  const idle = () => !deferred.length && !document.querySelector("#rubric form.adjudication-row.htmx-request");

  function send(form, name, value) {
    if (busy(form)) { deferred.push({ id: form.id, name: name, value: value }); return; }
    if (!name) { form.requestSubmit(); return; }
    const button = Array.from(form.querySelectorAll("button[type=submit]")).find((b) => b.name === name && b.value === value);
    if (button) button.click();
  }

  // Once: every row swap after a pending Enter (the row, then its out-of-band parts) calls this, and a
  // second navigation while the first is under way made two "next" requests race each other.
  let left = false;
  function leave() {
    if (left) return;
    if (idle()) { left = true; leaving = false; window.location.href = document.getElementById("next-item").href; return; }
    leaving = true;
  }

  const dirty = (field) => field.matches("select") ? field.dataset.dirty === "true" : field.value !== field.defaultValue;

  // Before a row is replaced: remember the field being typed in and unsaved text or category.
  function remember(form) {
    const note = form.querySelector("[data-note]");
    const category = form.querySelector("[data-category]");
    const active = document.activeElement;
    carried[form.id] = {
      note: note && dirty(note) ? note.value : null,
      category: category && dirty(category) ? category.value : null,
      focus: active && form.contains(active) && active.matches("[data-note], [data-category]")
        ? { what: active.matches("[data-note]") ? "[data-note]" : "[data-category]",
            start: active.selectionStart, end: active.selectionEnd }
        : null,
    };
  }

  function restore(form) {
    const was = carried[form.id];
    delete carried[form.id];
    if (!was) return;
    const note = form.querySelector("[data-note]");
    if (note && was.note !== null && note.value !== was.note) note.value = was.note;
    const category = form.querySelector("[data-category]");
    if (category && was.category !== null && category.value !== was.category) {
      category.value = was.category;
      category.dataset.dirty = "true";
    }
    if (was.focus) {
      const field = form.querySelector(was.focus.what);
      if (field) {
        field.focus();
        if (was.focus.start != null && field.setSelectionRange) field.setSelectionRange(was.focus.start, was.focus.end);
      }
    }
  }

  if (typeof htmx !== "undefined") {
    document.body.addEventListener("htmx:beforeSwap", (e) => {
      const form = e.detail.elt && e.detail.elt.closest && e.detail.elt.closest("form.adjudication-row");
      if (form && e.detail.shouldSwap) { remember(form); replacing = form; }
    });
    const swappedRow = (e) => (e.target.matches && e.target.matches("form.adjudication-row") ? e.target : null);
    document.body.addEventListener("htmx:afterSwap", (e) => {
      const form = swappedRow(e);
      if (form) { replacing = null; restore(form); }
      if (document.activeElement && !document.activeElement.isConnected) document.body.focus();
    });
    // Until it settles, htmx gives the new row the old one's attributes (its classes included,
    // htmx-request among them): the highlight and what waited are applied after that.
    document.body.addEventListener("htmx:afterSettle", (e) => {
      const form = swappedRow(e);
      highlight(current());
      for (let i; form && (i = deferred.findIndex((d) => d.id === form.id)) >= 0;) {
        const next = deferred.splice(i, 1)[0];
        // A waiting save of the note or category that an earlier request already carried: nothing to send.
        if (!next.name && !Array.from(form.querySelectorAll("[data-note], [data-category]")).some(dirty)) continue;
        send(form, next.name, next.value);
        break;
      }
      if (leaving && idle()) leave();
    });
  }

  // A click (or a key's click) on a row that is saving waits for the row's answer.
  document.addEventListener("click", (e) => {
    const button = e.target.closest && e.target.closest("form.adjudication-row button[type=submit]");
    if (!button || !busy(button.form)) return;
    e.preventDefault();
    e.stopPropagation();
    send(button.form, button.name, button.value);
  }, true);
  document.addEventListener("keydown", () => { lastInput = "key"; }, true);
  document.addEventListener("pointerdown", () => { lastInput = "pointer"; }, true);
  // A category picked with the mouse is saved at once; stepped through with the keyboard, it is
  // saved when the field is left (each arrow step would otherwise be a save).
  document.addEventListener("change", (e) => {
    if (!e.target.matches("select[data-category]")) return;
    if (lastInput === "key" && document.activeElement === e.target) { e.target.dataset.dirty = "true"; return; }
    send(e.target.form);
  });
  document.addEventListener("focusout", (e) => {
    const field = e.target;
    if (!field.matches || !field.matches("form.adjudication-row [data-note], form.adjudication-row [data-category]")) return;
    // Not when the row is being replaced: its text is carried into the new row, still unsaved.
    if (field.isConnected && field.form !== replacing && dirty(field)) send(field.form);
  });

  document.addEventListener("keydown", (e) => {
    const field = e.target.closest && e.target.closest("input, textarea, select, [contenteditable]");
    if (field) {
      // Leaving the note or the category saves it (focusout); Enter there saves and leaves too.
      if (e.key === "Escape" || (e.key === "Enter" && field.matches("[data-note], [data-category]"))) {
        field.blur(); document.body.focus(); e.preventDefault();
      }
      return;  // typing: no shortcut fires
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    // Enter on a button, link or summary reached with Tab presses it, as everywhere else.
    if (e.key === "Enter" && e.target.closest && e.target.closest("button, a, summary")) return;
    // d: the next disputed criterion still open
    if (navigate(e, (r) => r.dataset.disputed === "true" && !r.classList.contains("decided"))) return;
    if (e.key === "Enter") { e.preventDefault(); leave(); return; }
    const form = current();
    if (!form) return;
    if (e.key === "o") {
      const details = form.querySelector("details");
      details.open = !details.open;
      e.preventDefault();
      return;
    }
    if (!isOpen(form)) return;  // a folded row is never decided by a key: open it first
    if (e.key === "n" || e.key === "g") {
      const target = form.querySelector(e.key === "n" ? "[data-note]" : "[data-category]");
      if (target) {
        e.preventDefault();
        target.focus();
        if (target.setSelectionRange) target.setSelectionRange(target.value.length, target.value.length);  // type after the note
      }
      return;
    }
    const button = Array.from(form.querySelectorAll("button[data-key]")).find((b) => b.dataset.key === e.key);
    if (button) { e.preventDefault(); button.click(); }
  });

  highlight(rows().find((r) => r.dataset.disputed === "true") || rows()[0] || null);
  document.body.dataset.ready = "true";  // the keyboard is live (browser tests wait for it)
})();
