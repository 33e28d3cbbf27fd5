// Pre-compile Pyodide's standard library (or, given <in.zip>, any zip of Python sources, such as
// the core's) to bytecode, inside that very Pyodide, under Node.
// Usage: node buildtools/compile_stdlib.mjs <out.zip> [<in.zip>]
//
// Why: Pyodide ships python_stdlib.zip as .py sources, so every page load compiles each module
// that Python imports while it starts (and that the core imports) before anything runs. .pyc files
// are only valid for the exact interpreter that wrote them (magic number, bytecode), so they are
// written by the Pyodide the site ships, not by the build's CPython. The zip keeps the original's
// layout, with each `<module>.py` replaced by `<module>.pyc` (zipimport loads a .pyc without its source), stored
// uncompressed as the original is (the server compresses the transfer), with fixed timestamps so
// two builds write the same bytes. A core's modules are compiled without their docstrings and
// their tables of line numbers (asserts stay): the browser never reads them, and what it imports
// stays in the memory snapshot every page downloads (the line tables are a quarter of the core's
// bytecode). The worker answers an error with its type, never a traceback; a failure is
// reproduced, with its lines, by the same core under CPython.
import { loadPyodide } from "pyodide";
import { readFile, writeFile } from "node:fs/promises";

const COMPILE = `
import ast, io, marshal, sys, zipfile
from importlib.util import MAGIC_NUMBER

DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)

def is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str)

def without_docstrings(source):
    """The module's syntax tree without its docstrings (a pass where one was a body): docstrings are for the
    source's readers, and the browser's Python keeps every one it imports in memory (and so in
    the snapshot every page downloads). Asserts stay."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, DOCUMENTED) and node.body and is_docstring(node.body[0]):
            node.body = node.body[1:] or [ast.copy_location(ast.Pass(), node.body[0])]
    return tree

def without_lines(code):
    """The code object and those inside it without their line table (co_linetable): a traceback
    through them says no line."""
    consts = tuple(without_lines(c) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_linetable=b"", co_consts=consts)

def compile_zip(src=None):
    stdlib = src is None  # compiled as Pyodide ships it; a core's modules lose their docstrings
    if stdlib:  # the standard library, as this Pyodide found it
        tag = f"python{sys.version_info[0]}{sys.version_info[1]}.zip"
        src = next(p for p in sys.path if p.endswith(tag))
    out = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in sorted(zin.infolist(), key=lambda i: i.filename):
            data = zin.read(info)
            name = info.filename
            if name.endswith(".py"):
                # the file name zipimport would have given the module, for tracebacks
                tree = data if stdlib else without_docstrings(data)
                code = compile(tree, f"{src}/{name}", "exec", dont_inherit=True, optimize=0)
                code = code if stdlib else without_lines(code)
                # flags 0b01: a hash-based pyc that is never checked (there is no source to check)
                data = MAGIC_NUMBER + (1).to_bytes(4, "little") + bytes(8) + marshal.dumps(code)
                name += "c"
            entry = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
            entry.external_attr = info.external_attr
            zout.writestr(entry, data)
    return out.getvalue()

compile_zip(SOURCE)
`;

async function main() {
  const [outPath, inPath] = process.argv.slice(2);
  if (!outPath) throw new Error("usage: node buildtools/compile_stdlib.mjs <out.zip> [<in.zip>]");
  const log = console.log; // Pyodide's start-up chatter stays off stdout
  console.log = (...args) => console.error(...args);
  try {
    const pyodide = await loadPyodide();
    let source = "None";
    if (inPath) {
      pyodide.FS.writeFile("/tmp/in.zip", await readFile(inPath));
      source = '"/tmp/in.zip"';
    }
    const zip = pyodide.runPython(COMPILE.replace("SOURCE", source)).toJs();
    await writeFile(outPath, zip);
  } finally {
    console.log = log;
  }
}

main().catch((err) => {
  process.stderr.write(`compile_stdlib failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
