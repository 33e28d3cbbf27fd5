// The page's Python: restores Pyodide from the site's snapshot (or boots it), answers widget calls.
// A module worker because Pyodide's ES module build requires it. Its messages: protocol.js.
// Every script it loads is named .js (Pyodide's modules too, sitebuild/vendor.py): a browser runs
// a module only under a JavaScript type, and course platforms type .mjs as unknown.
import { protocol as P } from "./protocol.js";
import { CORE, declaredLength, filesOnDemand, memoryBytes, restoring } from "./snapshot.js";

// The build (sitebuild/python_assets.py) writes here, when it copies this file into the site, the
// part of its manifest (py/build.json) the worker needs: the names and sizes of the files it made
// with this very Pyodide, namely the standard library and the core compiled to bytecode, the
// memory snapshot of a Pyodide that has booted, imported the core and called every widget
// (buildtools/snapshot.mjs), so nothing is compiled or imported while the reader waits, and the
// empty zip that stands in for the standard library while Python runs from it (snapshot.js); and
// the `info` of Pyodide's lock file (the core needs no package, so the lock is not fetched).
const BUILD = null;
const SITE = new URL("../../", import.meta.url);
const INDEX_URL = new URL("vendor/pyodide/", SITE).href;
// The sizes a download is held to; the snapshot is held to its own header (snapshotBytes), since a
// whole file that is not a snapshot is a host's mangling, not a download cut short.
const SIZES = new Map(Object.entries(BUILD.bytes).filter(([role]) => role !== "snapshot")
  .map(([role, n]) => [new URL(BUILD[role], SITE).href, n]));

let bridge = null;
let python = null;  // kept for the bench hook "stats", and as self.pyodide for tests

// Start-up fails fast. A file Python needs that does not arrive whole (refused, answered with an
// error, cut short) ends the start-up at once with the reason: Pyodide's own loader only logs a
// WebAssembly download that failed, and would leave the page waiting for its boot timeout.
class Missing extends Error {}
let giveUp;
const gaveUp = new Promise((resolve, reject) => { giveUp = reject; });
gaveUp.catch(() => {});  // reported when "init" asks for it

const fileName = (url) => decodeURIComponent(new URL(String(url), SITE).pathname.split("/").pop());

function missing(message) {
  const err = new Missing(message);
  giveUp(err);
  return err;
}

// Whether a response may be compiled as it streams in: the browser does so only under the type
// application/wasm. A course platform serves a package's files by its own table of types (Moodle:
// .wasm is document/unknown, sitebuild/moodle_types.py), and Pyodide, refused, only logs and
// waits; under another type the worker compiles the WebAssembly from its bytes instead.
const isWasm = (response) =>
  (response.headers.get("Content-Type") || "").split(";")[0].trim().toLowerCase() === "application/wasm";

// While Python starts, every download and the WebAssembly instantiation report their failure
// here (Pyodide makes them itself); the originals are put back once Python runs.
// `ahead` starts a download now that Pyodide will ask for later (it is handed the same response).
function watchStartup() {
  const originals = [self.fetch, WebAssembly.instantiateStreaming, Response.prototype.arrayBuffer];
  const [fetch0, instantiate0, arrayBuffer0] = originals;
  const early = new Map();
  const ahead = (url) => early.set(url, fetch0(url, {}));
  self.fetch = (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const response = early.get(url) || fetch0(input, init);
    early.delete(url);
    return watched(input, response);
  };
  const watched = (input, response) => response.then((r) => {
    if (!r.ok) throw missing(`${fileName(r.url)} answered ${r.status}`);
    return r;
  }, (err) => {
    throw missing(`${fileName(input instanceof Request ? input.url : input)} could not be downloaded (${err.message})`);
  });
  WebAssembly.instantiateStreaming = (source, imports) => Promise.resolve(source).then((r) => (
    isWasm(r) ? instantiate0.call(WebAssembly, r, imports)
      : r.arrayBuffer().then((buffer) => WebAssembly.instantiate(buffer, imports))
  )).catch((err) => {
    throw missing(`Python's WebAssembly (pyodide.asm.wasm) did not load (${err.message})`);
  });
  Response.prototype.arrayBuffer = function () {
    return arrayBuffer0.call(this).then((buffer) => {
      const size = SIZES.get(this.url);
      if (size !== undefined && buffer.byteLength < size) {
        throw missing(`${fileName(this.url)} was cut short (${buffer.byteLength} of ${size} bytes)`);
      }
      return buffer;
    }, (err) => {
      throw missing(`${fileName(this.url)} was cut short (${err.message})`);
    });
  };
  const unwatch = () => {
    [self.fetch, WebAssembly.instantiateStreaming, Response.prototype.arrayBuffer] = originals;
  };
  return { ahead, unwatch };
}

