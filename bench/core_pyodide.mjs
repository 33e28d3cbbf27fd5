// Run bench/core.py's measure() under Pyodide in Node, from the zip the site ships.
// Usage: node bench/core_pyodide.mjs <core.zip> <bench/core.py> [repeats]
// Prints {"python": sys.version, "results": {case: median seconds}} on stdout and nothing else.
import { readFile } from "node:fs/promises";
import { loadPyodide } from "pyodide";

const toStderr = (msg) => process.stderr.write(msg + "\n");

async function main() {
  const [zipPath, benchPath, repeats = "5"] = process.argv.slice(2);
  if (!zipPath || !benchPath) {
    throw new Error("usage: node bench/core_pyodide.mjs <core.zip> <bench/core.py> [repeats]");
  }
  const zip = new Uint8Array(await readFile(zipPath)); // Pyodide rejects a Node Buffer
  const source = await readFile(benchPath, "utf8");
  const log = console.log; // keep anything Pyodide logs while booting off stdout
  console.log = (...args) => console.error(...args);
  let pyodide;
  try {
    pyodide = await loadPyodide({ stdout: toStderr, stderr: toStderr });
  } finally {
    console.log = log;
  }
  pyodide.unpackArchive(zip, "zip");
  // The same file CPython ran, imported as a module (not __main__) from the cwd on sys.path.
  pyodide.FS.writeFile("bench_core.py", source);
  const out = pyodide.runPython(`
import json, sys
import bench_core
json.dumps({"python": sys.version, "results": bench_core.measure(${Number(repeats) | 0 || 5})})
`);
  process.stdout.write(out + "\n");
}

main().catch((err) => {
  process.stderr.write(`core_pyodide failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
