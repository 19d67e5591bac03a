// Tabs of a page split into parts (the project page): one part shows at a time, the URL's hash
// names it (#tab-data, or the id of anything inside a part) so a reload or a shared link opens the
// same part; arrow keys move between tabs. Without this script every part shows, one below the other.
(function () {
  "use strict";

  function setUp(root) {
    const tabs = Array.from(root.querySelectorAll("[role=tab]"));
    const panels = tabs.map((tab) => document.getElementById(tab.getAttribute("aria-controls")));
    if (!tabs.length || panels.some((panel) => !panel)) return;

    function show(name) {
      tabs.forEach((tab, i) => {
        const on = tab.dataset.tab === name;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.tabIndex = on ? 0 : -1;
        panels[i].hidden = !on;
      });
    }

    function named() {
      const id = decodeURIComponent(window.location.hash.slice(1));
      const target = id && document.getElementById(id);
      const panel = target && target.closest("[role=tabpanel]");
      return panel && panels.includes(panel) ? panel.dataset.tab : null;
    }

    tabs.forEach((tab, i) => {
      tab.addEventListener("click", () => {
        show(tab.dataset.tab);
        window.history.replaceState(null, "", "#" + panels[i].id);
      });
      tab.addEventListener("keydown", (event) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
        if (!step) return;
        const next = tabs[(i + step + tabs.length) % tabs.length];
        next.focus();
        next.click();
        event.preventDefault();
      });
    });
    window.addEventListener("hashchange", () => {
      const name = named();
      if (name) show(name);
    });
    const start = named() || tabs[0].dataset.tab;
    show(start);
    root.classList.add("tabs-ready");
    const target = window.location.hash && document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    if (target && !target.matches("[role=tabpanel]")) target.scrollIntoView();
  }

  document.querySelectorAll("[data-tabs]").forEach(setUp);
})();
