// Inputs that are costly to lose (a pasted log, a custom model) are the controls marked
// data-store: kept in the browser's storage, restored on the next visit. A stored value that is
// unreadable or from another version is dropped, with a notice; blocked storage only means
// nothing is kept. A prediction answered or skipped is kept for the session (sessionStorage),
// by page, widget and prediction, so that coming back to the page does not ask it again.
var STORE_VERSION = 1;

function storeKey(w, param) { return "allreduce-explainer:" + w.name + ":" + param; }

// The widget's stored fields, by parameter.
function read(w) {
  var out = {}, dropped = false;
  w.el.querySelectorAll("[data-store][data-param]").forEach(function (c) {
    var key = storeKey(w, c.getAttribute("data-param")), text = null;
    try { text = localStorage.getItem(key); } catch (e) { return; }
    if (text === null) return;
    try {
      var item = JSON.parse(text);
      if (!item || item.v !== STORE_VERSION || !("value" in item)) throw new Error("old");
      out[c.getAttribute("data-param")] = item.value;
    } catch (e) {
      dropped = true;
      try { localStorage.removeItem(key); } catch (e2) { /* nothing kept anyway */ }
    }
  });
  if (dropped) w.showError("_", "A value saved by an earlier visit could not be read and was discarded.");
  return out;
}

// Written only when it changed since this page last wrote it: an opened log is a megabyte,
// and every change of the calculator's other controls would otherwise store it again.
var written = new WeakMap();  // control -> the value last stored from it
function keep(w) {
  w.el.querySelectorAll("[data-store][data-param]").forEach(function (c) {
    var param = c.getAttribute("data-param"), value = w.state.params[param];
    if (written.has(c) && written.get(c) === value) return;
    try {
      localStorage.setItem(storeKey(w, param), JSON.stringify({ v: STORE_VERSION, value: value }));
      written.set(c, value);
    } catch (e) { /* storage full or blocked: the value is simply not kept */ }
  });
}

function predictedKey(w, id) {
  return "allreduce-explainer:predicted:" + location.pathname + ":" + w.name + ":" + id;
}
function predicted(w, id) {
  try { return sessionStorage.getItem(predictedKey(w, id)) !== null; } catch (e) { return false; }
}
function keepPredicted(w, id) {
  try { sessionStorage.setItem(predictedKey(w, id), "1"); } catch (e) { /* blocked: asked again */ }
}

export const stored = { read: read, keep: keep, predicted: predicted, keepPredicted: keepPredicted };
