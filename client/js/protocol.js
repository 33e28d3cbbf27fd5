// bundle: head  provides: AEProtocol  loaded-by: client/js/worker.js
// The messages between a page and its Python worker, written once. The page's scripts load this
// file as a classic script (a page opened from disk must still read and step, and Chromium runs
// no module script from file://); the worker imports it as a module. Both read self.AEProtocol,
// whose functions build every message; the receivers dispatch on `type`:
//
// page -> worker
//   init                        answer "ready" once Python runs, or "failed"
//   warm {widgets}              while idle, make these widgets' slow first calls, then call them at their defaults (worker.js)
//   call {id, widget, params}   answer "result" with the same id
//   stats                       bench hook (bench/memory.py): answer "stats"
// worker -> page
//   ready
//   failed {message}
//   result {id, response, pythonMs}   response: the bridge's JSON text; pythonMs for bench/
//   stats {objects, wasmBytes}        bench hook: Python's live objects, WebAssembly memory
(function (scope) {
  "use strict";
  scope.AEProtocol = {
    init: function () { return { type: "init" }; },
    warm: function (widgets) { return { type: "warm", widgets: widgets }; },
    call: function (id, widget, params) {
      return { type: "call", id: id, widget: widget, params: params };
    },
    stats: function () { return { type: "stats" }; },
    ready: function () { return { type: "ready" }; },
    failed: function (message) { return { type: "failed", message: message }; },
    result: function (id, response, pythonMs) {
      return { type: "result", id: id, response: response, pythonMs: pythonMs };
    },
    statsReport: function (objects, wasmBytes) {
      return { type: "stats", objects: objects, wasmBytes: wasmBytes };
    },
  };
})(self);
