// What the page's modules share: its <meta> settings, the hooks run on each page body, the
// Python client and the widgets drawn (set by start.js, or by the notebook's adapter), and how
// a Python worker starts.
import { protocol } from "./protocol.js";

export function meta(name) {
  var m = document.querySelector('meta[name="' + name + '"]');
  return m ? m.getAttribute("content") : null;
}

// What the page's scripts do to its body: once it is parsed (start.js), and again each time
// navigate.js swaps in another page's body; then "ae:page" on the document.
var hooks = [];
export function onPage(fn) { hooks.push(fn); }
export function startPage() {
  hooks.forEach(function (fn) { fn(); });
  document.dispatchEvent(new CustomEvent("ae:page"));
}

// The page's Python client (python.js's Python, or a notebook's kernel) and its widgets.
export var python = null;
export var widgets = [];
export function setPython(p) { python = p; }
export function setWidgets(list) { widgets = list; }

// A new worker, told to start Python; what it says is kept in `events` until someone listens.
// Throws if the browser cannot start a module worker here.
export function startWorker() {
  var base = new URL(meta("ae-base") || "./", location.href);
  var worker = new Worker(new URL("static/js/worker.js", base), { type: "module" });
  var started = { worker: worker, events: [] };
  worker.onmessage = function (e) { started.events.push({ type: "message", event: e }); };
  worker.onerror = function (e) {
    e.preventDefault();
    started.events.push({ type: "error", event: e });
  };
  worker.postMessage(protocol.init());
  return started;
}
