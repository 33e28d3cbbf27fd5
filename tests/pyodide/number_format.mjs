// Print, as JSON, AE.formatValue(value, digits) for each case of a table of cases (by default
// tests/data/number_format.json), with the page's own widget.js (a classic script, run here with
// a stand-in `window`).
// Usage: node tests/pyodide/number_format.mjs [cases.json]
import { readFile } from "node:fs/promises";
import vm from "node:vm";

const root = new URL("../../", import.meta.url);
const table = process.argv[2] ?? new URL("tests/data/number_format.json", root);
const window = {};
vm.runInNewContext(await readFile(new URL("client/js/widget.js", root), "utf8"), { window });
const { cases } = JSON.parse(await readFile(table, "utf8"));
process.stdout.write(JSON.stringify(cases.map((c) => window.AE.formatValue(c.value, c.digits))) + "\n");
