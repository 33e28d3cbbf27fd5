// Each widget's copy-link and copy-embed controls: a link to the widget as shown (urlstate.js),
// or an iframe of its embed page for a course page; and "Copy for", the same embed as a snippet
// for an authoring tool (MyST, Quarto, reveal.js, Canvas, Moodle), from the templates the build
// writes into the page (sitebuild/embeds.py, #ae-snippets): this file only fills them in.
import { meta } from "./page.js";
import { urlState } from "./urlstate.js";

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
  var page = embedded ? meta("ae-page") : location.pathname;
  return new URL(page + urlState.query(urlState.entries(w)) + "#" + w.el.id, location.href).href;
}

function embedFor(w) {
  var query = urlState.query(urlState.entries(w));
  var src = new URL((meta("ae-base") || "") + "embed/" + w.name + "/" + query, location.href).href;
  var height = Math.ceil(w.el.getBoundingClientRect().height) + 60;
  var title = (w.el.getAttribute("aria-label") || w.name).replace(/"/g, "&quot;");
  return '<iframe src="' + src.replace(/"/g, "%22") + '" title="' + title + '" width="100%" height="' +
    height + '" style="border:0;max-width:100%" loading="lazy" allow="clipboard-write"></iframe>';
}

var snippets = (function () {
  var el = document.getElementById("ae-snippets");
  try { return el ? JSON.parse(el.textContent) : null; } catch (e) { return null; }
})();

function escapeAttr(t) { return t.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;"); }

function snippetFor(w, key) {
  var fmt = snippets.formats.filter(function (f) { return f.key === key; })[0];
  var size = snippets.sizes[w.el.getAttribute("data-kind")] || [800, 600];
  var src = embedSrc(w);
  var fields = { src: src.replace(/"/g, "%22"), page: linkFor(w), title: escapeAttr(titleOf(w)),
    w: size[0], h: size[1], image: placeholderFor(w) };
  // Python's str.format fields: {name}, and {{ }} for a brace
  return fmt.template.replace(/\{\{|\}\}|\{(\w+)\}/g, function (m, name) {
    if (m === "{{") return "{";
    if (m === "}}") return "}";
    return String(fields[name]);
  });
}

function titleOf(w) {
  var by = w.el.getAttribute("aria-labelledby"), named = by && document.getElementById(by);
  return w.el.getAttribute("aria-label") || (named && named.textContent.trim()) || w.name;
}

// the embed's static picture in its default state (the build copies it there), for print builds
function placeholderFor(w) {
  var path = "embed/" + w.name + "/" + (snippets.placeholder || "placeholder.png");
  return new URL((meta("ae-base") || "") + path, location.href).href;
}

function embedSrc(w) {
  var query = urlState.query(urlState.entries(w));
  return new URL((meta("ae-base") || "") + "embed/" + w.name + "/" + query, location.href).href;
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
  var parts = [link, embed];
  if (snippets) {
    var pick = document.createElement("select"), forLabel = document.createElement("label");
    pick.id = w.el.id + "-snippet";
    pick.setAttribute("data-role", "snippet-format");
    forLabel.htmlFor = pick.id;
    forLabel.className = "visually-hidden";
    forLabel.textContent = "Snippet format";
    snippets.formats.forEach(function (f) {
      var o = document.createElement("option");
      o.value = f.key;
      o.textContent = f.label;
      pick.appendChild(o);
    });
    var snip = button("copy-snippet", "Copy for");
    snip.addEventListener("click", function () {
      copy(tools, snippetFor(w, pick.value), pick.options[pick.selectedIndex].text + " snippet");
    });
    parts.push(snip, forLabel, pick);
  }
  parts.concat([status, label, box]).forEach(function (x) { tools.appendChild(x); });
  w.el.appendChild(tools);
}

export const copyTools = { attach: attach };
