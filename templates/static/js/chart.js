// The chart view: draws the figure Python built (plain Plotly JSON), in the page's theme.
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});
  AE.views = AE.views || {};

  function themed(layout) {
    var css = getComputedStyle(document.documentElement);
    var fg = css.getPropertyValue("--fg").trim(), grid = css.getPropertyValue("--grid").trim();
    var out = JSON.parse(JSON.stringify(layout));
    out.paper_bgcolor = "rgba(0,0,0,0)";
    out.plot_bgcolor = "rgba(0,0,0,0)";
    out.font = Object.assign({ family: css.getPropertyValue("--font").trim(), color: fg }, out.font || {});
    ["xaxis", "yaxis"].forEach(function (a) {
      out[a] = Object.assign({ gridcolor: grid, linecolor: grid, zerolinecolor: grid }, out[a] || {});
    });
    out.autosize = true;
    return out;
  }

  AE.views.chart = function (root) {
    var chart = root.querySelector('[data-role="chart"]');
    var summary = root.querySelector('[data-role="chart-summary"]');
    var tableBox = root.querySelector('[data-role="chart-table"]');
    var state = null;

    function table(t) {
      var tb = document.createElement("table");
      tb.className = "buffers";
      var hr = document.createElement("tr");
      t.columns.forEach(function (c) { var th = document.createElement("th"); th.scope = "col"; th.textContent = c; hr.appendChild(th); });
      var head = document.createElement("thead"); head.appendChild(hr); tb.appendChild(head);
      var body = document.createElement("tbody");
      t.rows.forEach(function (r) {
        var tr = document.createElement("tr");
        r.forEach(function (x) { var td = document.createElement("td"); td.textContent = x; tr.appendChild(td); });
        body.appendChild(tr);
      });
      tb.appendChild(body);
      return tb;
    }

    function draw() {
      if (window.Plotly) {
        Plotly.react(chart, state.figure.data, themed(state.figure.layout),
          { displayModeBar: false, responsive: true });
      }
      chart.setAttribute("aria-label", state.summary);
      summary.textContent = state.summary;
      if (tableBox && state.table) tableBox.replaceChildren(table(state.table));
    }
    document.addEventListener("ae:theme", function () { if (state) draw(); });
    return { render: function (s) { state = s; draw(); } };
  };
})();
