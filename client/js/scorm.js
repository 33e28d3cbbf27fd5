// bundle: page  provides: AE.scorm
// SCORM 1.2: when the page runs inside a course platform that provides the SCORM API (an object
// `API` on a window up the parent chain, or on the opener's), it reports the page's exercises:
// cmi.core.lesson_status ("incomplete", then "completed" once every exercise of the page has a
// checked answer) and cmi.core.score.raw (the share of them answered right at least once, 0 to
// 100). The verdicts are Python's (the ae:answered event of exercise.js); this file only counts
// them. Without an API it does nothing: the page behaves as the site does.
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});
  var MAX_HOPS = 500;  // the search the SCORM 1.2 run-time specification gives

  function lookUp(win) {
    for (var hops = 0; win && hops < MAX_HOPS; hops++) {
      try {
        if (win.API && typeof win.API.LMSInitialize === "function") return win.API;
      } catch (e) { return null; }  // a window of another origin: no API for us there
      if (win.parent === win) break;
      win = win.parent;
    }
    return null;
  }

  function findAPI() {
    return lookUp(window) || (window.opener ? lookUp(window.opener) : null);
  }

  var api = findAPI();
  var session = { api: api, started: false, finished: false, right: {}, answered: {} };
  AE.scorm = session;
  if (!api) return;

  var page = location.pathname;  // the launched page: a page navigate.js swaps in is not this SCO's
  var exercises = function () {
    return Array.prototype.map.call(document.querySelectorAll('[data-widget^="exercise-"]'),
      function (el) { return el.getAttribute("data-widget"); });
  };
  var total = exercises().length;

  function set(key, value) { api.LMSSetValue(key, String(value)); }

  function report() {
    var names = Object.keys(session.answered);
    var right = Object.keys(session.right).length;
    if (total > 0) {
      set("cmi.core.score.min", 0);
      set("cmi.core.score.max", 100);
      set("cmi.core.score.raw", Math.round((100 * right) / total));
    }
    set("cmi.core.lesson_status", names.length >= total ? "completed" : "incomplete");
    api.LMSCommit("");
  }

  function start() {
    if (String(api.LMSInitialize("")) !== "true") return;
    session.started = true;
    var status = String(api.LMSGetValue("cmi.core.lesson_status") || "");
    if (total === 0) { report(); return; }  // a page with nothing to answer: read is done
    if (status === "" || status === "not attempted") { set("cmi.core.lesson_status", "incomplete"); api.LMSCommit(""); }
  }

  function finish() {
    if (!session.started || session.finished) return;
    session.finished = true;
    api.LMSFinish("");
  }

  document.addEventListener("ae:answered", function (e) {
    if (!session.started || session.finished || location.pathname !== page) return;
    var d = e.detail;
    session.answered[d.widget] = true;
    if (d.correct) session.right[d.widget] = true;
    report();
  });
  window.addEventListener("pagehide", finish);
  start();
})();
