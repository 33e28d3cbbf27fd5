// From one stage to another without leaving the document, so the reader's Python stays running:
// a new page would start its own worker and restore Python again. The pages a reader is likely to
// open next (the pager's previous and next, any link the pointer or focus rests on) are fetched
// in the background; a click on a link whose page has arrived swaps the page's body for the new
// one at once, in the click itself, and starts its widgets (onPage). Anything else (a page not
// fetched yet, a page with other scripts, a modified click, a frame, projector mode) is an
// ordinary navigation. Back and forward between swapped pages swap them back.
import { onPage, startPage } from "./page.js";

var root = document.documentElement;
var texts = {};  // page URL (no hash) -> its HTML once fetched, or null if it cannot be swapped in
var parsed = {};  // page URL -> its document, parsed ahead of the click (a swap uses it up)
var asked = {};
var framed = (function () {
  try { return window.self !== window.top; } catch (e) { return true; }
})();
// a frame, an embed, projector mode or an old browser: links load pages as any link does
var off = framed || root.hasAttribute("data-embed") || root.hasAttribute("data-present") ||
    !window.history || !window.DOMParser || !window.fetch;

function pageKey(href) {
  var u = new URL(href, location.href);
  u.hash = "";
  u.search = "";
  return u.href;
}
function scriptsOf(doc, address) {
  return Array.prototype.map.call(doc.querySelectorAll("script[src]"), function (s) {
    return new URL(s.getAttribute("src"), address).href;
  }).join(" ");
}
var SCRIPTS = scriptsOf(document, location.href);

function prefetch(href) {
  var key = pageKey(href);
  if (asked[key] || key === pageKey(location.href)) return;
  asked[key] = true;
  fetch(key, { credentials: "same-origin" })
    .then(function (r) { return r.ok ? r.text() : null; })
    .then(function (text) {
      texts[key] = text;
      setTimeout(function () { if (!parsed[key]) parsed[key] = parse(key); }, 0);  // off the click
    }, function () { asked[key] = false; });
}

// The new page, parsed, if it can replace this one in place: a live stage page of this site
// with exactly this page's scripts.
function parse(key) {
  if (!texts[key]) return null;
  var doc = new DOMParser().parseFromString(texts[key], "text/html");
  var html = doc.documentElement;
  if (!html.hasAttribute("data-python") || html.hasAttribute("data-embed")) return null;
  return scriptsOf(doc, key) === SCRIPTS ? doc : null;
}

function swap(doc, href) {
  document.dispatchEvent(new CustomEvent("ae:leave"));
  document.title = doc.title;
  ["description", "ae-page"].forEach(function (name) {
    var mine = document.querySelector('meta[name="' + name + '"]');
    var theirs = doc.querySelector('meta[name="' + name + '"]');
    if (mine && theirs) mine.setAttribute("content", theirs.getAttribute("content"));
  });
  document.body.replaceWith(document.adoptNode(doc.body));
  startPage();
  var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (target) target.scrollIntoView();
  else window.scrollTo(0, 0);
  var h1 = document.querySelector("main h1");
  if (h1) {  // where a screen reader or the keyboard continues from, as after a page load
    h1.setAttribute("tabindex", "-1");
    h1.focus({ preventScroll: true });
  }
  watchLinks();
}

function onClick(e) {
  var a = e.target.closest && e.target.closest("a[href]");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey ||
      e.altKey || a.target || a.hasAttribute("download")) return;
  var url = new URL(a.href, location.href);
  if (url.origin !== location.origin || pageKey(url.href) === pageKey(location.href)) return;
  var key = pageKey(url.href), doc = parsed[key] || parse(key);
  delete parsed[key];
  if (!doc) return;  // an ordinary navigation
  e.preventDefault();
  history.pushState(null, "", url.href);
  swap(doc, url.href);
}

// Back or forward to a page this document swapped in (or started as): swap it back. The
// widgets' own history entries (urlstate.js) keep the page's address, and are theirs.
function onPopState(e) {
  if (pageKey(location.href) === currentKey) return;
  e.stopImmediatePropagation();
  var key = pageKey(location.href), href = location.href;
  var text = texts[key] ? Promise.resolve(texts[key])
    : fetch(key, { credentials: "same-origin" }).then(function (r) { return r.ok ? r.text() : null; });
  text.then(function (t) {
    if (location.href !== href) return;  // the reader has gone on meanwhile
    texts[key] = t;
    var doc = parse(key);
    if (doc) swap(doc, href);
    else location.reload();  // not a page to swap in: load it as any page
  }, function () { location.reload(); });
}

function watchLinks() {
  currentKey = pageKey(location.href);
  document.querySelectorAll('a[rel="next"], a[rel="prev"]').forEach(function (a) { prefetch(a.href); });
}
function onIntent(e) {
  var a = e.target.closest && e.target.closest("a[href]");
  if (!a) return;
  var url = new URL(a.href, location.href);
  if (url.origin === location.origin && /(\/|\.html)$/.test(url.pathname)) prefetch(url.href);
}

if (!off) {
  document.addEventListener("click", onClick);
  document.addEventListener("pointerover", onIntent, { passive: true });
  document.addEventListener("focusin", onIntent);
  window.addEventListener("popstate", onPopState, true);
  // the pager's pages are fetched once Python has started, not competing with it for the network
  document.addEventListener("ae:python", function first(ev) {
    if (ev.detail.status === "loading") return;
    document.removeEventListener("ae:python", first);
    watchLinks();
  });
}
export let currentKey = pageKey(location.href);  // the page shown
