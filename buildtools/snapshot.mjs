// Boot the shipped Pyodide under Node exactly as the page's worker would (the compiled standard
// library, the core's zip on sys.path, the bridge imported, the widgets called as SNAPSHOT_CALLS
// says: at their defaults, and with the widgets' WARM parameters), then write its memory
// snapshot, which the worker restores instead of starting Python. Without a core's zip it writes a bare snapshot: Pyodide
// booted the same way, having imported nothing of ours, the floor bench/site.py measures the
// site's start against.
// Usage: node buildtools/snapshot.mjs <out.bin> <stdlib.zip> [<core.zip>]
//
// Why: starting CPython and Pyodide's own Python runtime, then importing the core, is most of a
// page's wait for Python; restoring memory replaces all of it (Pyodide's private snapshot API,
// client/js/snapshot.js, the way Pyodide builds its own dist/snapshot.bin in Node). The snapshot holds
// no JavaScript objects, only WebAssembly memory, so one made in Node serves every browser.
//
// What Python freed is left in memory as it was: the topology searches' scratch alone is 3 MB of
// freed, non-zero bytes that every page would download (and Brotli cannot squeeze). So before the
// snapshot is taken every free block of the C allocator (Emscripten's dlmalloc) is zeroed
// (zeroFree), the same for the bare snapshot and the site's; the memory Python uses is untouched.
//
// The build must give the same bytes every time, so the entropy, clocks and hash seed Python sees
// here are fixed: every reader's Python then starts from one known state (its `random` module is
// not used for anything secret; the site has no secrets).
import nodeCrypto from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { loadPyodide } from "pyodide";
import { CORE, snapshotOf, snapshotting } from "../client/js/snapshot.js";

function fixWorld() {
  let x = 0x9e3779b9; // xorshift32: a fixed stream in place of the system's randomness
  const next = () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x;
  };
  const fill = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 255;
    return view;
  };
  nodeCrypto.randomFillSync = fill; // what Emscripten uses under Node
  globalThis.crypto.getRandomValues = fill;
  Math.random = () => next() / 2 ** 32;
  let ms = Date.UTC(2020, 0, 1); // file times in Pyodide's file system, Python's clocks
  Date.now = () => (ms += 1);
  let t = 0;
  performance.now = () => (t += 1);
}

const WARM = `
import json, sys
sys.path.insert(0, "${CORE}")
from allreduce_explainer import bridge
from allreduce_explainer.widgets import SNAPSHOT_CALLS
for name, params in SNAPSHOT_CALLS:
    assert json.loads(bridge.call(name, json.dumps(params)))["ok"], (name, params)
`;

// Zero every free block of the C heap: take them all with malloc, largest first, without letting
// the heap grow (dlmalloc's footprint limit: malloc answers 0 instead of asking for more memory),
// fill them with zeros and free them again; freeing writes only each block's header back.
function zeroFree(module) {
  const footprint = module._malloc_footprint();
  module._malloc_set_footprint_limit(footprint);
  const taken = [];
  try {
    for (let size = 1 << 24; size >= 16; size >>= 1) {
      for (let p = module._malloc(size); p; p = module._malloc(size)) {
        module.HEAPU8.fill(0, p, p + size);
        taken.push(p);
      }
    }
  } finally {
    taken.reverse().forEach((p) => module._free(p));
    module._malloc_set_footprint_limit(-1);  // (size_t)-1: no limit, as before
  }
  if (module._malloc_footprint() !== footprint) throw new Error("zeroFree grew the heap");
}

async function main() {
  const [outPath, stdlibPath, corePath] = process.argv.slice(2);
  if (!stdlibPath) throw new Error("usage: node buildtools/snapshot.mjs <out.bin> <stdlib.zip> [<core.zip>]");
  fixWorld();
  const lock = JSON.parse(await readFile(new URL(import.meta.resolve("pyodide/pyodide-lock.json")), "utf8"));
  const log = console.log; // Pyodide's start-up chatter stays off stdout
  console.log = (...args) => console.error(...args);
  try {
    const pyodide = await loadPyodide(snapshotting({
      stdLibURL: stdlibPath,
      lockFileContents: { info: lock.info, packages: {} },
      env: { PYTHONHASHSEED: "0" },
    }));
    if (corePath) {
      pyodide.FS.writeFile(CORE, new Uint8Array(await readFile(corePath)));
      pyodide.runPython(WARM);
    }
    pyodide.runPython("import gc; gc.collect()");  // what is garbage now is freed, then zeroed
    zeroFree(pyodide._module);  // Emscripten's exports: Pyodide's private module, as snapshot.js
    await writeFile(outPath, snapshotOf(pyodide));
  } finally {
    console.log = log;
  }
}

main().catch((err) => {
  process.stderr.write(`snapshot failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
