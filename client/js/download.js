// Figures for slides: every chart gets "Save SVG" and "Save PNG", drawn by Plotly from the chart
// as shown (the current theme, on the page's background) with the widget's title on it.
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});
  var SCALE_PNG = 2;  // a PNG sharp on a projector

  function title(widget, chart) {
    var t = chart.closest("[data-figure]") ? chart.getAttribute("aria-label") : null;
    return widget.getAttribute("aria-label") || t || widget.getAttribute("data-widget");
  }

  function save(widget, chart, format) {
    if (!window.Plotly || !chart.data) return;
    var bg = getComputedStyle(document.body).backgroundColor;
    var layout = Object.assign({}, chart.layout, {
      paper_bgcolor: bg,
      plot_bgcolor: bg,
      title: { text: title(widget, chart), x: 0.02, xanchor: "left" },
      margin: Object.assign({}, chart.layout.margin, { t: Math.max(70, (chart.layout.margin || {}).t || 0) }),
    });
    var w = chart.clientWidth || 800, h = (chart.clientHeight || 450) + 40;
    var name = widget.getAttribute("data-widget") + (chart.getAttribute("data-figure") ? "-" + chart.getAttribute("data-figure") : "");
    window.Plotly.toImage({ data: chart.data, layout: layout }, {
      format: format, width: w, height: h, scale: format === "png" ? SCALE_PNG : 1,
    }).then(function (url) {
      var a = document.createElement("a");
      a.href = url;
      a.download = name + "." + format;
      document.body.appendChild(a);
      a.click();
      a.remove();
    });
  }

  function attach() {
    document.querySelectorAll('[data-widget] [data-role="chart"]').forEach(function (chart) {
      var widget = chart.closest("[data-widget]");
      var bar = document.createElement("div");
      bar.className = "figure-tools";
      [["svg", "Save SVG"], ["png", "Save PNG"]].forEach(function (f) {
        var b = document.createElement("button");
        b.type = "button";
        b.setAttribute("data-action", "download-" + f[0]);
        b.textContent = f[1];
        b.setAttribute("aria-label", f[1] + ": " + title(widget, chart));
        b.addEventListener("click", function () { save(widget, chart, f[0]); });
        bar.appendChild(b);
      });
      chart.insertAdjacentElement("afterend", bar);
    });
  }

  AE.figureTools = { attach: attach };
  attach();
})();
