// The notebook's entry (esbuild bundles it as an ES module, notebook/esm.py): draws a widget with
// the site's own views and asks the kernel, not a worker, for every new state. It holds no math:
// the kernel answers each change with the widget function the site's worker calls.
import { logPanel } from "./logpanel.js";
import { setPython, setWidgets } from "./page.js";
import { pageParts, Widget } from "./widget.js";

// What a site's page adds to a widget, which a notebook has no use for: a widget's URL and stored
// fields belong to the site's pages. A notebook's lab asks its own question in its cells: its
// widgets ask no prediction first (as the site with predict=0), so a stepper steps at once.
pageParts.copyTools = { attach() {} };
pageParts.urlState = { apply() {}, record() {} };
pageParts.stored = { read: () => ({}), keep() {} };
pageParts.predict = () => null;
setPython({ status: "ready" });
// The widgets drawn on this page, shared by every copy of this module the notebook loads (the log
// panel finds its linked widgets there), and the page's one global for tests and bench/.
const AE = (window.AE = window.AE || {});
AE.widgets = AE.widgets || [];
AE.Widget = AE.Widget || Widget;
setWidgets(AE.widgets);
// chart.js reads Plotly's address from the page's <meta>; here from the kernel (plotlyReady)
const metas = (AE.notebookMeta = AE.notebookMeta || {});
function plotlyMeta() {
  let m = document.querySelector('meta[name="ae-plotly"]');
  if (!m) {
    m = document.createElement("meta");
    m.name = "ae-plotly";
    document.head.appendChild(m);
  }
  return m;
}

// The notebook's theme: JupyterLab's body attribute, then the classes marimo and VS Code put on
// the page, then null (the widget follows the system's setting, as the site does untoggled).
function notebookTheme() {
  const b = document.body, h = document.documentElement;
  const jp = b.getAttribute("data-jp-theme-light");
  if (jp === "true" || jp === "false") return jp === "true" ? "light" : "dark";
  for (const e of [h, b]) {
    if (e.classList.contains("dark") || e.classList.contains("dark-theme") ||
        e.classList.contains("vscode-dark") || e.getAttribute("data-theme") === "dark") return "dark";
    if (e.classList.contains("light") || e.classList.contains("light-theme") ||
        e.classList.contains("vscode-light") || e.getAttribute("data-theme") === "light") return "light";
  }
  return null;
}

// Requests to the kernel, answered by id: the worker's protocol over the widget's comm.
let nextId = 0;
const waiting = new Map();  // id -> resolve
function ask(model, message) {
  const id = ++nextId;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    model.send({ ...message, id });
  });
}

// Plotly, once per page, as the kernel reads it from the wheel: chart.js loads it from the meta.
let plotly = null;
function plotlyReady(model) {
  if (!plotly) {
    plotly = ask(model, { type: "plotly" }).then((answer) => {
      metas["ae-plotly"] = URL.createObjectURL(new Blob([answer.bytes], { type: "text/javascript" }));
      plotlyMeta().content = metas["ae-plotly"];
    });
  }
  return plotly;
}

// The widget drawn afresh in `box`: from the partial's inline state, or from `state` (the one on
// screen when the theme changed).
function build(model, box, state) {
  const theme = notebookTheme();
  if (theme) box.setAttribute("data-theme", theme);
  else box.removeAttribute("data-theme");
  box.innerHTML = model.get("html");
  const root = box.querySelector("[data-widget]");
  if (state) root.querySelector('script[data-role="state"]').textContent = JSON.stringify(state);
  const widget = new Widget(root);
  AE.widgets.push(widget);
  if (root.querySelector('[data-role="log-file"]')) logPanel.attach(root);
  // The front end's copy of the parameters too, one trait each (marimo's reactive value and a
  // jslink follow them), saved once the view has drawn the answer, and only those that changed:
  // your cluster's megabyte log is not serialised on the change's path. A next call saves first,
  // so the kernel never gets an older copy after a newer call.
  let unsaved = null;
  const save = () => {
    if (!unsaved) return;
    const traits = model.get("_param_traits");
    let changed = false;
    for (const [param, value] of Object.entries(unsaved)) {
      const trait = traits[param];
      if (trait === undefined || JSON.stringify(model.get(trait)) === JSON.stringify(value)) continue;
      model.set(trait, value);
      changed = true;
    }
    if (changed) model.save_changes();
    unsaved = null;
  };
  widget.python = {
    status: "ready",
    call(fn, params) {
      save();
      const t0 = performance.now();
      return ask(model, { type: "call", params }).then((answer) => {
        if (answer.response.ok) {
          unsaved = { ...params, ...answer.response.state.params };
          setTimeout(save, 0);
        }
        return { response: answer.response, pythonMs: answer.pythonMs ?? performance.now() - t0 };
      });
    },
  };
  return widget;
}

