// bundle: head  provides: AE.meta AE.onPage AE.startPage AE.startWorker AE.early  needs: AEProtocol
// Starts the Python worker as soon as the <head> is parsed, instead of after the page's deferred
// scripts (Plotly alone takes a while to run), so Pyodide boots while the page renders.
// python.js adopts this worker (AE.early) and replays what it said in the meantime; it calls
// AE.startWorker itself if this could not start one, or to restart Python.
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});

  AE.meta = function (name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : null;
  };

  // What the page's scripts do to its body: once it is parsed (start.js), and again each time
  // navigate.js swaps in another page's body; then "ae:page" on the document.
  var onPage = [];
  AE.onPage = function (fn) { onPage.push(fn); };
  AE.startPage = function () {
    onPage.forEach(function (fn) { fn(); });
    document.dispatchEvent(new CustomEvent("ae:page"));
  };

  // A new worker, told to start Python; what it says is kept in `events` until someone listens.
  // Throws if the browser cannot start a module worker here.
  AE.startWorker = function () {
    var base = new URL(AE.meta("ae-base") || "./", location.href);
    var worker = new Worker(new URL("static/js/worker.js", base), { type: "module" });
    var started = { worker: worker, events: [] };
    worker.onmessage = function (e) { started.events.push({ type: "message", event: e }); };
    worker.onerror = function (e) {
      e.preventDefault();
      started.events.push({ type: "error", event: e });
    };
    worker.postMessage(self.AEProtocol.init());
    return started;
  };

  if (location.protocol === "file:" || typeof Worker === "undefined") return;  // python.js explains
  try {
    AE.early = AE.startWorker();
  } catch (e) {
    /* python.js tries again, and says why it cannot */
  }
})();
