// Shareable state. Every widget's parameters (those that differ from its defaults) and its step
// live in the page's URL as `<widget>.<param>=<value>`, so a reload or a shared link restores
// them; a change of parameters adds one history entry, a step replaces it, and an embedded widget
// only ever replaces (it must not fill the course page's history). Copy-link and copy-embed
// controls, and an embed page's height reports to the page that embeds it, live here too.
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});
  var root = document.documentElement;
  var embedded = root.hasAttribute("data-embed");
  var framed = (function () {
    try { return window.self !== window.top; } catch (e) { return true; }
  })();

  function encode(v) { return typeof v === "string" ? v : JSON.stringify(v); }
  function decode(text) {
    try { return JSON.parse(text); } catch (e) { return text; }  // plain strings stay strings
  }
  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : "";
  }

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

  // Bring a widget to what the URL says, over what storage kept (see below): new parameters
  // need Python; a step alone does not.
  function apply(w, saved) {
    var u = read(w), wanted = Object.assign({}, w.defaults, saved || {}, u.params);
    var differs = Object.keys(wanted).some(function (k) { return !same(wanted[k], w.state.params[k]); });
    var setStep = function () { if (w.view.setStep) w.view.setStep(u.step); };
    if (differs) w.update(wanted, setStep);
    else if (u.step !== w.step()) setStep();
  }

  function say(tools, text) { tools.querySelector('[data-role="copy-status"]').textContent = text; }

  function copy(tools, text, what) {
    var box = tools.querySelector("textarea");
    var fallback = function () {  // no clipboard on plain HTTP: let the reader copy by hand
      box.value = text;
      box.hidden = false;
      box.labels[0].hidden = false;
      box.focus();
      box.select();
      say(tools, "Select the text below and copy it (Ctrl+C or ⌘C).");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () {
        box.hidden = true;
        box.labels[0].hidden = true;
        say(tools, what + " copied to the clipboard.");
      }, fallback);
    } else {
      fallback();
    }
  }

  function linkFor(w) {
    var page = embedded ? meta("ae-page") : location.pathname;
    return new URL(page + query(entries(w)) + "#" + w.el.id, location.href).href;
  }

  function embedFor(w) {
    var src = new URL(meta("ae-base") + "embed/" + w.name + "/" + query(entries(w)), location.href).href;
    var height = Math.ceil(w.el.getBoundingClientRect().height) + 60;
    var title = (w.el.getAttribute("aria-label") || w.name).replace(/"/g, "&quot;");
    return '<iframe src="' + src.replace(/"/g, "%22") + '" title="' + title + '" width="100%" height="' +
      height + '" style="border:0;max-width:100%" loading="lazy" allow="clipboard-write"></iframe>';
  }

  function button(action, text) {
    var b = document.createElement("button");
    b.type = "button";
    b.setAttribute("data-action", action);
    b.textContent = text;
    return b;
  }

  function toolbar(w) {
    var tools = document.createElement("div");
    tools.className = "widget-tools";
    var link = button("copy-link", "Copy link"), embed = button("copy-embed", "Copy embed code");
    var status = document.createElement("span");
    status.setAttribute("data-role", "copy-status");
    status.setAttribute("aria-live", "polite");
    var label = document.createElement("label"), box = document.createElement("textarea");
    box.id = w.el.id + "-copy";
    box.readOnly = true;
    box.rows = 3;
    box.hidden = true;
    label.htmlFor = box.id;
    label.textContent = "Text to copy";
    label.hidden = true;
    link.addEventListener("click", function () { copy(tools, linkFor(w), "Link"); });
    embed.addEventListener("click", function () { copy(tools, embedFor(w), "Embed code"); });
    [link, embed, status, label, box].forEach(function (x) { tools.appendChild(x); });
    w.el.appendChild(tools);
  }

  function reportHeight() {
    var last = 0;
    var send = function () {
      var h = Math.ceil(document.documentElement.getBoundingClientRect().height);
      if (h === last) return;
      last = h;
      try { window.parent.postMessage({ type: "allreduce-explainer:height", height: h }, "*"); } catch (e) { /* no parent */ }
    };
    if (window.ResizeObserver) new ResizeObserver(send).observe(document.documentElement);
    window.addEventListener("load", send);
    send();
  }

  // Inputs that are costly to lose (a pasted log, a custom model) are the controls marked
  // data-store: kept in the browser's storage, restored on the next visit. A stored value that is
  // unreadable or from another version is dropped, with a notice; blocked storage only means
  // nothing is kept.
  var STORE_VERSION = 1;
  function storeKey(w, param) { return "allreduce-explainer:" + w.name + ":" + param; }
  function stored(w) {
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
  function keep(w) {
    w.el.querySelectorAll("[data-store][data-param]").forEach(function (c) {
      var param = c.getAttribute("data-param");
      try {
        localStorage.setItem(storeKey(w, param), JSON.stringify({ v: STORE_VERSION, value: w.state.params[param] }));
      } catch (e) { /* storage full or blocked: the value is simply not kept */ }
    });
  }

  AE.share = {
    attach: function (w) {
      if (!w.el.id) w.el.id = "w-" + w.name;
      toolbar(w);
      apply(w, stored(w));
    },
    record: function (w, push) {
      keep(w);
      record(w, push);
    },
  };
  window.addEventListener("popstate", function () {
    (AE.widgets || []).forEach(function (w) { apply(w, stored(w)); });
  });
  if (embedded && framed) reportHeight();
})();
