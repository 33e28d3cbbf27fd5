// SCORM 1.2: when the page runs inside a course platform that provides the SCORM API (an object
// `API` on a window up the parent chain, or on the opener's), it grades the page's exercises.
// - Each learner gets problems of their own: Python draws each exercise's seed from
//   cmi.core.student_id and the exercise's name (the bridge's "learner_seeds"), so the same
//   learner gets the same problems again; "New problem" is hidden, as the problem is graded.
// - The rule, shown on the page: the first answer checked to each problem counts;
//   cmi.core.score.raw = 100 × (problems whose first answer was right) / problems; later answers
//   still get Python's feedback. cmi.core.lesson_status is "completed" once every problem has
//   an answer. Neither ever drops below what the platform holds.
// - Resume: the problems, first verdicts and last answers are kept in cmi.suspend_data (compact
//   JSON, within SCORM 1.2's 4,096 characters) and restored when cmi.core.entry is "resume".
// - Each checked answer, and each prediction a widget posts (`ae:predicted`: {widget, id,
//   answer, correct}, correct null for a skip), is also a cmi.interactions.n entry; predictions
//   do not count to the score. cmi.core.session_time and cmi.core.exit are written at the end.
// The verdicts are Python's (exercise.js's ae:answered event); this file only counts them, and
// not one Python marks as no answer (`counts` false: an empty box, a decimal comma).
// Without an API it does nothing: the page behaves as the site does.
import { python, widgets } from "./page.js";

// this page's SCORM session, once it has looked for the platform's API
export let scorm = null;

