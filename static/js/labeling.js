/* evalsite labeling page.
 *
 * Every click is saved at once through htmx (htmx.ajax posting the criterion row's form; the
 * server-rendered row partial that answers is merged into the row, see below); clicks that pile
 * up go as one batch request. Saves go through one page-wide queue, so they reach the server in
 * click order, one at a time (never two saves of one criterion in flight), each with the
 * revision the previous one returned; a save that fails (network error, timeout, 5xx, expired
 * session) stays first in the queue, is shown on its row and is retried with backoff until the
 * server has it: nothing is dropped silently.
 * An answer never replaces what is being typed: it updates the row's status, revision, buttons
 * and quotes in place (``mergeRow``) and leaves the rationale box alone while it has focus or
 * holds text typed since the save was sent; that text goes in a later save of the same row, which
 * the queue sends only after the earlier one has answered, with the revision it returned.
 * Also here: the keyboard (j/k, arrows, 1/2/3, y/n/c, e, q, g, i, s, [ ] { }, Enter, ?; decision keys
 * never act on a criterion the annotator has not chosen or seen, see ``armed``), evidence quotes
 * taken from the selected response text or from the sentence bank by keyboard, and active-time
 * reporting (time with the tab visible and in
 * use, not wall time).
 */
(function () {
  "use strict";
  const page = document.getElementById("label-page");
  if (!page || typeof htmx === "undefined") return;
  const readOnly = page.dataset.readOnly === "true";
  const responseBody = document.getElementById("response-body");
  const queue = [];  // one page-wide queue: saves reach the server in click order, one at a time
  let running = false;
  let retryNow = null;
  const failed = new WeakMap();  // row form -> why its last request failed
  const answers = new WeakMap();  // row form -> the HTML its last save was answered with
  const debounce = new Map();
  let focusedId = null;
  let quote = "";

  htmx.config.timeout = 15000;
  document.body.addEventListener("htmx:responseError", (e) => {
    const status = e.detail.xhr.status;
    failed.set(e.detail.elt, status === 403 ? "not allowed — are you still logged in?" : "server error " + status);
  });
  // An expired session answers with a redirect to the login page: never swap that into a row.
  // A row's own answer is not swapped by htmx (``swap: "none"``; the progress bar still comes out
  // of band): ``send`` merges it into the row, see ``mergeRow``.
  document.body.addEventListener("htmx:beforeSwap", (e) => {
    if ((e.detail.xhr.responseURL || "").indexOf("/accounts/login/") >= 0) {
      e.detail.shouldSwap = false;
      failed.set(e.detail.elt, "logged out — log in again (another tab is fine) and it is sent again");
    } else if (e.detail.shouldSwap && e.detail.elt && e.detail.elt.matches && e.detail.elt.matches("form.crit")) {
      answers.set(e.detail.elt, e.detail.serverResponse);
    }
  });
  // The CSRF cookie changes when the user logs in again: always send the current one.
  // (Django reads a form's csrfmiddlewaretoken before the header, so drop the rendered one.)
  document.body.addEventListener("htmx:configRequest", (e) => {
    const token = cookie("csrftoken");
    if (!token) return;
    e.detail.headers["X-CSRFToken"] = token;
    delete e.detail.parameters.csrfmiddlewaretoken;
  });

  /* A criterion's guidance stays open across the saves that answer its row (rows are merged in
   * place, so only a re-rendered one would close it). */
  // Row id -> the guidance element that was open. Only a re-rendered row (a new element) has its
  // guidance opened again: a row merged in place keeps whatever the annotator last did with it,
  // even when the toggle event of that last click or key has not arrived yet.
  const openGuidance = new Map();
  function guidanceState(row, guide) {
    if (guide.open) openGuidance.set(row.id, guide);
    else openGuidance.delete(row.id);
  }
  document.addEventListener("toggle", (e) => {
    if (!e.target.matches || !e.target.matches("details[data-guidance]")) return;
    const row = e.target.closest("form.crit");
    if (row) guidanceState(row, e.target);
  }, true);
  function reopenGuidance() {
    openGuidance.forEach((element, id) => {
      const guide = document.querySelector("#" + id + " details[data-guidance]");
      if (guide && guide !== element && !guide.open) {
        guide.open = true;
        openGuidance.set(id, guide);
      }
    });
  }

  const rows = () => Array.from(document.querySelectorAll("#rubric form.crit"));
  function cookie(name) {
    const found = document.cookie.split("; ").find((part) => part.startsWith(name + "="));
    return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
  }
  const csrf = () => cookie("csrftoken") || JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";

  function pendingCount() {
    return debounce.size + queue.length;
  }

  function updatePending() {
    const el = document.getElementById("pending-saves");
    const n = pendingCount();
    if (el) el.textContent = n ? "Saving " + n + "…" : "";
    page.dataset.pending = String(n);
  }

  function setState(form, kind, text) {
    const state = form && form.querySelector(".crit-state");
    if (!state) return;
    const revision = state.querySelector("input[name=revision]");
    state.replaceChildren(revision);
    const span = document.createElement("span");
    span.className = kind;
    span.textContent = text;
    state.append(span);
    if (kind === "failed") {
      const again = document.createElement("button");
      again.type = "button";
      again.className = "link";
      again.dataset.retry = form.id;
      again.textContent = "Retry now";
      state.append(" ", again);
    }
    form.classList.toggle("saving", kind === "saving");
    form.classList.toggle("failed", kind === "failed");
  }

  /* The answer to a save, merged into its row in place: the state (status and revision), the
   * row's classes, the decision buttons, the quotes and the attach button take the server's
   * version; the rationale box keeps what the annotator has there when it has focus or changed
   * since the save was sent (``sentText``), and takes the server's text (a conflict shows the
   * latest) only when neither is true. Nothing the annotator is typing in is replaced. */
  function mergeRow(old, fresh, sentText) {
    if (fresh.matches("form.crit")) {
      const focused = old.classList.contains("focused");
      old.className = fresh.className;  // answered: no longer "saving" or "failed"
      old.classList.toggle("focused", focused);
      syncChoices(old.querySelector(".choices"), fresh.querySelector(".choices"));
      replaceIfChanged(old.querySelector(".evidence"), fresh.querySelector(".evidence"));
      const attachOld = old.querySelector("[data-attach]");
      const attachNew = fresh.querySelector("[data-attach]");
      if (attachOld && attachNew) attachOld.disabled = attachNew.disabled;
      syncRationale(old.querySelector("textarea[data-rationale]"), fresh.querySelector("textarea[data-rationale]"), sentText);
    }
    const state = fresh.matches(".crit-state") ? fresh : fresh.querySelector(".crit-state");
    const oldState = old.querySelector(".crit-state");
    if (state && oldState) oldState.replaceWith(state);
  }
  function syncChoices(old, fresh) {
    if (!old || !fresh) return;
    const before = old.querySelectorAll("button");
    const after = fresh.querySelectorAll("button");
    const same = before.length === after.length
      && Array.from(before).every((b, i) => b.name === after[i].name && b.value === after[i].value);
    if (!same) { old.replaceWith(fresh); return; }
    before.forEach((b, i) => {  // in place, so a button that has focus keeps it
      b.setAttribute("aria-pressed", after[i].getAttribute("aria-pressed"));
      b.disabled = after[i].disabled;
    });
  }
  function replaceIfChanged(old, fresh) {
    if (old && fresh && old.innerHTML !== fresh.innerHTML) old.replaceWith(fresh);
  }
  function syncRationale(area, fresh, sentText) {
    if (!area || !fresh) return;
    const typing = area === document.activeElement || area.value !== sentText || debounce.has(area.closest("form.crit").id);
    area.placeholder = fresh.placeholder;
    if (typing) {
      area.disabled = false;
      return;
    }
    area.disabled = fresh.disabled;
    if (area.value !== fresh.value) area.value = fresh.value;
  }
  function mergeAnswer(html, sentTexts, swapOob) {
    const holder = document.createElement("template");
    holder.innerHTML = html;
    Array.from(holder.content.children).forEach((fresh) => {
      const row = fresh.matches("form.crit") ? document.getElementById(fresh.id) : null;
      if (row) { mergeRow(row, fresh, sentTexts[fresh.id]); return; }
      if (fresh.matches(".crit-state")) {
        const old = document.getElementById(fresh.id);
        const form = old && old.closest("form.crit");
        if (form) mergeRow(form, fresh, sentTexts[form.id]);
        return;
      }
      if (!swapOob || !fresh.hasAttribute("hx-swap-oob") || !fresh.id) return;  // (htmx swaps them on single saves)
      fresh.removeAttribute("hx-swap-oob");
      const old = document.getElementById(fresh.id);
      if (old) { old.replaceWith(fresh); htmx.process(fresh); }
    });
    afterAnswer();
  }
  function rationaleOf(form) {
    const area = form.querySelector("textarea[data-rationale]");
    return area ? area.value : null;
  }

  function send(form, item) {
    const values = Object.assign({}, item.values);
    if (item.part) values.part = item.part;
    failed.delete(form);
    answers.delete(form);
    const sentText = rationaleOf(form);  // htmx reads the form's fields now, in this call
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("no answer")), 20000); });
    const request = htmx.ajax("POST", form.getAttribute("action"), { source: form, target: form, swap: "none", values: values })
      .then(() => {
        if (failed.has(form)) {
          const why = failed.get(form);
          failed.delete(form);
          throw new Error(why);
        }
        const html = answers.get(form);
        answers.delete(form);
        if (html === undefined) throw new Error("no answer");
        mergeAnswer(html, { [form.id]: sentText }, false);
      });
    return Promise.race([request, timeout]).finally(() => clearTimeout(timer));
  }

  function pause(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { retryNow = null; resolve(); }, ms);
      retryNow = () => { clearTimeout(timer); retryNow = null; resolve(); };
    });
  }

  /* Clicks that piled up (a slow link, a fast annotator) go as one request: the leading run of
   * queued decisions and quotes on different rows (a rationale save or a second click on the same
   * row ends the run). The server applies them all or none; if it refuses or cannot be reached,
   * nothing was saved and the clicks go one by one as usual, each told on its own row. */
  function leadingBatch() {
    const batch = [];
    const rowsSeen = new Set();
    for (const item of queue) {
      if (item.part || rowsSeen.has(item.rowId)) break;
      const form = document.getElementById(item.rowId);
      if (!form) break;
      rowsSeen.add(item.rowId);
      batch.push(item);
    }
    return batch;
  }

  async function sendBatch(batch) {
    const sentTexts = {};
    const saves = batch.map((item) => {
      const form = document.getElementById(item.rowId);
      const save = Object.assign({ criterion: Number(item.rowId.replace("crit-", "")) }, item.values);
      const revision = form.querySelector("input[name=revision]");
      if (revision) save.revision = revision.value;
      const area = form.querySelector("textarea[data-rationale]");
      if (area && !area.disabled) save.rationale = area.value;
      sentTexts[item.rowId] = rationaleOf(form);
      return save;
    });
    batch.forEach((item) => setState(document.getElementById(item.rowId), "saving", "Saving…"));
    const body = new URLSearchParams({ batch: JSON.stringify(saves) });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 20000);
    try {
      const answer = await fetch(page.dataset.batchUrl, {
        method: "POST", body: body, credentials: "same-origin", signal: controller.signal,
        headers: { "X-CSRFToken": csrf(), "HX-Request": "true" },
      });
      if (!answer.ok || answer.redirected) throw new Error("batch refused (" + answer.status + ")");
      mergeAnswer(await answer.text(), sentTexts, true);
    } finally {
      clearTimeout(timer);
    }
  }

  async function pump() {
    if (running || !queue.length) return;
    running = true;
    while (queue.length) {
      const batch = leadingBatch();
      if (batch.length > 1) {
        try {
          await sendBatch(batch);
          queue.splice(0, batch.length);
          markFocused();
          updatePending();
          continue;
        } catch (err) {
          batch.forEach((item) => setState(document.getElementById(item.rowId), "saving", "Saving…"));
        }
      }
      const item = queue[0];
      for (let attempt = 1; ; attempt++) {
        const form = document.getElementById(item.rowId);
        setState(form, "saving", attempt > 1 ? "Saving again…" : "Saving…");
        try {
          await send(form, item);
          break;
        } catch (err) {
          const wait = Math.min(15000, 500 * 2 ** Math.min(attempt, 5));
          setState(document.getElementById(item.rowId), "failed",
            "Not saved (" + err.message + ") — retrying in " + Math.ceil(wait / 1000) + " s, attempt " + attempt);
          await pause(wait);
        }
      }
      queue.shift();
      const saved = document.getElementById(item.rowId);
      if (saved) saved.classList.remove("saving", "failed");
      markFocused();
      updatePending();
    }
    running = false;
  }

  function enqueue(rowId, values, part) {
    if (readOnly || !rowId) return;
    queue.push({ rowId: rowId, values: values, part: part });
    updatePending();
    pump();
  }

  /* A decision makes the row's rationale writable at once, not when its save answers: an "e"
   * pressed right after the decision opens it, and what is typed next lands in it. */
  function choose(form, button) {
    if (readOnly) return;
    form.querySelectorAll(".choices button").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
    const area = form.querySelector("textarea[data-rationale]");
    if (area && area.disabled) {
      area.disabled = false;
      area.placeholder = area.dataset.decidedPlaceholder || "";
    }
    enqueue(form.id, { [button.name]: button.value });
  }

  /* --- focus and keyboard ------------------------------------------------------------ */
  function markFocused() {
    rows().forEach((r) => r.classList.toggle("focused", r.id === focusedId));
    const target = document.getElementById("selection-target");
    const row = focusedId && document.getElementById(focusedId);
    if (target) target.textContent = row ? row.querySelector(".crit-num").textContent : "(click a criterion)";
  }

  function focusRow(id, scroll) {
    focusedId = id;
    armed = true;
    hint("");
    markFocused();
    const row = document.getElementById(id);
    if (row && scroll) row.scrollIntoView({ block: "nearest" });
  }

  function move(delta) {
    const all = rows();
    if (!all.length) return;
    const index = all.findIndex((r) => r.id === focusedId);
    const next = index < 0 ? 0 : Math.max(0, Math.min(all.length - 1, index + delta));
    focusRow(all[next].id, true);
  }

  const BINARY_KEYS = { "1": "met", y: "met", "2": "not_met", n: "not_met", "3": "cannot_assess", c: "cannot_assess" };

  /* Decision keys act on the selected criterion only while "armed": after a decision made by
   * key, or after a key that is no shortcut (the annotator is typing), they do nothing until the
   * annotator selects a criterion explicitly (j/k, arrows, a click). So a sentence typed after a
   * key decision changes no decision; its "e" opens the rationale of the criterion just decided. */
  let armed = true;
  function disarm(why) {
    armed = false;
    hint(why);
  }
  function hint(text) {
    const el = document.getElementById("key-hint");
    if (el) el.textContent = text || "";
  }

  function chooseByKey(key) {
    if (!focusedId) { move(0); return true; }  // nothing selected: select (and show) first, decide nothing
    const form = document.getElementById(focusedId);
    if (!form) return false;
    if (!armed) {
      hint("Decision keys are paused — press j / k or click a criterion to choose it, e to write a rationale.");
      return true;
    }
    let button = null;
    if (form.dataset.kind === "binary") {
      if (BINARY_KEYS[key]) button = form.querySelector('.choices button[value="' + BINARY_KEYS[key] + '"]');
    } else if (key === "c") {
      button = form.querySelector('.choices button[value="cannot_assess"]');
    } else {
      button = Array.from(form.querySelectorAll(".choices button")).find((b) => b.dataset.key === key) || null;
    }
    if (!button || button.disabled) return false;
    choose(form, button);
    disarm("Criterion " + form.querySelector(".crit-num").textContent + " decided — j: next criterion, e: rationale, q: attach the selection.");
    return true;
  }

  const SHORTCUT_KEYS = new Set(["j", "k", "e", "q", "g", "i", "s", "[", "]", "{", "}", "?", "Enter", "Escape", "ArrowDown", "ArrowUp"]);
  function isTyping(key) {  // a printable key that is no shortcut of this row: the annotator is writing text
    if (key.length !== 1 || SHORTCUT_KEYS.has(key) || key === " ") return false;
    const form = focusedId && document.getElementById(focusedId);
    if (!form) return true;
    if (form.dataset.kind === "binary") return !BINARY_KEYS[key];
    return key !== "c" && !form.querySelector('.choices button[data-key="' + CSS.escape(key) + '"]');
  }

  function toggleHelp(show) {
    const help = document.getElementById("help");
    help.hidden = show === undefined ? !help.hidden : !show;
  }

  function trySubmit() {
    const button = document.getElementById("submit-btn");
    if (!button) return;
    if (refuseMissingEvidence()) return;  // Submit is disabled then: Enter says why and leads to the first one
    if (button.disabled) return;
    document.getElementById("submit-form").requestSubmit(button);
  }

  /* Quotes a criterion marked met still needs (the server's list, refreshed with every save):
   * while there are any, submitting is refused and the list, each entry a link, is shown. */
  let refused = false;  // once refused, the list stays marked through the saves that re-render it
  function afterAnswer() {
    const box = document.getElementById("evidence-missing");
    if (refused && box) box.classList.add("refused");
    reopenGuidance();
  }
  document.body.addEventListener("htmx:afterSettle", afterAnswer);
  function refuseMissingEvidence() {
    const box = document.getElementById("evidence-missing");
    if (!box || !box.querySelector("li")) return false;
    refused = true;
    box.classList.add("refused");
    box.hidden = false;
    const first = box.querySelector("a");
    if (first) first.focus();
    return true;
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if ((t.matches && t.matches("textarea, input, select")) || t.isContentEditable) {
      if (e.key === "Escape") { t.blur(); e.preventDefault(); }
      return;
    }
    if ((e.key === "Enter" || e.key === " ") && t.matches && t.matches("button, a, summary")) return;
    const help = document.getElementById("help");
    if (e.key === "?") { toggleHelp(); e.preventDefault(); return; }
    if (e.key === "Escape") { toggleHelp(false); return; }
    if (!help.hidden) return;
    switch (e.key) {
      case "j": case "ArrowDown": move(1); break;
      case "k": case "ArrowUp": move(-1); break;
      case "e": {
        if (!focusedId) move(0);
        const area = document.querySelector("#" + focusedId + " textarea[data-rationale]");
        if (!area || area.disabled) return;
        area.focus();
        break;
      }
      case "q":
        if (bank && bank.open && cursor) attachSentences(focusedId);
        else attach(focusedId);
        break;
      case "s": toggleBank(); break;
      case "i": {
        if (!focusedId) move(0);
        const row = document.getElementById(focusedId);
        const guide = row && row.querySelector("details[data-guidance]");
        if (!guide) { hint("Criterion " + (row ? row.querySelector(".crit-num").textContent : "") + " has no guidance."); break; }
        guide.open = !guide.open;
        guidanceState(row, guide);  // now, not when the toggle event arrives
        if (guide.open) guide.scrollIntoView({ block: "nearest" });
        break;
      }
      case "]": moveSentence(1, false); break;
      case "[": moveSentence(-1, false); break;
      case "}": moveSentence(1, true); break;
      case "{": moveSentence(-1, true); break;
      case "g": {
        const guide = document.getElementById("guidelines");
        if (!guide) return;
        guide.open = !guide.open;
        if (guide.open) guide.scrollIntoView({ block: "nearest" });
        break;
      }
      case "Enter": trySubmit(); break;
      default:
        if (readOnly) return;
        if (isTyping(e.key)) { disarm("Typing? Press e to write the rationale of the selected criterion; j / k to choose one."); return; }
        if (!chooseByKey(e.key)) return;
    }
    e.preventDefault();
  });

  document.addEventListener("click", (e) => {
    const toggle = e.target.closest("[data-help-toggle]");
    if (toggle) { toggleHelp(); return; }
    const retry = e.target.closest("[data-retry]");
    if (retry && retryNow) { retryNow(); return; }
    const attachButton = e.target.closest("[data-attach]");
    if (attachButton) { attach(attachButton.closest("form.crit").id); return; }
    if (e.target.closest("[data-attach-focused]")) { attach(focusedId); return; }
    const goto = e.target.closest("[data-goto]");
    if (goto) { focusRow(goto.dataset.goto, true); }
  });

  document.addEventListener("mousedown", (e) => {
    const row = e.target.closest && e.target.closest("#rubric form.crit");
    if (row) focusRow(row.id, false);
  });

  document.addEventListener("submit", (e) => {
    const form = e.target;
    if (form.id === "submit-form") {
      if (pendingCount()) { e.preventDefault(); updatePending(); return; }
      if (refuseMissingEvidence()) { e.preventDefault(); return; }
      form.querySelector("input[name=seconds]").value = takeActiveSeconds().toFixed(1);
      if (cookie("csrftoken")) form.querySelector("input[name=csrfmiddlewaretoken]").value = cookie("csrftoken");
      window.removeEventListener("beforeunload", warnUnsaved);
      return;
    }
    if (!form.matches("#rubric form.crit")) return;
    e.preventDefault();
    const button = e.submitter;
    if (!button || !button.name) return;
    focusRow(form.id, false);
    if (button.name === "evidence_remove") enqueue(form.id, { evidence_remove: button.value });
    else choose(form, button);
  });

  /* rationale: saved a moment after typing stops, and when the field is left */
  function saveRationale(area) {
    const form = area.closest("form.crit");
    clearTimeout(debounce.get(form.id));
    debounce.delete(form.id);
    enqueue(form.id, {}, "state");
  }
  document.addEventListener("input", (e) => {
    if (!e.target.matches("textarea[data-rationale]")) return;
    const form = e.target.closest("form.crit");
    clearTimeout(debounce.get(form.id));
    debounce.set(form.id, setTimeout(() => saveRationale(e.target), 800));
    updatePending();
  });
  document.addEventListener("focusout", (e) => {
    if (!e.target.matches || !e.target.matches("textarea[data-rationale]")) return;
    const form = e.target.closest("form.crit");
    if (debounce.has(form.id)) saveRationale(e.target);
  });

  /* evidence: the last text selected inside the response */
  document.addEventListener("selectionchange", () => {
    const selection = document.getSelection();
    if (!selection || selection.isCollapsed || !responseBody) return;
    if (!responseBody.contains(selection.anchorNode) || !responseBody.contains(selection.focusNode)) return;
    const text = selection.toString().replace(/\s+/g, " ").trim();
    if (!text) return;
    quote = text;
    document.getElementById("selection-text").textContent = text;
    document.getElementById("selection-bar").hidden = readOnly;
    markFocused();
  });

  function attach(rowId) {
    const form = rowId && document.getElementById(rowId);
    if (!form) return;
    if (!quote) { setState(form, "error", "Select text in the response first, then attach it."); return; }
    enqueue(rowId, { evidence_add: quote });
    quote = "";
    document.getElementById("selection-bar").hidden = true;
  }

  /* evidence by keyboard: the sentence bank (numbered sentences of the response, from the
   * server's ``sentence_bank``). A cursor (anchor and head sentence ids) moves with ] and [, widens
   * with } and {; q quotes the raw response text from the first sentence of the range to the end
   * of the last, which the server verifies like any other quote. */
  const bank = document.getElementById("sentence-bank");
  let cursor = null;
  let rawChars = null;
  const sentenceItems = () => Array.from(document.querySelectorAll("#sentences li"));
  function sentenceRange() {
    return cursor ? [Math.min(cursor.anchor, cursor.head), Math.max(cursor.anchor, cursor.head)] : [0, -1];
  }
  function showCursor() {
    const [lo, hi] = sentenceRange();
    sentenceItems().forEach((li) => {
      const id = Number(li.dataset.sid);
      li.classList.toggle("in-range", id >= lo && id <= hi);
      li.classList.toggle("cursor", !!cursor && id === cursor.head);
      if (cursor && id === cursor.head) li.setAttribute("aria-current", "true");
      else li.removeAttribute("aria-current");
    });
    if (!cursor) return;
    const head = document.getElementById("sent-" + cursor.head);
    if (head) head.scrollIntoView({ block: "nearest" });
    const row = focusedId && document.getElementById(focusedId);
    const where = lo === hi ? "Sentence " + lo : "Sentences " + lo + "–" + hi;
    hint(where + " of " + sentenceItems().length + (readOnly ? "." : " — q quotes " + (lo === hi ? "it" : "them") + " into criterion "
      + (row ? row.querySelector(".crit-num").textContent : "(choose one with j / k)") + "."));
  }
  function moveSentence(delta, widen) {
    const n = sentenceItems().length;
    if (!bank || !n) return;
    bank.open = true;
    if (!cursor) {
      const first = delta < 0 ? n : 1;
      cursor = { anchor: first, head: first };
    } else {
      const head = Math.max(1, Math.min(n, cursor.head + delta));
      cursor = { anchor: widen ? cursor.anchor : head, head: head };
    }
    showCursor();
  }
  function toggleBank() {
    if (!bank) return;
    bank.open = !bank.open;
    if (bank.open && !cursor) moveSentence(0, false);
    else if (bank.open) showCursor();
    else hint("");
  }
  function sentencesQuote() {
    const [lo, hi] = sentenceRange();
    const first = document.getElementById("sent-" + lo);
    const last = document.getElementById("sent-" + hi);
    if (!first || !last) return "";
    if (!rawChars) rawChars = Array.from(JSON.parse(document.getElementById("response-raw").textContent));
    return rawChars.slice(Number(first.dataset.from), Number(last.dataset.to)).join("").replace(/\s+/g, " ").trim();
  }
  function attachSentences(rowId) {
    const form = rowId && document.getElementById(rowId);
    const text = sentencesQuote();
    if (!form || !text || readOnly) return;
    enqueue(rowId, { evidence_add: text });
    const [lo, hi] = sentenceRange();
    hint((lo === hi ? "Sentence " + lo : "Sentences " + lo + "–" + hi) + " quoted into criterion "
      + form.querySelector(".crit-num").textContent + ".");
  }
  if (bank) {
    bank.addEventListener("click", (e) => {
      const li = e.target.closest("#sentences li");
      const selection = document.getSelection();
      if (!li || (selection && !selection.isCollapsed)) return;
      const id = Number(li.dataset.sid);
      cursor = e.shiftKey && cursor ? { anchor: cursor.anchor, head: id } : { anchor: id, head: id };
      showCursor();
    });
    bank.addEventListener("toggle", () => { if (bank.open && !cursor) moveSentence(0, false); });
  }

  /* active time: visible, focused and touched within the last minute */
  let activeMs = 0;
  let lastTick = Date.now();
  let lastInput = Date.now();
  ["keydown", "mousedown", "mousemove", "wheel", "touchstart", "scroll"].forEach((name) =>
    document.addEventListener(name, () => { lastInput = Date.now(); }, { passive: true }));
  setInterval(() => {
    const now = Date.now();
    if (document.visibilityState === "visible" && document.hasFocus() && now - lastInput < 60000) {
      activeMs += Math.min(now - lastTick, 2000);
    }
    lastTick = now;
  }, 1000);
  function takeActiveSeconds() {
    const seconds = activeMs / 1000;
    activeMs = 0;
    return seconds;
  }
  function reportTime() {
    if (readOnly || activeMs < 1000) return;
    const body = new FormData();
    body.append("csrfmiddlewaretoken", csrf());
    body.append("seconds", takeActiveSeconds().toFixed(1));
    navigator.sendBeacon(page.dataset.timeUrl, body);
  }
  setInterval(reportTime, 30000);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") reportTime(); });
  window.addEventListener("pagehide", reportTime);

  function warnUnsaved(e) {
    if (pendingCount()) { e.preventDefault(); e.returnValue = ""; }
  }
  window.addEventListener("beforeunload", warnUnsaved);

  const firstOpen = rows().find((r) => !r.classList.contains("decided")) || rows()[0];
  if (firstOpen) focusRow(firstOpen.id, false);
  updatePending();
  document.body.dataset.ready = "true";  // the keyboard is live (browser tests wait for it)
})();
