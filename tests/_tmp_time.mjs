import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { loadPyodide } from "pyodide";
import { CORE, unpack } from "../templates/static/js/snapshot.mjs";
const site = process.argv[2];
const worker = await readFile(join(site, "static/js/worker.mjs"), "utf8");
const build = JSON.parse(worker.match(/^const BUILD = (\{.*\});$/m)[1]);
const bytes = async (p) => new Uint8Array(await readFile(p));
const py = await loadPyodide({ stdLibURL: join(site, build.stdlib), lockFileContents: { info: build.lock, packages: {} }, _loadSnapshot: unpack((await bytes(join(site, build.snapshot))).buffer) });
py.FS.writeFile(CORE, await bytes(join(site, build.core)));
const bridge = py.pyimport("allreduce_explainer.bridge");
const models = ["gpt2", "bert-base", "gpt2-xl", "mistral-7b", "llama3-8b", "llama3-70b", "llama3-405b", "custom"];
for (let rep = 0; rep < 4; rep++) {
  const row = [];
  for (const m of models) {
    const t0 = performance.now();
    bridge.call("cluster", JSON.stringify({ model: m }));
    row.push(`${m}=${(performance.now() - t0).toFixed(1)}`);
  }
  console.log(row.join(" "));
}
