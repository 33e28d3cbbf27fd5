// Python restored from a memory snapshot: the file's format, and the standard library fetched
// only when Python asks for a module the snapshot does not hold. Shared by the page's worker,
// buildtools/snapshot.mjs (which writes the file) and tests/pyodide/pyodide_selfcheck.mjs (which
// restores it under Node).
//
// Pyodide's snapshot API is private (the options `_makeSnapshot`, `_loadSnapshot`, the memory
// `_module.HEAP8`) and, in its maintainers' words, experimental (pyodide#4720; restore failures
// in pyodide#6254): every use of it is in this file, so that a new Pyodide touches only this file.
// The worker boots Python normally if a restore fails.

// loadPyodide's options for a Pyodide whose memory will be snapshotted (snapshotOf).
export function snapshotting(options) {
  return { ...options, _makeSnapshot: true };
}

// The packed snapshot of a Pyodide loaded with snapshotting(options), after its warm-up.
export function snapshotOf(pyodide) {
  return pack(pyodide.makeMemorySnapshot());
}

// loadPyodide's options to restore a packed snapshot: its bytes, or a promise of them.
export function restoring(options, packed) {
  const memory = Promise.resolve(packed).then((buffer) => unpack(buffer.buffer ?? buffer));
  memory.catch(() => {});  // its failure is loadPyodide's, reported where that is awaited
  return { ...options, _loadSnapshot: memory };
}

// The size of Pyodide's WebAssembly memory, in bytes.
export function memoryBytes(pyodide) {
  return pyodide._module.HEAP8.buffer.byteLength;
}

// A snapshot is mostly empty pages, so it is stored as its size, the numbers of the pages that
// hold anything and those pages: about half its size before compression, and so that much less
// for the browser to decompress.
const PAGE = 1 << 16;
const MAGIC = 0x31534541; // "AES1"

function pack(memory) {
  const pages = [];
  for (let p = 0; p * PAGE < memory.length; p++) {  // the last page may be shorter
    if (memory.subarray(p * PAGE, (p + 1) * PAGE).some((b) => b !== 0)) pages.push(p);
  }
  const head = new Uint32Array([MAGIC, memory.length, pages.length, ...pages]);
  const out = new Uint8Array(head.byteLength + pages.length * PAGE);
  out.set(new Uint8Array(head.buffer));
  pages.forEach((p, i) => out.set(memory.subarray(p * PAGE, (p + 1) * PAGE), head.byteLength + i * PAGE));
  return out;
}

// The length a packed snapshot declares in its header, or null if the bytes are not one: a file
// shorter than it says was cut short on the way.
export function declaredLength(buffer) {
  if (buffer.byteLength < 12) return null;
  const [magic, , count] = new Uint32Array(buffer, 0, 3);
  return magic === MAGIC ? 12 + 4 * count + count * PAGE : null;
}

function unpack(buffer) {
  const [magic, size, count] = buffer.byteLength >= 12 ? new Uint32Array(buffer, 0, 3) : [];
  if (magic !== MAGIC || buffer.byteLength !== 12 + 4 * count + count * PAGE) {
    throw new Error("not a packed snapshot");
  }
  const pages = new Uint32Array(buffer, 12, count);
  const data = new Uint8Array(buffer, 12 + 4 * count);
  const memory = new Uint8Array(size);
  pages.forEach((p, i) => {
    const length = Math.min(PAGE, size - p * PAGE);
    memory.set(data.subarray(i * PAGE, i * PAGE + length), p * PAGE);
  });
  return memory;
}

// Where Python imports the core from: a zip on sys.path, as the standard library is.
export const CORE = "/lib/allreduce_explainer.zip";

// Python restored from the snapshot holds every module the widgets use, so neither its standard
// library nor the core's zip is fetched while the reader waits: the empty zip Pyodide was given
// as its standard library (the build's "nostdlib") stands in for both.
// This finder, asked before Python's path finder for any module not loaded yet, calls `load`
// ("stdlib" or "core"; it returns the real zip's bytes) once per zip, the first time the module
// is one of that zip's, and writes them where the stand-in is, for the zip importer that knows
// their table of contents from the snapshot. `version` is Python's, as in "3.14.2".
export function filesOnDemand(pyodide, version, load) {
  const [major, minor] = version.split(".");
  const paths = { stdlib: `/lib/python${major}${minor}.zip`, core: CORE };
  pyodide.FS.writeFile(paths.core, pyodide.FS.readFile(paths.stdlib));
  pyodide.globals.set("_load_zip", (role) => pyodide.FS.writeFile(paths[role], load(role)));
  pyodide.runPython(`
import sys

class _ZipsOnDemand:
    pending = {"stdlib", "core"}

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        top = name.partition(".")[0]
        if top == "allreduce_explainer":
            role = "core"
        elif top in sys.stdlib_module_names or top in ("pyodide", "_pyodide"):
            role = "stdlib"
        else:
            return None
        if role in cls.pending:
            cls.pending.discard(role)
            if not cls.pending:
                sys.meta_path.remove(cls)
            _load_zip(role)
        return None  # the path finder finds it, in the zip now there

sys.meta_path.insert(
    [getattr(f, "__name__", "") for f in sys.meta_path].index("PathFinder"), _ZipsOnDemand
)
`);
}
