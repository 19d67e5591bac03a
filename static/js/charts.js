// Draws every report chart on the page (and in content htmx swaps in) from its Vega-Lite spec, a
// <script type="application/json" class="vega-spec"> beside a <div class="vega-chart">, with the
// vendored vega-embed. Expressions run through Vega's interpreter, never eval (the site's
// Content-Security-Policy has no 'unsafe-eval'). Each chart offers "Save as SVG / PNG".
// The libraries (about 850 kB) load once the page itself has loaded and only when it has a chart,
// so the tables and figures never wait for them.
(function () {
  "use strict";
  var loading = null;

  function libraries() {
    if (window.vegaEmbed && window.vegaInterpreter) return Promise.resolve();
    if (loading) return loading;
    var tag = document.getElementById("charts-js");
    var urls = tag ? tag.dataset.libraries.split(" ") : [];
    loading = urls.reduce(function (previous, url) {
      return previous.then(function () {
        return new Promise(function (resolve, reject) {
          var script = document.createElement("script");
          script.src = url;
          script.onload = resolve;
          script.onerror = function () { reject(new Error("could not load " + url)); };
          document.head.appendChild(script);
        });
      });
    }, Promise.resolve());
    return loading;
  }
  var OPTIONS = {
    renderer: "svg",
    ast: true,
    actions: { export: true, source: false, compiled: false, editor: false },
    i18n: { SVG_ACTION: "Save as SVG", PNG_ACTION: "Save as PNG" },
  };

  function draw(root) {
    if (!(root || document).querySelector("figure.chart")) return;
    if (!window.vegaEmbed || !window.vegaInterpreter) {
      libraries().then(function () { draw(root); }, function (error) {
        (root || document).querySelectorAll("figure.chart .vega-chart:not([data-drawn])").forEach(function (target) {
          target.dataset.drawn = "failed";
          target.textContent = "The charts could not be drawn (" + error.message + "); the tables hold their figures.";
        });
      });
      return;
    }
    (root || document).querySelectorAll("figure.chart").forEach(function (figure) {
      var target = figure.querySelector(".vega-chart");
      var source = figure.querySelector("script.vega-spec");
      if (!target || !source || target.dataset.drawn) return;
      target.dataset.drawn = "pending";
      var spec = JSON.parse(source.textContent);
      var name = (figure.querySelector("figcaption") || {}).textContent || "chart";
      var options = Object.assign({}, OPTIONS, {
        expr: window.vegaInterpreter,
        downloadFileName: name.slice(0, 60).replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "").toLowerCase() || "chart",
      });
      window.vegaEmbed(target, spec, options).then(function () {
        target.dataset.drawn = "yes";
      }).catch(function (error) {
        target.dataset.drawn = "failed";
        target.textContent = "This chart could not be drawn (" + error.message + "); the table below holds its figures.";
      });
    });
  }

  var loaded = document.readyState === "complete";
  window.addEventListener("load", function () { loaded = true; draw(document); });
  document.addEventListener("htmx:load", function (event) { if (loaded) draw(event.target); });
})();
