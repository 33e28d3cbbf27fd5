// Starts the Python worker as soon as the <head> is parsed, instead of after the page's deferred
// scripts (Plotly alone takes a while to run), so Pyodide boots while the page renders.
// runtime.js adopts this worker (AE.early) and replays what it said in the meantime.
(function () {
  "use strict";
  if (location.protocol === "file:" || typeof Worker === "undefined") return;  // runtime.js explains
  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : null;
  }
  var base = new URL(meta("ae-base") || "./", location.href);
  var worker;
  try {
    worker = new Worker(new URL("static/js/worker.mjs", base), { type: "module" });
  } catch (e) {
    return;  // runtime.js tries again, and says why it cannot
  }
  var early = { worker: worker, events: [] };
  worker.onmessage = function (e) { early.events.push({ type: "message", event: e }); };
  worker.onerror = function (e) {
    e.preventDefault();
    early.events.push({ type: "error", event: e });
  };
  worker.postMessage({
    type: "init",
    core: new URL(meta("ae-core"), location.href).href,
    indexURL: new URL("vendor/pyodide/", base).href,
  });
  (window.AE = window.AE || {}).early = early;
})();
