// The messages between a page and its Python worker, written once: the page's bundles (esbuild,
// sitebuild/bundle.py) and the worker import it; its functions build every message; the
// receivers dispatch on `type`:
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
export const protocol = {
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
