// bundle: page  provides: AE.copyTools  uses: AE.meta AE.urlState
// Each widget's copy-link and copy-embed controls: a link to the widget as shown (urlstate.js),
// or an iframe of its embed page for a course page.
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});
  var embedded = document.documentElement.hasAttribute("data-embed");

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
    var page = embedded ? AE.meta("ae-page") : location.pathname;
    return new URL(page + AE.urlState.query(AE.urlState.entries(w)) + "#" + w.el.id, location.href).href;
  }

  function embedFor(w) {
    var query = AE.urlState.query(AE.urlState.entries(w));
    var src = new URL((AE.meta("ae-base") || "") + "embed/" + w.name + "/" + query, location.href).href;
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

  function attach(w) {
    if (!w.el.id) w.el.id = "w-" + w.name;
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

  AE.copyTools = { attach: attach };
})();
