// The widget controller: a widget's controls in, Python's states out. JavaScript renders and wires
// events; every number comes from Python (the inline default state, or the worker's answer).
import { chart, panel } from "./chart.js";
import { copyTools } from "./copytools.js";
import { exercise } from "./exercise.js";
import { python } from "./page.js";
import { predict } from "./predict.js";
import { sheet } from "./sheet.js";
import { stepper } from "./stepper.js";
import { leverOff, timing } from "./probe.js";
import { stored } from "./stored.js";
import { urlState } from "./urlstate.js";

// What a site's page adds to a widget: its prediction first, its copy controls, its parameters in
// the URL and its costly inputs kept in storage. The notebook's adapter (notebook.js) replaces
// them: a notebook's widget asks no prediction and has no URL or storage of its own.
export const pageParts = { predict, copyTools, urlState, stored };

// the views, by a widget's data-kind
const VIEWS = { chart, panel, exercise, sheet, stepper };

// A readout's text; a headline's figure with what follows it in parentheses in a smaller note,
// as the headline macro (templates/widgets/_macros.html) renders it.
function writeReadout(o, text) {
  var cut = o.hasAttribute("data-headline") ? text.indexOf(" (") : -1;
  if (cut < 0) { o.textContent = text; return; }
  var note = document.createElement("span");
  note.className = "readout-note";
  note.textContent = text.slice(cut + 1);
  o.textContent = text.slice(0, cut + 1);  // the space outside: an inline block drops its own
  o.appendChild(note);
}

