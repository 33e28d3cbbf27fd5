// Print, as JSON, formatValue(value, digits) for each case of a table of cases (by default
// tests/data/number_format.json), imported from the page's own stepper.js (an ES module, run here
// with a stand-in for the one `document` field it reads as it loads).
// Usage: node tests/pyodide/number_format.mjs [cases.json]
import { readFile } from "node:fs/promises";

const root = new URL("../../", import.meta.url);
const table = process.argv[2] ?? new URL("tests/data/number_format.json", root);
globalThis.document = { documentElement: { dataset: {} } };
const { formatValue } = await import(new URL("client/js/stepper.js", root));
const { cases } = JSON.parse(await readFile(table, "utf8"));
process.stdout.write(JSON.stringify(cases.map((c) => formatValue(c.value, c.digits))) + "\n");