(function () {
  var MAX_HOPS = 500;  // the search the SCORM 1.2 run-time specification gives
  var MAX_SUSPEND = 4096;  // cmi.suspend_data is a CMIString4096
  var MAX_RESPONSE = 255;  // cmi.interactions.n.student_response is a CMIString255
  var TYPES = { choice: "choice", vector: "fill-in" };  // a problem's dimension; else "numeric"

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
  // `saved.p`: exercise name -> [seed, first answer right (1) or not (0), last answer];
  // `interactions`: the next cmi.interactions index (the platform's _count at the start)
  var session = { api: api, started: false, finished: false, seeds: {}, replay: {},
    saved: { v: 1, p: {} }, kept: { score: -1, done: false }, interactions: 0 };
  scorm = session;
  if (!api) return;

  var page = location.pathname;  // the launched page: a page navigate.js swaps in is not this SCO's
  var names = Array.prototype.map.call(document.querySelectorAll('[data-widget^="exercise-"]'),
    function (el) { return el.getAttribute("data-widget"); });
  var total = names.length;

  function get(key) { return String(api.LMSGetValue(key) || ""); }
  function set(key, value) { api.LMSSetValue(key, String(value)); }
  function pad(n, width) { return String(n).padStart(width, "0"); }
  function widget(name) {
    return (widgets || []).filter(function (w) { return w.name === name; })[0] || null;
  }

  // cmi.core.session_time: a CMITimespan, HHHH:MM:SS.SS
  function timespan(ms) {
    var cs = Math.round(ms / 10), s = Math.floor(cs / 100);
    return pad(Math.floor(s / 3600), 4) + ":" + pad(Math.floor(s / 60) % 60, 2) + ":" +
      pad(s % 60, 2) + "." + pad(cs % 100, 2);
  }
  // cmi.interactions.n.time: a CMITime, the clock's HH:MM:SS
  function clock() {
    var d = new Date();
    return pad(d.getHours(), 2) + ":" + pad(d.getMinutes(), 2) + ":" + pad(d.getSeconds(), 2);
  }

  // The suspend data, within its 4,096 characters: should the last answers not fit (a page of
  // many long answers), the problems and first verdicts alone, which the score needs.
  function suspendData() {
    var text = JSON.stringify(session.saved);
    if (text.length <= MAX_SUSPEND) return text;
    var p = {};
    Object.keys(session.saved.p).forEach(function (n) { p[n] = session.saved.p[n].slice(0, 2).concat([null]); });
    return JSON.stringify({ v: 1, p: p });
  }

  function interaction(id, type, response, result) {
    var key = "cmi.interactions." + session.interactions++ + ".";
    set(key + "id", String(id).replace(/\s+/g, "_").slice(0, 255));
    set(key + "type", type);
    set(key + "student_response", String(response === null || response === undefined ? "" : response).slice(0, MAX_RESPONSE));
    set(key + "result", result);
    set(key + "time", clock());
  }

  function report() {
    var p = session.saved.p;
    var answered = names.filter(function (n) { return n in p; }).length;
    var right = names.filter(function (n) { return n in p && p[n][1] === 1; }).length;
    if (total > 0) {
      set("cmi.core.score.min", 0);
      set("cmi.core.score.max", 100);
      set("cmi.core.score.raw", Math.max(session.kept.score, Math.round((100 * right) / total)));
    }
    var done = session.kept.done || answered >= total;
    set("cmi.core.lesson_status", done ? "completed" : "incomplete");
    set("cmi.suspend_data", suspendData());
    api.LMSCommit("");
  }

  // What the platform holds from earlier sessions of this attempt
  function restore() {
    var status = get("cmi.core.lesson_status");
    var raw = get("cmi.core.score.raw");
    session.kept = { score: raw === "" || isNaN(Number(raw)) ? -1 : Number(raw),
      done: status === "completed" || status === "passed" };
    session.interactions = parseInt(get("cmi.interactions._count"), 10) || 0;
    if (get("cmi.core.entry") !== "resume") return;
    try {
      var saved = JSON.parse(get("cmi.suspend_data"));
      if (saved && saved.v === 1 && saved.p && typeof saved.p === "object") session.saved = saved;
    } catch (e) { /* no suspend data, or another package's: the attempt starts afresh */ }
  }

  // The rule the score follows, stated above the exercises in place of the site's words on
  // drawing new problems
  function showRule() {
    var first = document.querySelector('[data-widget^="exercise-"]');
    if (!first) return;
    var intro = document.querySelector('[data-role="exercises-intro"]');
    if (intro) intro.hidden = true;
    var note = document.createElement("p");
    note.className = "scorm-rule";
    note.setAttribute("data-role", "scorm-rule");
    note.innerHTML = "<strong>Graded in your course.</strong> These " + total + " problems are " +
      "drawn for you alone. Only the <em>first</em> answer you check to each problem counts: " +
      "your score is 100 × (problems whose first answer was right) ÷ " + total + ". Later " +
      "answers still get feedback but do not change your score. An empty box or text that is " +
      "not an answer gets a message and counts nothing. If you leave, your answers " +
      "and score are kept for when you come back.";
    first.parentNode.insertBefore(note, first);
  }

  // Each exercise at the learner's seed (kept from an earlier session, or Python's for this
  // learner), with the last answer checked again (not counted again: `replay`).
  function drawProblems() {
    names.forEach(function (name) {
      var w = widget(name);
      if (!w) return;
      w.el.querySelector('[data-action="new-problem"]').hidden = true;
      w.el.querySelector('[data-role="prompt"]').hidden = true;
      w.el.querySelector('[data-role="exercise-status"]').textContent = "Drawing your own problem…";
    });
    var student = get("cmi.core.student_id");
    python.call("learner_seeds", { student: student, names: names }).then(function (r) {
      if (!r.response.ok) throw new Error(r.response.error.message);
      names.forEach(function (name) {
        var w = widget(name), kept = session.saved.p[name];
        if (!w) return;
        var seed = kept ? kept[0] : r.response.state.seeds[name];
        var answer = kept && typeof kept[2] === "string" ? kept[2] : null;
        session.seeds[name] = seed;
        if (answer !== null) {
          session.replay[name] = answer;
          w.el.querySelector('[data-role="answer"]').value = answer;
        }
        w.update({ seed: seed, answer: answer }, function () {
          w.el.querySelector('[data-role="prompt"]').hidden = false;
        });
      });
    }).catch(function (e) {
      names.forEach(function (name) {
        var w = widget(name);
        if (w) w.el.querySelector('[data-role="exercise-status"]').textContent = "Your problem could not be drawn: " + e.message;
      });
    });
  }

  function start() {
    if (String(api.LMSInitialize("")) !== "true") return;
    session.started = true;
    session.t0 = Date.now();
    restore();
    if (total === 0) { report(); return; }  // a page with nothing to answer: read is done
    showRule();
    report();
  }

  function finish() {
    if (!session.started || session.finished) return;
    session.finished = true;
    set("cmi.core.session_time", timespan(Date.now() - session.t0));
    set("cmi.core.exit", "suspend");  // the attempt goes on where it stopped
    set("cmi.suspend_data", suspendData());
    api.LMSFinish("");
  }

  function live() { return session.started && !session.finished && location.pathname === page; }

  document.addEventListener("ae:answered", function (e) {
    var d = e.detail;
    if (!live() || session.seeds[d.widget] !== d.seed) return;  // not this learner's problem
    if (d.counts === false) return;  // Python read no answer (an empty box, 0,975): it has its message
    if (session.replay[d.widget] === d.answer) { delete session.replay[d.widget]; return; }
    var p = session.saved.p;
    if (d.widget in p) p[d.widget][2] = d.answer;  // the first answer's verdict stays
    else p[d.widget] = [d.seed, d.correct ? 1 : 0, d.answer];
    var w = widget(d.widget);
    var type = (w && TYPES[w.state.dimension]) || "numeric";
    interaction(d.widget + "." + d.seed, type, d.answer, d.correct ? "correct" : "wrong");
    report();
  });

  // A prediction a widget asks for before it reveals: recorded, never scored
  document.addEventListener("ae:predicted", function (e) {
    var d = e.detail || {};
    if (!live()) return;
    var result = d.correct === true ? "correct" : d.correct === false ? "wrong" : "neutral";
    var type = typeof d.answer === "number" ? "numeric" : "choice";
    interaction("predict." + d.widget + "." + d.id, type, d.answer, result);
    api.LMSCommit("");
  });

  document.addEventListener("ae:page", function once() {
    document.removeEventListener("ae:page", once);
    if (session.started && total > 0) drawProblems();
  });
  window.addEventListener("pagehide", finish);
  start();
})();
