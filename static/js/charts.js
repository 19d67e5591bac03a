// Draws every report chart on the page (and in content htmx swaps in) from its Vega-Lite spec, a
// <script type="application/json" class="vega-spec"> beside a <div class="vega-chart">, with the
// vendored vega-embed. Expressions run through Vega's interpreter, never eval (the site's
// Content-Security-Policy has no 'unsafe-eval'). Each chart offers "Save as SVG / PNG".
(function () {
  "use strict";
  var OPTIONS = {
    renderer: "svg",
    ast: true,
    actions: { export: true, source: false, compiled: false, editor: false },
    i18n: { SVG_ACTION: "Save as SVG", PNG_ACTION: "Save as PNG" },
  };

  function draw(root) {
    if (!window.vegaEmbed || !window.vegaInterpreter) return;
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

  document.addEventListener("DOMContentLoaded", function () { draw(document); });
  document.addEventListener("htmx:load", function (event) { draw(event.target); });
})();