// The styles of a widget's shadow root, made once per page: the site's sheet as it is; its :root
// rules (the variables and the colour scheme), which match nothing in a shadow tree, as the
// shadow host's, read back from the browser's own parse of the sheet; the box's own rules
// (esm.BOX); and Plotly's, which Plotly puts in the page's head, out of a shadow root's reach.
const sheets = new Map();  // text -> CSSStyleSheet
function sheet(text) {
  if (!sheets.has(text)) {
    const s = new CSSStyleSheet();
    s.replaceSync(text);
    sheets.set(text, s);
  }
  return sheets.get(text);
}
function hostRules(rules) {
  let out = "";
  for (const r of rules) {
    if (r.selectorText === ":root") out += `:host { ${r.style.cssText} }\n`;
    else if (r.media && r.cssRules) {
      const inner = hostRules(r.cssRules);
      if (inner) out += `@media ${r.media.mediaText} { ${inner} }\n`;
    }
  }
  return out;
}
function plotlyRules() {
  const global = document.getElementById("plotly.js-style-global");
  return global && global.sheet ? [...global.sheet.cssRules].map((r) => r.cssText).join("\n") : "";
}
function styles(model) {
  const site = sheet(model.get("_site_css"));
  return [site, sheet(model.get("_box_css")), sheet(hostRules(site.cssRules)), sheet(plotlyRules())];
}

async function render({ model, el }) {
  const host = document.createElement("div");
  host.className = "ae-notebook-host";
  el.appendChild(host);
  const shadow = host.attachShadow({ mode: "open" });
  const box = document.createElement("div");
  box.className = "ae-notebook";
  shadow.appendChild(box);
  let widget = null;
  // An answer's payload comes as bytes beside the message (the kernel's JSON as the bridge wrote
  // it; Plotly's script): a DataView in Jupyter, an ArrayBuffer or DataView in marimo.
  const onMessage = (message, buffers) => {
    if (message && waiting.has(message.id)) {
      const bytes = buffers && buffers[0];
      if (message.type === "plotly") message.bytes = bytes;
      else if (bytes) message.response = JSON.parse(new TextDecoder().decode(bytes));
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    } else if (message && message.type === "state" && widget) {
      // a state the kernel computed on its own (`w.gpus = 16` in a cell, or a linked widget's)
      widget.state = message.state;
      widget.render();
    }
  };
  model.on("msg:custom", onMessage);  // before the first request: Plotly's answer comes by it
  if (model.get("view") === "chart") await plotlyReady(model);
  shadow.adoptedStyleSheets = styles(model);  // after Plotly, whose rules are made as it loads
  widget = build(model, box);
  // The notebook's theme changed: the widget is drawn again, its charts in the new colours.
  let shown = notebookTheme();
  const forget = (w) => {
    const i = AE.widgets.indexOf(w);
    if (i >= 0) AE.widgets.splice(i, 1);
  };
  const observer = new MutationObserver(() => {
    if (notebookTheme() === shown) return;
    shown = notebookTheme();
    forget(widget);
    widget = build(model, box, widget.state);
  });
  for (const e of [document.body, document.documentElement]) {
    observer.observe(e, { attributes: true, attributeFilter: ["class", "data-jp-theme-light", "data-theme"] });
  }
  return () => {
    forget(widget);
    observer.disconnect();
    model.off("msg:custom", onMessage);
  };
}

export default { render };
