// Run allreduce_explainer.selfcheck under real Pyodide (Node), from the files a built site ships,
// started the two ways the page's worker starts it:
//   boot      Pyodide boots with the site's compiled standard library, the core's zip on sys.path;
//   snapshot  Pyodide is restored from the site's memory snapshot, with the empty stand-in for the
//             standard library; the real one is written only if Python asks for a module the
//             snapshot does not hold, and those requests are reported (so is the core's zip,
//             written only if Python imports a module of the core the snapshot does not hold).
// Usage: node tests/pyodide/pyodide_selfcheck.mjs <site> boot|snapshot
// Prints two lines of JSON on stdout and nothing else: {"python", "selfcheck"}, then the zips
// Python asked for ("stdlib", "core"); Pyodide's own output goes to stderr.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { loadPyodide } from "pyodide";
import { CORE, filesOnDemand, restoring } from "../../client/js/snapshot.js";

const toStderr = (msg) => process.stderr.write(msg + "\n");
const bytes = async (path) => new Uint8Array(await readFile(path)); // Pyodide rejects a Buffer

async function main() {
  const [site, mode] = process.argv.slice(2);
  if (!["boot", "snapshot"].includes(mode)) {
    throw new Error("usage: node tests/pyodide/pyodide_selfcheck.mjs <site> boot|snapshot");
  }
  // the build's manifest: its Python files by role, and the lock's info
  const build = JSON.parse(await readFile(join(site, "py/build.json"), "utf8"));
  let options = { stdout: toStderr, stderr: toStderr, lockFileContents: { info: build.lock, packages: {} } };
  if (mode === "snapshot") {
    options.stdLibURL = join(site, build.nostdlib);
    options = restoring(options, await bytes(join(site, build.snapshot)));
  } else {
    options.stdLibURL = join(site, build.stdlib);
  }
  // Anything Pyodide logs with console.log while booting must not reach stdout.
  const log = console.log;
  console.log = (...args) => console.error(...args);
  let pyodide;
  try {
    pyodide = await loadPyodide(options);
  } finally {
    console.log = log;
  }
  const asked = [];
  const core = await bytes(join(site, build.core));
  if (mode === "snapshot") {
    const zips = { stdlib: await bytes(join(site, build.stdlib)), core };
    filesOnDemand(pyodide, build.lock.python, (role) => {
      asked.push(role);
      return zips[role];
    });
  } else {
    pyodide.FS.writeFile(CORE, core);
  }
  const out = pyodide.runPython(`
import json, sys
if "${CORE}" not in sys.path:
    sys.path.insert(0, "${CORE}")
from allreduce_explainer import selfcheck
json.dumps({"python": sys.version, "selfcheck": selfcheck.run()}, sort_keys=True)
`);
  // Python's own JSON (JavaScript would print 14000000000.0 as an int), then the modules asked for
  process.stdout.write(out + "\n" + JSON.stringify(asked) + "\n");
}

main().catch((err) => {
  process.stderr.write(`pyodide_selfcheck failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