function bytes(url) {
  return fetch(url).then((r) => r.arrayBuffer());
}

// The snapshot's bytes. A host that mangles the file makes Python start from scratch (start); one
// that delivers it cut short, as a failing network would, ends the start-up like any other file.
async function snapshotBytes() {
  const buffer = await bytes(new URL(BUILD.snapshot, SITE));
  const declared = declaredLength(buffer);
  if (declared !== null && buffer.byteLength < declared) {
    throw missing(`${fileName(BUILD.snapshot)} was cut short (${buffer.byteLength} of ${declared} bytes)`);
  }
  performance.mark("ae:snapshot");
  return buffer;
}

// The real standard library or the core's zip ("stdlib", "core"), fetched synchronously (workers
// may) when Python imports from it a module the snapshot does not hold. If it cannot be had,
// Python is of no more use: the page is told, as for a failed start.
const WHAT = { stdlib: "the standard library", core: "the simulation's code" };

function fetchSync(role) {
  const request = new XMLHttpRequest();
  request.open("GET", new URL(BUILD[role], SITE).href, false);
  request.responseType = "arraybuffer";
  let why = null;
  try {
    request.send();
    if (request.status !== 200) why = `answered ${request.status}`;
    else if (request.response.byteLength !== BUILD.bytes[role]) why = "was cut short";
  } catch (err) {
    why = `could not be downloaded (${err.message})`;
  }
  if (why !== null) {
    const message = `${WHAT[role]} (${fileName(BUILD[role])}) ${why}`;
    self.postMessage(P.failed(message));
    throw new Error(message);
  }
  return new Uint8Array(request.response);
}

function options(stdlib) {
  return {
    indexURL: INDEX_URL,
    stdLibURL: new URL(stdlib, SITE).href,
    lockFileContents: { info: BUILD.lock, packages: {} },
  };
}

// Restores the snapshot; if that fails for another reason than a missing file (a host that mangles
// the file, a browser that rejects it), boots Python from the start instead: slower, same answers.
// Restored, Python imports the core from its zip, as it does the standard library: both are
// fetched only if Python asks for a module the snapshot does not hold (filesOnDemand).
async function start(loadPyodide, snapshot) {
  try {
    const pyodide = await loadPyodide(restoring(options(BUILD.nostdlib), snapshot));
    filesOnDemand(pyodide, BUILD.lock.python, fetchSync);
    return pyodide;
  } catch (err) {
    if (err instanceof Missing) throw err;
    const why = (err && err.message) || err;
    console.warn(`Python's snapshot did not load (${why}); starting Python from scratch.`);
  }
  const pyodide = await loadPyodide(options(BUILD.stdlib));
  pyodide.FS.writeFile(CORE, new Uint8Array(await bytes(new URL(BUILD.core, SITE))));
  pyodide.runPython(`import sys\nif "${CORE}" not in sys.path: sys.path.insert(0, "${CORE}")`);
  return pyodide;
}

