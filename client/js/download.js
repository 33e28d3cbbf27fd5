// Figures for slides: every chart gets "Save SVG" and "Save PNG", drawn by Plotly from the chart
// as shown (the current theme, on the page's background) with the widget's title on it.
import { onPage } from "./page.js";

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
  // Plotly draws the SVG; a PNG is that SVG painted on a canvas here, from a data: URL, since
  // the page's content policy refuses the blob: images Plotly's own PNG path would load
  window.Plotly.toImage({ data: chart.data, layout: layout }, { format: "svg", width: w, height: h })
    .then(function (svg) { return format === "png" ? png(svg, w, h) : svg; })
    .then(function (url) {
      var a = document.createElement("a");
      a.href = url;
      a.download = name + "." + format;
      document.body.appendChild(a);
      a.click();
      a.remove();
    });
}

function png(svg, w, h) {
  return new Promise(function (resolve, reject) {
    var img = new Image();
    img.onload = function () {
      var canvas = document.createElement("canvas");
      canvas.width = w * SCALE_PNG;
      canvas.height = h * SCALE_PNG;
      canvas.getContext("2d").drawImage(img, 0, 0, canvas.width, canvas.height);
      resolve(canvas.toDataURL("image/png"));
    };
    img.onerror = function () { reject(new Error("the figure could not be drawn as PNG")); };
    img.src = svg;
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

export const figureTools = { attach: attach };
onPage(attach);
