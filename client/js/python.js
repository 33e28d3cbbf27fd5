// The page's Python client: one Pyodide worker (started by boot.js), answering calls by id.
// Faults: a call that gets no answer within CALL_TIMEOUT_MS, or a worker that dies, ends that
// worker; a new one starts and the unanswered calls (at most one per widget) are replayed. Boot
// itself may take BOOT_TIMEOUT_MS before the page gives up and stays on its precomputed states.
import { startWorker, widgets } from "./page.js";
import { protocol as P } from "./protocol.js";

var root = document.documentElement;
var CALL_TIMEOUT_MS = 10000, BOOT_TIMEOUT_MS = 90000, MAX_RESTARTS = 3;
var STATIC = "; the page shows the precomputed defaults.";

function Python() {
  this.status = "loading";
  this.nextId = 1;
  this.pending = {};  // id -> call sent to the worker, awaiting its answer
  this.waiting = [];  // calls made while Python was (re)starting
  this.restarts = 0;
}
Python.prototype.setStatus = function (status, message) {
  this.status = status;
  this.message = message;
  root.setAttribute("data-python", status);
  this.showStatus();
  document.dispatchEvent(new CustomEvent("ae:python", { detail: { status: status } }));
};
// The status line of the page shown (navigate.js may have swapped in another since).
Python.prototype.showStatus = function () {
  var el = document.querySelector('[data-role="python-status"]');
  if (el && this.message) el.textContent = this.message;
};
// While the reader reads, the worker calls the page's widgets to warm up (worker.js).
Python.prototype.warm = function () {
  if (this.status !== "ready") return;
  var names = (widgets || []).map(function (w) { return w.fn; });
  this.worker.postMessage(P.warm(names.filter(function (n, i) { return names.indexOf(n) === i; })));
};
Python.prototype.start = function () {
  var self = this;
  if (location.protocol === "file:") {
    return this.fail("This page was opened from a file, where browsers do not run Python " +
      "workers; it shows the precomputed defaults. Serve the folder (see the README) for live recomputation.");
  }
  // the worker boot.js started from the <head>, if it could (the head's bundle hands it over)
  var started = window.AE && window.AE.early;
  if (started) window.AE.early = null;
  try {
    if (!started) started = startWorker();
  } catch (e) {
    return this.fail("This page cannot start a worker here (" + (e && e.message || e) +
      "), so it shows the precomputed defaults. Open it on its own site for live recomputation.");
  }
  this.worker = started.worker;
  var onmessage = function (e) { self.receive(e.data); };
  var onerror = function (e) {
    e.preventDefault();
    if (self.status === "ready") self.restart("Python stopped (" + (e.message || "the worker died") + ")");
    else self.fail("Python could not start (" + (e.message || "the worker failed to load") + ")" + STATIC);
  };
  this.worker.onmessage = onmessage;
  this.worker.onerror = onerror;
  this.bootTimer = setTimeout(function () {
    self.fail("Python did not start within " + BOOT_TIMEOUT_MS / 1000 + " s" + STATIC);
  }, BOOT_TIMEOUT_MS);
  // it was sent "init" already: hear what it said since
  started.events.forEach(function (ev) { (ev.type === "message" ? onmessage : onerror)(ev.event); });
};
Python.prototype.stopWorker = function () {
  clearTimeout(this.bootTimer);
  if (this.worker) {
    this.worker.onmessage = this.worker.onerror = null;
    this.worker.terminate();
    this.worker = null;
  }
};
Python.prototype.unanswered = function () {
  var calls = Object.keys(this.pending).map(function (id) {
    clearTimeout(this.pending[id].timer);
    return this.pending[id];
  }, this);
  this.pending = {};
  return calls;
};
Python.prototype.restart = function (why) {
  this.stopWorker();
  if (++this.restarts > MAX_RESTARTS) {
    return this.fail(why + ", again" + STATIC);
  }
  this.waiting = this.unanswered().concat(this.waiting);
  this.setStatus("loading", why + "; restarting it and repeating your last change…");
  this.start();
};
Python.prototype.fail = function (message) {
  this.stopWorker();
  this.setStatus("failed", message);
  var calls = this.unanswered().concat(this.waiting);
  this.waiting = [];
  calls.forEach(function (w) { w.reject(new Error(message)); });
};
Python.prototype.receive = function (msg) {
  if (msg.type === "ready") {
    clearTimeout(this.bootTimer);
    this.setStatus("ready", this.restarts
      ? "Python was restarted; live recomputation works again."
      : "Live: every change you make is recomputed by the Python simulation in your browser.");
    var waiting = this.waiting;
    this.waiting = [];
    waiting.forEach(function (w) { this.send(w); }, this);
    this.warm();
  } else if (msg.type === "failed") {  // at start-up, or later if the standard library was lost
    this.fail((this.status === "ready" ? "Python stopped (" : "Python could not start (") +
      msg.message + ")" + STATIC);
  } else if (msg.type === "result") {
    var p = this.pending[msg.id];
    delete this.pending[msg.id];
    if (p) {
      clearTimeout(p.timer);
      p.resolve({ response: JSON.parse(msg.response), pythonMs: msg.pythonMs });
    }
  }
};
Python.prototype.send = function (w) {
  var self = this, id = this.nextId++;
  this.pending[id] = w;
  w.timer = setTimeout(function () {
    if (self.pending[id]) self.restart("Python did not answer within " + CALL_TIMEOUT_MS / 1000 + " s");
  }, CALL_TIMEOUT_MS);
  this.worker.postMessage(P.call(id, w.widget, w.params));
};
// A promise of the bridge's answer ({ok, state} or {ok: false, error}) and Python's time.
Python.prototype.call = function (widget, params) {
  var self = this;
  return new Promise(function (resolve, reject) {
    var w = { widget: widget, params: params, resolve: resolve, reject: reject };
    if (self.status === "ready") self.send(w);
    else if (self.status === "loading") self.waiting.push(w);
    else reject(new Error(self.message));
  });
};

export { Python };
