// The head's bundle: starts the Python worker as soon as the <head> is parsed, instead of after
// the page's deferred bundle (Plotly alone takes a while to run), so Pyodide boots while the page
// renders. The two bundles share no module instance, so the worker is handed over on the page's
// one global, window.AE.early: python.js adopts it and replays what it said in the meantime; it
// starts one itself if this could not, or to restart Python.
import { startWorker } from "./page.js";

if (location.protocol !== "file:" && typeof Worker !== "undefined") {  // else python.js explains
  try {
    (window.AE = window.AE || {}).early = startWorker();
  } catch (e) {
    /* python.js tries again, and says why it cannot */
  }
}
