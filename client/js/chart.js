// The chart view: draws the figure Python built (plain Plotly JSON), in the page's theme.
import { meta } from "./page.js";
import { leverOff } from "./probe.js";

// The theme's colours as the chart element resolves them (its color and border-color), read
// once per theme: reading them after the page's text has changed makes the browser compute
// its style there and then, inside every redraw (the bench lever "layout-once").
var colours = new WeakMap();  // chart element -> {theme, fg, grid, family}
function coloursOf(chart) {
  // the theme as theme.js sets it (data-theme), else the system's
  var theme = document.documentElement.getAttribute("data-theme") ||
    (window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  var c = colours.get(chart);
  if (!c || c.theme !== theme || leverOff("layout-once")) {
    var css = getComputedStyle(chart);
    c = { theme: theme, fg: css.color, grid: css.borderTopColor, family: css.fontFamily };
    colours.set(chart, c);
  }
  return c;
}
function themed(layout, chart) {
  var c = coloursOf(chart);
  var out = JSON.parse(JSON.stringify(layout));
  out.paper_bgcolor = "rgba(0,0,0,0)";
  out.plot_bgcolor = "rgba(0,0,0,0)";
  out.font = Object.assign({ family: c.family, color: c.fg }, out.font || {});
  // ticklabeloverflow "allow": Python's figures leave the tick labels room (a right margin for
  // the last x label, even rotated on a phone), and Plotly would otherwise measure every label
  // on every redraw to hide those that overflow: a third of a redraw's time
  ["xaxis", "yaxis"].forEach(function (a) {
    out[a] = Object.assign({ gridcolor: c.grid, linecolor: c.grid, zerolinecolor: c.grid,
      ticklabeloverflow: "allow" }, out[a] || {});
  });
  out.autosize = true;
  return out;
}

// A chart widget's state holds one figure ("figure", "summary", "table") or several under
// "figures": {name: {figure, summary, table}}, drawn into [data-role=chart][data-figure=name].
// A widget with no chart at all (kind "panel") only has readouts, which widget.js fills.
// A long table shows its first FOLD rows (views.FOLD, tests/site/test_tables.py) and a "show
// all" button: a screenful to read. A table Python sent whole folds here; one it sent folded
// (`total`: views.table, hundreds of rows such as Llama 3 405B's 884 buckets, not formatted
// on every change) asks it for the rest, through the widget's `rows` parameter.
var FOLD = 20;
function table(t, widget) {
  var tb = document.createElement("table");
  tb.className = "buffers";
  var hr = document.createElement("tr");
  t.columns.forEach(function (c) {
    var th = document.createElement("th"); th.scope = "col"; th.textContent = c; hr.appendChild(th);
  });
  var head = document.createElement("thead"); head.appendChild(hr); tb.appendChild(head);
  var body = document.createElement("tbody");
  function rows(from, to) {
    t.rows.slice(from, to).forEach(function (r) {
      var tr = document.createElement("tr");
      r.forEach(function (x) { var td = document.createElement("td"); td.textContent = x; tr.appendChild(td); });
      body.appendChild(tr);
    });
  }
  var total = t.total || t.rows.length, fold = t.fold || FOLD;
  var open = t.total ? t.rows.length >= t.total : false;
  rows(0, t.total ? t.rows.length : fold);
  tb.appendChild(body);
  var out = document.createDocumentFragment();
  out.appendChild(tb);
  if (total <= fold) return out;
  // a toggle, so that the focus stays on it: show all, then the first rows again
  var more = document.createElement("button");
  more.type = "button";
  more.className = "show-all";
  more.setAttribute("data-action", "show-all");
  function label() {
    more.setAttribute("aria-expanded", String(open));
    more.textContent = open ? "Show the first " + fold + " rows only"
      : "Show all " + total.toLocaleString("en") + " rows";
  }
  label();
  more.addEventListener("click", function () {
    if (t.total) return widget.update({ rows: open ? "first" : "all" });
    if (open) while (body.rows.length > fold) body.deleteRow(-1);
    else rows(fold, total);
    open = !open;
    label();
  });
  out.appendChild(more);
  return out;
}

// A part with no figure (your cluster's log panel before a log) shows nothing, neither the
// chart nor its summary and table: no empty axes.
function show(els, shown) {
  els.forEach(function (el) { if (el && el.hidden === shown) el.hidden = !shown; });
}

// Plotly, loaded once a chart needs it: a megabyte of script that would otherwise run before
// the page's own scripts and keep every control and stepper dead until it had.
var loading = null;
function plotly() {
  if (!loading) {
    loading = new Promise(function (resolve) {
      var s = document.createElement("script");
      s.src = meta("ae-plotly");
      s.onload = resolve;
      s.onerror = function () { loading = null; };  // the tables below the charts still say it all
      document.head.appendChild(s);
    });
  }
  return loading;
}

var queue = [];  // drawings, one per task
function soon(fn) {
  queue.push(fn);
  if (queue.length === 1) setTimeout(drain, 0);
}
function drain() {
  queue.shift()();
  if (queue.length) setTimeout(drain, 0);
}

export function chart(root, widget) {
  var state = null;
  var drawn = new WeakMap();  // chart element -> the JSON of what it shows
  var waiting = new WeakSet();  // charts whose first drawing is on its way
  var tables = new WeakMap();  // table box -> the JSON of the table it shows

  function parts(name) {
    if (!name) return state;
    return (state.figures || {})[name] || null;
  }
  function find(role, name) {
    var sel = '[data-role="' + role + '"]' + (name ? '[data-figure="' + name + '"]' : ":not([data-figure])");
    return root.querySelector(sel);
  }
  // A chart whose figure, summary and table Python sent unchanged (your cluster's chart with no log
  // pasted) is left alone: redrawing it, or even rewriting its text, makes the browser lay out
  // and paint again. A new theme redraws every figure.
  function plot(chart, p, json) {
    Plotly.react(chart, p.figure.data, themed(p.figure.layout, chart),
      { displayModeBar: false, responsive: true });
    drawn.set(chart, json);
  }
  // A chart's first drawing waits for Plotly and then for its own task, one chart at a time:
  // the page's text, steppers and controls are live meanwhile.
  function first(chart) {
    if (waiting.has(chart)) return;
    waiting.add(chart);
    plotly().then(function () {
      soon(function () {
        waiting.delete(chart);
        var p = parts(chart.getAttribute("data-figure"));
        if (chart.isConnected && p && p.figure) plot(chart, p, JSON.stringify(p));
      });
    });
  }
  // Every chart is redrawn before any text or table is written: Plotly measures the page as it
  // draws, and text written before it would be laid out there and then, once per chart (the
  // bench lever "layout-once"). A summary or table that did not change is not written again.
  function draw(retheme) {
    var writes = [];
    root.querySelectorAll('[data-role="chart"]').forEach(function (chart) {
      var name = chart.getAttribute("data-figure");
      var p = parts(name);
      if (!p) return;
      var summary = find("chart-summary", name), box = find("chart-table", name);
      show([chart, summary, box && box.closest("details")], !!p.figure);
      if (!p.figure) return drawn.delete(chart);
      var json = JSON.stringify(p);
      if (!retheme && drawn.get(chart) === json) return;
      if (drawn.has(chart)) plot(chart, p, json);
      else first(chart);
      var write = function () { texts(chart, name, p); };
      if (leverOff("layout-once")) write();
      else writes.push(write);
    });
    writes.forEach(function (write) { write(); });
  }
  function texts(chart, name, p) {
    if (chart.getAttribute("aria-label") !== p.summary) chart.setAttribute("aria-label", p.summary);
    var summary = find("chart-summary", name), box = find("chart-table", name);
    if (summary && summary.textContent !== p.summary) summary.textContent = p.summary;
    if (!box || !p.table) return;
    var rows = JSON.stringify(p.table);
    if (tables.get(box) === rows && !leverOff("layout-once")) return;
    // the toggle asked Python for the other rows: the focus stays on the new one
    var focused = box.contains(document.activeElement) &&
      document.activeElement.getAttribute("data-action") === "show-all";
    box.replaceChildren(table(p.table, widget));
    tables.set(box, rows);
    if (focused) box.querySelector('[data-action="show-all"]').focus();
  }
  function onTheme() {
    if (!root.isConnected) return document.removeEventListener("ae:theme", onTheme);  // page left
    if (state) draw(true);
  }
  document.addEventListener("ae:theme", onTheme);
  return { render: function (s) { state = s; draw(false); } };
};
export const panel = chart;
