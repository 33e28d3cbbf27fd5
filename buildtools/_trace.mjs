import { readFile } from "node:fs/promises";
import { loadPyodide } from "pyodide";
import { CORE, snapshotting } from "../client/js/snapshot.js";
const [stdlibPath, corePath] = process.argv.slice(2);
const lock = JSON.parse(await readFile(new URL(import.meta.resolve("pyodide/pyodide-lock.json")), "utf8"));
const log = console.log; console.log = (...a) => console.error(...a);
const pyodide = await loadPyodide(snapshotting({ stdLibURL: stdlibPath, lockFileContents: { info: lock.info, packages: {} }, env: { PYTHONHASHSEED: "0" } }));
pyodide.FS.writeFile(CORE, new Uint8Array(await readFile(corePath)));
log(pyodide.runPython(`
import sys, tracemalloc, json
tracemalloc.start(1)
sys.path.insert(0, "${CORE}")
from allreduce_explainer import bridge
from allreduce_explainer.widgets import WARM, WIDGETS
s1 = tracemalloc.take_snapshot()
for name, params in [(name, {}) for name in sorted(WIDGETS)] + WARM:
    assert json.loads(bridge.call(name, json.dumps(params)))["ok"], (name, params)
import gc; gc.collect()
s2 = tracemalloc.take_snapshot()
out = []
tot1 = sum(s.size for s in s1.statistics("filename"))
out.append(f"import total {tot1/1e3:.0f} kB")
for st in s1.statistics("filename")[:25]:
    out.append(f"  {st.size/1e3:8.0f} kB {st.count:7d} {st.traceback[0].filename}")
tot2 = sum(s.size for s in s2.statistics("filename"))
out.append(f"after calls total {tot2/1e3:.0f} kB")
for st in s2.compare_to(s1, "lineno")[:40]:
    out.append(f"  {st.size_diff/1e3:8.0f} kB {st.count_diff:7d} {st.traceback[0]}")
"\\n".join(out)
`));
