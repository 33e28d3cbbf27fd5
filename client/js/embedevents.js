// Events for the page that embeds a widget. An embed whose address names the origins it may
// talk to (`origin=https://course.example`, repeated for several) posts to its parent, to those
// origins only, messages shaped like xAPI statements (the actor is left to the host, which knows
// its learner): `answered` (result: success, response), `score` (result.score of the embed's
// exercises), `completed` (every exercise answered), `predicted` (a prediction answered or
// skipped: the verb is "answered", the activity the prediction; result: success and response,
// neither for a skip) and `state` (the widget's address, its state in the URL, after each change). It acts on one message, `set-state` ({widget?, params}),
// and only from its parent at one of those origins; without `origin` it posts and accepts
// nothing. The verdicts are Python's (exercise.js's ae:answered event).
import { widgets } from "./page.js";

// the origins this embed posts to (none: it posts nothing)
export const embedEvents = { origins: [] };

(function () {
  var PREFIX = "allreduce-explainer:";
  var VERBS = "http://adlnet.gov/expapi/verbs/";
  if (!document.documentElement.hasAttribute("data-embed") || window.parent === window) return;

  var origins = new URLSearchParams(location.search).getAll("origin").filter(function (o) {
    try { return new URL(o).origin === o; } catch (e) { return false; }  // an origin, exactly
  });
  embedEvents.origins = origins;
  if (!origins.length) return;

  function objectOf(w) {
    var title = w && w.el.querySelector('[data-role="title"]');
    return { objectType: "Activity", id: location.href,
      definition: { name: { "en-US": title ? title.textContent : (w ? w.name : document.title) } } };
  }

  // A prediction as its own activity: the widget's address with the prediction's id, named by
  // the question asked.
  function predictionOf(w, id) {
    var question = w && w.el.querySelector('[data-role="predict-question"]');
    var u = new URL(location.href);
    u.hash = "prediction=" + id;
    return { objectType: "Activity", id: u.href,
      definition: { name: { "en-US": question ? question.textContent : id },
        type: "http://adlnet.gov/expapi/activities/cmi.interaction" } };
  }

  // each message's type and the ADL verb of its statement
  var VERB = { answered: "answered", score: "scored", completed: "completed", state: "interacted",
    predicted: "answered" };

  function post(type, w, result, object) {
    var verb = VERB[type];
    var statement = { verb: { id: VERBS + verb, display: { "en-US": verb } }, object: object || objectOf(w),
      timestamp: new Date().toISOString() };
    if (result) statement.result = result;
    var message = { type: PREFIX + type, widget: w ? w.name : null, statement: statement };
    origins.forEach(function (o) {
      try { window.parent.postMessage(message, o); } catch (e) { /* no parent */ }
    });
  }

  function widgetNamed(name) {
    return (widgets || []).filter(function (w) { return !name || w.name === name; })[0] || null;
  }

  var right = {}, answered = {};
  document.addEventListener("ae:answered", function (e) {
    var d = e.detail, w = widgetNamed(d.widget);
    if (d.counts === false) return;  // Python read no answer (an empty box, 0,975): nothing to count
    answered[d.widget] = true;
    if (d.correct) right[d.widget] = true;
    post("answered", w, { success: d.correct, response: String(d.answer) });
    var total = document.querySelectorAll('[data-widget^="exercise-"]').length || 1;
    var k = Object.keys(right).length;
    post("score", w, { score: { raw: k, min: 0, max: total, scaled: k / total } });
    if (Object.keys(answered).length >= total) post("completed", w, { completion: true });
  });
  // a prediction answered (Python's verdict) or skipped (correct null: no result)
  document.addEventListener("ae:predicted", function (e) {
    var d = e.detail, w = widgetNamed(d.widget);
    var result = d.correct === null ? null : { success: d.correct, response: String(d.answer) };
    post("predicted", w, result, predictionOf(w, d.id));
  });
  // a widget records its state in its address after the change is on screen (widget.js record)
  document.addEventListener("ae:recorded", function (e) {
    var name = e.target.getAttribute && e.target.getAttribute("data-widget");
    post("state", widgetNamed(name));
  });

  window.addEventListener("message", function (e) {
    if (e.source !== window.parent || origins.indexOf(e.origin) < 0) return;  // not ours: ignored
    var m = e.data;
    if (!m || m.type !== PREFIX + "set-state" || typeof m.params !== "object" || !m.params) return;
    var w = widgetNamed(m.widget);
    if (w) w.update(m.params);  // Python checks the parameters, as for any change
  });
})();
