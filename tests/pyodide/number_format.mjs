// Print, as JSON, AE.formatValue(value, digits) for each case of a table of cases (by default
// tests/data/number_format.json), with the page's own stepper.js (a classic script, run here with
// a stand-in `window` and the one `document` field it reads as it loads).
// Usage: node tests/pyodide/number_format.mjs [cases.json]
import { readFile } from "node:fs/promises";
import vm from "node:vm";

const root = new URL("../../", import.meta.url);
const table = process.argv[2] ?? new URL("tests/data/number_format.json", root);
const window = {};
const document = { documentElement: { dataset: {} } };
vm.runInNewContext(await readFile(new URL("client/js/stepper.js", root), "utf8"), { window, document });
const { cases } = JSON.parse(await readFile(table, "utf8"));
process.stdout.write(JSON.stringify(cases.map((c) => window.AE.formatValue(c.value, c.digits))) + "\n");
