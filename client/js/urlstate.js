// Shareable state in the URL. Every widget's parameters (those that differ from its defaults) and
// its step live in the page's URL as `<widget>.<param>=<value>`, so a reload or a shared link
// restores them; a change of parameters adds one history entry, a step replaces it, and an
// embedded widget only ever replaces (it must not fill the course page's history).
import { widgets } from "./page.js";
import { stored } from "./stored.js";

var embedded = document.documentElement.hasAttribute("data-embed");
var framed = (function () {
  try { return window.self !== window.top; } catch (e) { return true; }
})();

function encode(v) { return typeof v === "string" ? v : JSON.stringify(v); }
function decode(text) {
  try { return JSON.parse(text); } catch (e) { return text; }  // plain strings stay strings
}
function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

// This widget's entries: parameters that differ from the defaults, and the step if not 0.
function entries(w) {
  var out = [];
  Object.keys(w.state.params).sort().forEach(function (k) {
    if (w.el.querySelector('[data-store][data-param="' + k + '"]')) return;  // kept, not shared
    if (!same(w.state.params[k], w.defaults[k])) out.push([w.name + "." + k, encode(w.state.params[k])]);
  });
  if (w.step()) out.push([w.name + ".step", String(w.step())]);
  return out;
}

function read(w) {
  var params = {}, step = 0;
  new URLSearchParams(location.search).forEach(function (value, key) {
    if (key.indexOf(w.name + ".") !== 0) return;
    var name = key.slice(w.name.length + 1);
    if (name === "step") step = Math.max(0, parseInt(value, 10) || 0);
    else if (Object.prototype.hasOwnProperty.call(w.defaults, name)) params[name] = decode(value);
  });
  return { params: params, step: step };
}

// "?a=1&b=2" from [[a, 1], [b, 2]], or "" from none.
function query(list) {
  var q = new URLSearchParams();
  list.forEach(function (e) { q.append(e[0], e[1]); });
  var s = q.toString();
  return s ? "?" + s : "";
}

// The page's URL with this widget's entries replaced and the other widgets' kept.
function pageURL(w) {
  var kept = [];
  new URLSearchParams(location.search).forEach(function (value, key) {
    if (key.indexOf(w.name + ".") !== 0) kept.push([key, value]);
  });
  return location.pathname + query(kept.concat(entries(w))) + location.hash;
}

function record(w, push) {
  var url = pageURL(w);
  if (url === location.pathname + location.search + location.hash) return;
  try {
    if (push && !embedded && !framed) history.pushState(null, "", url);
    else history.replaceState(null, "", url);
  } catch (e) { /* a sandboxed frame may refuse: the state just stays out of the URL */ }
}

// Bring a widget to what the URL says, over `saved` (what storage kept, stored.js): new
// parameters need Python; a step alone does not.
function apply(w, saved) {
  var u = read(w), wanted = Object.assign({}, w.defaults, saved || {}, u.params);
  var differs = Object.keys(wanted).some(function (k) { return !same(wanted[k], w.state.params[k]); });
  var setStep = function () { if (w.view.setStep) w.view.setStep(u.step); };
  if (differs) w.update(wanted, setStep);
  else if (u.step !== w.step()) setStep();
}

export const urlState = { entries: entries, query: query, record: record, apply: apply };
window.addEventListener("popstate", function () {
  (widgets || []).forEach(function (w) { apply(w, stored.read(w)); });
});
