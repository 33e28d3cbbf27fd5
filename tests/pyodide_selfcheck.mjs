// Run allreduce_explainer.selfcheck under real Pyodide (Node), from the zip the site ships.
// Usage: node tests/pyodide_selfcheck.mjs <core.zip>
// Prints one JSON object {"python": sys.version, "selfcheck": run()} on stdout and nothing else;
// Pyodide's own output goes to stderr, so the caller can parse stdout as it is.
import { readFile } from "node:fs/promises";
import { loadPyodide } from "pyodide";

const toStderr = (msg) => process.stderr.write(msg + "\n");

async function main() {
  const zipPath = process.argv[2];
  if (!zipPath) throw new Error("usage: node tests/pyodide_selfcheck.mjs <core.zip>");
  const zip = new Uint8Array(await readFile(zipPath)); // Pyodide rejects a Node Buffer
  // Anything Pyodide logs with console.log while booting must not reach stdout.
  const log = console.log;
  console.log = (...args) => console.error(...args);
  let pyodide;
  try {
    pyodide = await loadPyodide({ stdout: toStderr, stderr: toStderr });
  } finally {
    console.log = log;
  }
  pyodide.unpackArchive(zip, "zip");
  const out = pyodide.runPython(`
import json, sys
from allreduce_explainer import selfcheck
json.dumps({"python": sys.version, "selfcheck": selfcheck.run()}, sort_keys=True)
`);
  process.stdout.write(out + "\n");
}

main().catch((err) => {
  process.stderr.write(`pyodide_selfcheck failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
