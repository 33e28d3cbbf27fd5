// Your cluster's log panel, no computation: (1) a log opened from disk is read here, in the
// browser (never uploaded), and handed to Python as the log_file parameter (a hidden input, kept
// in storage, never drawn: a text box of millions of lines freezes Chromium); only the first data-max-bytes
// (logs/explain.py's limit) and one byte are read, so Python can refuse a longer file with its own message. (2) The "use the
// fitted figures" button applies the parameters Python fitted to that log (state.fit_apply).
// The examples menu is an ordinary control: Python puts the chosen log in the text box; an opened
// file sets the menu back to none. (3) Until a log is drawn, the examples, as buttons, stand where
// its charts will be. A page wires each of its panels; a notebook's widget (client/js/notebook.js),
// drawn later and in a shadow root, wires its own with logPanel.attach.
import { diagram } from "./diagram.js";
import { onPage, python, widgets } from "./page.js";

function widgetOf(el) {
  var fig = el.closest("[data-widget]");
  var all = widgets || [];
  for (var i = 0; i < all.length; i++) if (all[i].el === fig) return all[i];
  return null;
}

// A log's time chart drawn or not: the examples stand in its place until it is.
function drawnLog(w) {
  var f = w && w.state && w.state.figures;
  return !!(f && f.time && f.time.figure);
}

// (4) A NCCL_DEBUG=INFO log: its channel's ring or tree, drawn from Python's layout and
// arrows (widgets/debugview.py) by diagram.js; the topology's button applies state.topology_apply.
function drawDebug(fig, w) {
  var view = fig.querySelector('[data-role="debug-view"]');
  var d = w && w.state && w.state.debug;
  if (!view) return;
  view.hidden = !d;
  var step = view.querySelector('[data-role="debug-step"]');
  if (step) {  // the ring on stage 2's stepper: Python's link from the site's root
    var base = document.querySelector('meta[name="ae-base"]');
    step.hidden = !(d && d.step_link);
    if (d && d.step_link) step.querySelector("a").href = (base ? base.content : "") + d.step_link;
  }
  if (!d || !d.diagram || !diagram) return;
  var svg = view.querySelector('[data-role="debug-diagram"]');
  diagram.layout(svg, d.diagram);
  diagram.frame(svg, d.frame, d.channel);
  svg.setAttribute("aria-label", d.label);
  svg.querySelector("title").textContent = d.label;
  var note = view.querySelector('[data-role="debug-note"]');
  if (note) note.textContent = d.left_out ? d.left_out + " links go to servers not drawn (the first four are)." : "";
}

function sync(fig) {
  var w = widgetOf(fig), b = fig.querySelector('[data-action="use-fit"]');
  var ready = !!(python && python.status === "ready");
  var t = fig.querySelector('[data-action="use-topology"]');
  if (t) t.disabled = !(w && w.state && w.state.topology_apply && ready);
  drawDebug(fig, w);
  if (b) b.disabled = !(w && w.state && w.state.fit_apply && ready);
  var examples = fig.querySelector('[data-role="log-examples"]');
  if (examples && w) examples.hidden = drawnLog(w);
}

function attach(fig) {
  var input = fig.querySelector('[data-role="log-file"]');
  input.addEventListener("change", function () {
    var file = input.files && input.files[0];
    if (!file) return;
    file.slice(0, Number(input.dataset.maxBytes) + 1).text().then(function (text) {
      // into the hidden log_file parameter, not the text box (see widgets/cluster.py)
      var w = widgetOf(fig);
      if (w) w.update({ example: "", log: "", log_file: text });
      input.value = "";
    });
  });
  var topoButton = fig.querySelector('[data-action="use-topology"]');
  if (topoButton) {
    topoButton.addEventListener("click", function () {
      var w = widgetOf(fig);
      if (w && w.state.topology_apply) w.update(w.state.topology_apply);
    });
  }
  var button = fig.querySelector('[data-action="use-fit"]');
  if (button) {
    button.addEventListener("click", function () {
      var w = widgetOf(fig);
      if (w && w.state.fit_apply) w.update(w.state.fit_apply);
    });
  }
  // an example's button loads it as the menu does (the text box emptied: a paste wins over it)
  fig.querySelectorAll("[data-example]").forEach(function (b) {
    b.addEventListener("click", function () {
      var w = widgetOf(fig);
      if (w) w.update({ example: b.getAttribute("data-example"), log: "", log_file: "" });
    });
  });
  fig.addEventListener("ae:settled", function () { sync(fig); });
  document.addEventListener("ae:python", function () { sync(fig); });
  sync(fig);
}

export const logPanel = { attach: attach };
onPage(function () {
  document.querySelectorAll('[data-widget] [data-role="log-file"]').forEach(function (input) {
    attach(input.closest("[data-widget]"));
  });
});
