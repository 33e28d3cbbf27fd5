// The page's bundle: every module of the page, imported in the order their page hooks run; then
// render every widget from its inline state at once and boot Python in the background. The
// widgets are made again for each page navigate.js swaps in, and Python keeps running.
import "./bankfile.js";
import "./download.js";
import { embedEvents } from "./embedevents.js";
import "./embedheight.js";
import "./logpanel.js";
import "./navigate.js";
import "./topofile.js";
import { onPage, python, setPython, setWidgets, startPage, widgets } from "./page.js";
import { present } from "./present.js";
import { Python } from "./python.js";
import { scorm } from "./scorm.js";
import { Widget } from "./widget.js";

setPython(new Python());
onPage(function () {
  var drawn = [];  // a widget made sees the ones made before it
  setWidgets(drawn);
  document.querySelectorAll("[data-widget]").forEach(function (el) { drawn.push(new Widget(el)); });
  python.showStatus();
  python.warm();
});
startPage();
python.start();
present();

// The page's one global, for what reads the page from outside its bundle: a course platform's
// or a test's script (the SCORM session, the embed's origins, Python and the widgets).
Object.defineProperties((window.AE = window.AE || {}), {
  python: { get: function () { return python; }, configurable: true },
  widgets: { get: function () { return widgets; }, configurable: true },
  scorm: { get: function () { return scorm; }, configurable: true },
  embedEvents: { value: embedEvents, configurable: true },
});