// The two big downloads (the snapshot, the WebAssembly) start at once, beside Pyodide's scripts.
async function boot() {
  const { ahead, unwatch } = watchStartup();
  const snapshot = snapshotBytes();
  snapshot.catch(() => {});  // awaited in start
  ahead(new URL("pyodide.asm.wasm", INDEX_URL).href);
  // Pyodide's two scripts, fetched side by side; it would import the second itself
  const load = (name) => import(new URL(name, INDEX_URL).href).catch((err) => {
    throw missing(`${name} did not load (${err.message})`);
  });
  const [{ loadPyodide }, asm] = await Promise.all([load("pyodide.esm.js"), load("pyodide.asm.js")]);
  performance.mark("ae:scripts");  // the phases of a start, for bench/site.py
  const createPyodideModule = asm.default;
  const pyodide = await start((options) => loadPyodide({ ...options, createPyodideModule }), snapshot);
  bridge = pyodide.pyimport("allreduce_explainer.bridge");
  python = self.pyodide = pyodide;
  unwatch();
  performance.mark("ae:ready");
}

// The worker starts booting as soon as it is loaded, without waiting for the page's "init"
// message to be delivered.
const booting = Promise.race([boot(), gaveUp]);
booting.catch(() => {});  // reported when "init" asks for it

// After "ready", while the reader reads: call the page's widgets for a few hundred milliseconds
// of Python, one call per task, so a reader's change waits behind one call at most. First each
// widget's slow first calls (bridge.warm_calls: stage 7's models), once; then the widgets at
// their defaults in turn. Python restored from the snapshot has run nothing in this browser yet,
// so the WebAssembly compiler has not optimised the interpreter; without these calls a reader's
// first twenty or so changes take two to four times as long as later ones (bench/RESULTS.md).
const WARM_MS = 300;

function warm(widgets) {
  let plan;
  try {
    plan = JSON.parse(bridge.warm_calls(JSON.stringify(widgets)));
  } catch (err) {
    return;  // a warm-up is no reason to disturb the page; the reader's calls report errors
  }
  let spent = 0;
  let i = 0;
  const next = () => {
    const first = i < plan.first.length;
    if (!first && (spent >= WARM_MS || plan.again.length === 0)) return;
    const [name, params] = first ? plan.first[i] : [plan.again[(i - plan.first.length) % plan.again.length], "{}"];
    i += 1;
    const t0 = performance.now();
    try {
      bridge.call(name, params);
    } catch (err) {
      return;
    }
    spent += performance.now() - t0;
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}

// A text parameter longer than LONG characters (an opened log of up to a megabyte) goes to Python
// once, by bridge.keep, and each call names it instead of carrying it in its JSON: the reader's
// changes with a log open (the GPU count) would otherwise encode and decode a megabyte each time.
const LONG = 1 << 16;
const kept = new Map();  // parameter name -> the text Python keeps under it
function slim(params) {
  if (!params || typeof params !== "object" || Array.isArray(params)) return params;
  const out = {};
  for (const [k, v] of Object.entries(params)) {
    if (typeof v !== "string" || v.length <= LONG) { out[k] = v; continue; }
    if (kept.get(k) !== v) { bridge.keep(k, v); kept.set(k, v); }
    out[k] = { kept: k };
  }
  return out;
}

self.onmessage = async (e) => {
  const msg = e.data;
  if (msg.type === "init") {
    try {
      await booting;
      self.postMessage(P.ready());
    } catch (err) {
      self.postMessage(P.failed(String((err && err.message) || err)));
    }
  } else if (msg.type === "warm" && bridge) {
    warm(msg.widgets);
  } else if (msg.type === "stats") {  // bench hook: Python's live objects, WebAssembly memory
    const objects = python.runPython("import gc; gc.collect(); len(gc.get_objects())");
    self.postMessage(P.statsReport(objects, memoryBytes(python)));
  } else if (msg.type === "call") {
    const t0 = performance.now();
    let response;
    try {
      response = bridge.call(msg.widget, JSON.stringify(slim(msg.params)));
    } catch (err) {
      response = JSON.stringify({ ok: false, error: { field: null, message: `worker: ${err.message}` } });
    }
    self.postMessage(P.result(msg.id, response, performance.now() - t0));
  }
};
