// The page side of live recomputation: one Pyodide worker, widgets that ask it for new states.
// JavaScript renders and wires events; every number comes from Python (the inline default state,
// or the worker's answer).
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});
  AE.views = AE.views || {};
  var root = document.documentElement;

  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : null;
  }

  // ---- The worker: boot Pyodide once, then answer calls by id. -------------------------------
  // Faults: a call that gets no answer within CALL_TIMEOUT_MS, or a worker that dies, ends that
  // worker; a new one starts and the unanswered calls (at most one per widget) are replayed. Boot
  // itself may take BOOT_TIMEOUT_MS before the page gives up and stays on its precomputed states.
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
    root.setAttribute("data-python", status);
    var el = document.querySelector('[data-role="python-status"]');
    if (el) el.textContent = message;
    document.dispatchEvent(new CustomEvent("ae:python", { detail: { status: status } }));
  };
  Python.prototype.start = function () {
    var self = this;
    if (location.protocol === "file:") {
      return this.fail("This page was opened from a file, where browsers do not run Python " +
        "workers; it shows the precomputed defaults. Serve the folder (see the README) for live recomputation.");
    }
    var base = new URL(meta("ae-base") || "./", location.href);
    var early = AE.early;  // the worker boot.js started from the <head>, if it could
    AE.early = null;
    try {
      this.worker = early ? early.worker : new Worker(new URL("static/js/worker.mjs", base), { type: "module" });
    } catch (e) {
      return this.fail("This page cannot start a worker here (" + (e && e.message || e) +
        "), so it shows the precomputed defaults. Open it on its own site for live recomputation.");
    }
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
    if (early) {  // it was sent "init" already: hear what it said since
      early.events.forEach(function (ev) { (ev.type === "message" ? onmessage : onerror)(ev.event); });
      return;
    }
    this.worker.postMessage({
      type: "init",
      core: new URL(meta("ae-core"), location.href).href,
      indexURL: new URL("vendor/pyodide/", base).href,
    });
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
      // the worker runs the page's widgets while the reader reads, to warm up (worker.mjs)
      var names = (AE.widgets || []).map(function (w) { return w.name; });
      this.worker.postMessage({ type: "warm", widgets: names.filter(function (n, i) {
        return names.indexOf(n) === i;
      }) });
    } else if (msg.type === "failed") {
      this.fail("Python could not start (" + msg.message + ")" + STATIC);
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
    this.worker.postMessage({ type: "call", id: id, widget: w.widget, params: w.params });
  };
  Python.prototype.call = function (widget, params) {
    var self = this;
    return new Promise(function (resolve, reject) {
      var w = { widget: widget, params: params, resolve: resolve, reject: reject };
      if (self.status === "ready") self.send(w);
      else if (self.status === "loading") self.waiting.push(w);
      else reject(new Error(document.querySelector('[data-role="python-status"]').textContent));
    });
  };

  // ---- Widgets: controls in, states out. -----------------------------------------------------
  function Widget(el) {
    this.el = el;
    this.name = el.getAttribute("data-widget");
    this.state = JSON.parse(el.querySelector('script[data-role="state"]').textContent);
    this.view = AE.views[el.getAttribute("data-kind")](el, this);
    this.defaults = JSON.parse(JSON.stringify(this.state.params));  // what a bare link shows
    this.busy = false;
    this.queued = null;  // the latest params asked for while a call was running: latest wins
    this.render();
    this.wire();
    if (AE.share) AE.share.attach(this);
  }
  // Called by views when the reader moves to another step.
  Widget.prototype.onStep = function (k) {
    if (AE.share) AE.share.record(this, false);
  };
  Widget.prototype.step = function () {
    return this.view.step ? this.view.step() : 0;
  };
  Widget.prototype.render = function () {
    var s = this.state;
    this.view.render(s);
    var readouts = s.readouts || {};
    // only what changed is written: each write makes the browser lay the page out again
    this.el.querySelectorAll("[data-readout]").forEach(function (o) {
      var k = o.getAttribute("data-readout");
      if (k in readouts && o.textContent !== readouts[k]) o.textContent = readouts[k];
    });
    this.el.querySelectorAll("[data-param]").forEach(function (c) {
      var k = c.getAttribute("data-param"), v = s.params[k];
      if (k in s.params && document.activeElement !== c && v !== null && c.value !== String(v)) c.value = v;
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
        var change = {};
        change[c.getAttribute("data-param")] = self.controlValue(c);
        if (c.getAttribute("data-param") !== "values" && "values" in self.state.params) change.values = null;
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
    if (!slot) slot = this.el.querySelector('[data-error-for="_"]');
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
    AE.python.call(this.name, params).then(function (r) {
      if (r.response.ok) {
        self.state = r.response.state;
        var t1 = performance.now();
        self.render();
        var t2 = performance.now();
        // for bench/: from the reader's change to the new state on screen, and its parts
        AE.timing({ widget: self.name, kind: "recompute", python: r.pythonMs,
          render: t2 - t1, total: t2 - request.t0 });
        if (request.after) request.after();
        if (AE.share) AE.share.record(self, request.push);
      } else {
        var err = r.response.error;
        self.showError(err.field, err.field && err.field !== "_" ? err.message : err.message);
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

  // The latest interactions' timings, for bench/ (bounded: a long session must not grow it).
  AE.timings = [];
  AE.timing = function (entry) {
    AE.timings.push(entry);
    if (AE.timings.length > 256) AE.timings.shift();
  };
  AE.Widget = Widget;
  AE.Python = Python;
  AE.formatValue = function (v, digits) {
    if (typeof v !== "number") return String(v);
    var text = digits ? String(Number(v.toPrecision(digits))) : String(v);
    return text.replace("-", "−");
  };
})();