function Widget(el) {
  this.el = el;
  this.name = el.getAttribute("data-widget");
  // the widget function Python runs: the name before a "-" (exercise-ring_time -> exercise),
  // so several instances of one function live on a page under names of their own
  this.fn = this.name.split("-")[0];
  this.state = JSON.parse(el.querySelector('script[data-role="state"]').textContent);
  this.view = VIEWS[el.getAttribute("data-kind")](el, this);
  this.prediction = pageParts.predict(this);  // null: the widget asks none
  this.defaults = JSON.parse(JSON.stringify(this.state.params));  // what a bare link shows
  this.busy = false;
  this.queued = null;  // the latest params asked for while a call was running: latest wins
  this.recording = this.pushing = false;  // a record() waiting for the next paint, and whether it pushes
  this.render();
  this.wire();
  // the copy toolbar, then the parameters a link or an earlier visit asked for
  pageParts.copyTools.attach(this);
  pageParts.urlState.apply(this, pageParts.stored.read(this));
}
// Called by views when the reader moves to another step.
Widget.prototype.onStep = function (k) {
  this.record(false);
};
// Keep the shown state: the URL, and the fields that are kept in storage; once the new
// state is on screen (after the next paint), and once for all the records made before then.
// Chromium takes several ms per history entry, which would otherwise delay the frame that
// shows the change, and a burst of changes (an arrow key held) makes one entry, not dozens.
Widget.prototype.record = function (push) {
  var self = this;
  this.pushing = this.pushing || push;
  if (this.recording) return;
  this.recording = true;
  requestAnimationFrame(function () {
    setTimeout(function () {
      var pushed = self.pushing;
      self.recording = self.pushing = false;
      if (!self.el.isConnected) return;  // a page navigate.js has swapped out: not this URL's
      pageParts.stored.keep(self);
      pageParts.urlState.record(self, pushed);
      // the address now holds the shown state (embedevents.js tells the host page)
      self.el.dispatchEvent(new CustomEvent("ae:recorded", { bubbles: true }));
    }, 0);
  });
};
Widget.prototype.step = function () {
  return this.view.step ? this.view.step() : 0;
};
Widget.prototype.render = function () {
  var s = this.state;
  this.view.render(s);
  if (this.prediction) this.prediction.render(s.prediction);
  var readouts = s.readouts || {};
  // only what changed is written: each write makes the browser lay the page out again
  this.el.querySelectorAll("[data-readout]").forEach(function (o) {
    var k = o.getAttribute("data-readout");
    if (k in readouts && o.textContent !== readouts[k]) writeReadout(o, readouts[k]);
  });
  this.el.querySelectorAll("[data-param]").forEach(function (c) {
    var k = c.getAttribute("data-param"), v = s.params[k];
    if (k in s.params && document.activeElement !== c && v !== null && c.value !== String(v)) c.value = v;
  });
  this.limitNudges();
};
// A − / + button is disabled where its step would leave the box's limits (the min and max
// the spec rendered on the box), so a reader at a limit is not offered a refused change.
Widget.prototype.limitNudges = function () {
  var s = this.state, el = this.el;
  el.querySelectorAll('[data-action="add"]').forEach(function (b) {
    var parts = b.getAttribute("data-param-step").split(":");
    var box = el.querySelector('input[data-param="' + CSS.escape(parts[0]) + '"]');
    var next = Number(s.params[parts[0]]) + Number(parts[1]);
    var lo = box && box.min !== "" ? Number(box.min) : -Infinity;
    var hi = box && box.max !== "" ? Number(box.max) : Infinity;
    b.disabled = !(next >= lo && next <= hi);
  });
};
Widget.prototype.controlValue = function (c) {
  var v = c.value;
  if (c.type === "number") return v.trim() === "" ? null : Number(v);
  return v;
};
Widget.prototype.wire = function () {
  var self = this;
  this.el.querySelectorAll("[data-param]").forEach(function (c) {
    c.addEventListener("change", function () {
      var param = c.getAttribute("data-param"), change = {};
      change[param] = self.controlValue(c);
      // a figure typed under a preset (a custom model size, GPU, card rate) makes that choice
      // "custom" in the same request, so the typed value is what Python uses
      var custom = c.closest("[data-custom-for]");
      if (custom) change[custom.getAttribute("data-custom-for")] = "custom";
      else if (param !== "values" && "values" in self.state.params) change.values = null;
      self.update(change);
    });
  });
  this.el.querySelectorAll('[data-action="reroll"]').forEach(function (b) {
    b.addEventListener("click", function () {
      self.update({ seed: Math.floor(Math.random() * 1e9), values: null });
    });
  });
  this.el.querySelectorAll('[data-action="add"]').forEach(function (b) {
    b.addEventListener("click", function () {
      var parts = b.getAttribute("data-param-step").split(":");
      var change = {};
      change[parts[0]] = Number(self.state.params[parts[0]]) + Number(parts[1]);
      self.update(change);
    });
  });
};
Widget.prototype.clearErrors = function () {
  this.el.querySelectorAll("[data-error-for]").forEach(function (e) { e.textContent = ""; });
  this.el.querySelectorAll('[aria-invalid="true"]').forEach(function (c) { c.removeAttribute("aria-invalid"); });
};
Widget.prototype.showError = function (field, message) {
  var slot = field && this.el.querySelector('[data-error-for="' + CSS.escape(String(field)) + '"]');
  var control = field && this.el.querySelector('[data-param="' + CSS.escape(String(field)) + '"]');
  if (!slot) {  // a parameter without a control (a link's ring order): the message names it
    slot = this.el.querySelector('[data-error-for="_"]');
    if (field && field !== "_") message = field + ": " + message;
  }
  if (slot) slot.textContent = message;
  if (control) control.setAttribute("aria-invalid", "true");
};
// Ask Python for the state at these parameters. `after` runs once it is shown (restoring a
// link's step); a change the reader made goes into the page's history, a restored one not.
Widget.prototype.update = function (change, after) {
  // build on the newest parameters asked for, so that a change made while another is still
  // computing keeps that other change
  var newest = this.queued ? this.queued.params : this.inflight || this.state.params;
  var params = Object.assign({}, newest, change);
  this.clearErrors();
  var request = { params: params, after: after || null, push: !after, t0: performance.now() };
  if (this.busy) { this.queued = request; return; }
  this.ask(request);
};
Widget.prototype.ask = function (request) {
  var self = this, params = request.params;
  this.busy = true;
  this.inflight = params;
  this.el.setAttribute("aria-busy", "true");
  // a notebook's widget asks its own kernel (client/js/notebook.js)
  (this.python || python).call(this.fn, params).then(function (r) {
    if (r.response.ok) {
      // a parameter Python left out of its answer is the one the page sent, unchanged (an
      // opened log of up to a megabyte is not sent back: views.unchanged_left_out)
      var back = r.response.state.params;
      Object.keys(params).forEach(function (k) { if (!(k in back)) back[k] = params[k]; });
    }
    if (r.response.ok && self.queued && !request.after && !leverOff("coalesce")) {
      // the reader has changed something since: this answer is already stale, and drawing it
      // would only delay the newest one (rapid input: the latest wins)
      self.state = r.response.state;
    } else if (r.response.ok) {
      self.state = r.response.state;
      var t1 = performance.now();
      self.render();
      var t2 = performance.now();
      timing({ widget: self.name, kind: "recompute", python: r.pythonMs,
        render: t2 - t1, total: t2 - request.t0 });
      if (request.after) request.after();
      self.record(request.push);
    } else {
      var err = r.response.error;
      self.showError(err.field, err.message);
      self.render();  // the controls go back to the last good state's values
      var c = err.field && self.el.querySelector('[data-param="' + CSS.escape(String(err.field)) + '"]');
      // the control keeps what the reader typed, next to the message about it
      if (c) c.value = params[err.field] === null || params[err.field] === undefined ? "" : params[err.field];
    }
  }, function (e) {
    self.showError("_", e.message);
    self.render();
  }).then(function () {
    self.busy = false;
    self.inflight = null;
    self.el.removeAttribute("aria-busy");
    if (self.queued) {
      var next = self.queued;
      self.queued = null;
      self.ask(next);
    }
    self.el.dispatchEvent(new CustomEvent("ae:settled", { bubbles: true }));
  });
};

export { Widget };
