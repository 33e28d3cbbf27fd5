// Predict first: a widget whose state asks a question (views.prediction) keeps what would give
// its answer away (a stepper's later steps, charts, readouts) blurred and out of reach until the
// reader answers or skips. Python judges the answer (the bridge's "predict" call); this file shows
// the question, sends the answer, shows the verdict and announces it as an `ae:predicted` event
// ({widget, id, answer, correct}; correct null for a skip) for scorm.js and embedevents.js.
// `predict=0` in the page's address turns every prediction off (a lecture), as projector mode
// (`present=1`) does; an answer or a skip is remembered for the page in the session (stored.js).
import { python } from "./page.js";
import { stored } from "./stored.js";

export function predict(widget) {
  var form = widget.el.querySelector('[data-role="predict"]');
  if (!form) return null;
  // read as the widget is made (navigate.js may have swapped in another page's address):
  // `predict=0`, or projector mode, where a lecturer steps with the keys and the room predicts
  var address = new URLSearchParams(location.search);
  var off = address.get("predict") === "0" || address.get("present") === "1";
  var q = function (sel) { return form.querySelector(sel); };
  var field = q('[data-role="predict-answer"]'), verdict = q('[data-role="predict-verdict"]');
  var asked = null, waiting = false, hidden = [];

  // What gives the answer away: the charts named (with their summaries and tables), the
  // readouts named and the prose marked with the prediction's id; a stepper's later steps are
  // its view's to lock.
  function parts(p) {
    var root = widget.el, out = [];
    (p.figures || []).forEach(function (name) {
      var sel = name ? '[data-figure="' + name + '"]' : ":not([data-figure])";
      ["chart", "chart-summary"].forEach(function (role) {
        var el = root.querySelector('[data-role="' + role + '"]' + sel);
        if (el) out.push(el);
      });
      var table = root.querySelector('[data-role="chart-table"]' + sel);
      if (table) out.push(table.closest("details"));
    });
    (p.readouts || []).forEach(function (key) {
      var el = root.querySelector('[data-readout="' + key + '"]');
      if (el) out.push(el);
    });
    // the page's prose that gives the answer away (content: data-hidden-until="<id>")
    document.querySelectorAll('[data-hidden-until="' + p.id + '"]').forEach(function (el) { out.push(el); });
    return out;
  }
  function conceal(on) {
    hidden.forEach(function (el) { el.classList.remove("predict-hidden"); el.inert = false; });
    hidden = on ? parts(asked) : [];
    hidden.forEach(function (el) { el.classList.add("predict-hidden"); el.inert = true; });
    if (widget.view.lock) widget.view.lock(on && "last_step" in asked ? asked.last_step : null);
  }
  function finish(answer, correct) {
    waiting = false;
    conceal(false);
    var focused = form.contains(document.activeElement);
    q('[data-role="predict-row"]').hidden = true;
    if (focused && correct !== null) {  // the box and buttons are gone: on to the verdict
      verdict.tabIndex = -1;
      verdict.focus();
    }
    stored.keepPredicted(widget, asked.id);
    widget.el.dispatchEvent(new CustomEvent("ae:predicted", { bubbles: true, detail: {
      widget: widget.name, id: asked.id, answer: answer, correct: correct } }));
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    if (!waiting) return;
    var answer = field.value, st = python && python.status;
    verdict.removeAttribute("data-correct");
    field.removeAttribute("aria-invalid");
    verdict.textContent = st === "loading" ? "Checking your prediction needs Python, which is still loading: one moment…" : "";
    python.call("predict", { widget: widget.fn, params: widget.state.params, answer: answer }).then(function (r) {
      if (!waiting) return;  // skipped meanwhile
      if (!r.response.ok) {  // not readable yet: Python says why, the question stays
        verdict.textContent = r.response.error.message;
        field.setAttribute("aria-invalid", "true");
        return;
      }
      var v = r.response.state;
      verdict.textContent = v.message;
      verdict.setAttribute("data-correct", String(v.correct));
      finish(answer, v.correct);
    }, function (err) {
      verdict.textContent = err.message + ". Press Skip to see the answer.";
    });
  });
  q('[data-action="predict-skip"]').addEventListener("click", function () {
    if (!waiting) return;
    finish(null, null);
    form.hidden = true;  // nothing to say: the widget shows everything
    var next = widget.el.querySelector('[data-action="next"]');  // a stepper goes on from here
    if (!next) widget.el.tabIndex = -1;
    (next || widget.el).focus();
  });

  return {
    // a new state: its question (the chunk asked about follows the GPU count), and what stays
    // hidden while the reader has not answered
    render: function (prediction) {
      var first = asked === null;
      asked = prediction || null;
      if (!asked) { form.hidden = true; if (waiting) { waiting = false; conceal(false); } return; }
      q('[data-role="predict-question"]').textContent = asked.question;
      field.placeholder = asked.example;
      // a link to a step past the question (a shared view) shows that step: it asks nothing
      var linked = Number(new URLSearchParams(location.search).get(widget.name + ".step")) > asked.last_step;
      if (first) waiting = !off && !linked && !stored.predicted(widget, asked.id);
      if (first) form.hidden = !waiting;
      if (waiting) conceal(true);
    },
  };
};
