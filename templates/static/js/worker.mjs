// The page's Python: boots Pyodide, unpacks the core from the site's zip, answers widget calls.
// A module worker because Pyodide's ES module build requires it.
import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";

// build.py writes here, when it copies this file into the site, the name of the standard library
// it pre-compiled to bytecode for this very Pyodide (so nothing is compiled while the reader
// waits) and the `info` of Pyodide's lock file (so the lock is not fetched: the core needs no
// package). Left null, as in templates/, Pyodide loads its own .py standard library and lock.
const BUILD = null;

let bridge = null;
let python = null;  // kept for the memory report (bench/memory.py)

function options(indexURL) {
  const opts = { indexURL };
  if (BUILD) {
    opts.stdLibURL = new URL(BUILD.stdlib, new URL("../../", import.meta.url)).href;
    opts.lockFileContents = { info: BUILD.lock, packages: {} };
  }
  return opts;
}

async function init(msg) {
  const zip = fetch(msg.core).then((r) => {
    if (!r.ok) throw new Error(`the core's zip answered ${r.status}`);
    return r.arrayBuffer();
  });
  const pyodide = await loadPyodide(options(msg.indexURL));
  pyodide.unpackArchive(await zip, "zip");
  bridge = pyodide.pyimport("allreduce_explainer.bridge");
  python = pyodide;
}

self.onmessage = async (e) => {
  const msg = e.data;
  if (msg.type === "init") {
    try {
      await init(msg);
      self.postMessage({ type: "ready" });
    } catch (err) {
      self.postMessage({ type: "failed", message: String((err && err.message) || err) });
    }
  } else if (msg.type === "stats") {  // for bench/memory.py: Python's live objects, Wasm memory
    const objects = python.runPython("import gc; gc.collect(); len(gc.get_objects())");
    self.postMessage({ type: "stats", objects, wasmBytes: python._module.HEAP8.buffer.byteLength });
  } else if (msg.type === "call") {
    const t0 = performance.now();
    let response;
    try {
      response = bridge.call(msg.widget, JSON.stringify(msg.params));
    } catch (err) {
      response = JSON.stringify({ ok: false, error: { field: null, message: `worker: ${err.message}` } });
    }
    self.postMessage({ type: "result", id: msg.id, response, pythonMs: performance.now() - t0 });
  }
};
