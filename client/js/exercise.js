// The exercise view: shows the problem Python drew, sends the typed answer to Python and shows
// its verdict; the hint and the worked solution are in the state already (JS never checks).
// URL: `<instance>.seed=N` names one exercise's problem; a bare `seed=N` names the problem of
// every exercise on the page that has no seed of its own (a teacher's link for a whole page);
// `solution=0` hides every worked solution on the page, for graded work (the hint stays), as does
// a SCORM package's copy of the page (`<meta name="ae-solutions" content="hidden">`, sitebuild/scorm.py).
import { meta, python } from "./page.js";

var NEW_SEED_RANGE = 1e9;  // any whole number in [0, MAX_SEED] is a problem; this is plenty

function el(tag, text) {
  var e = document.createElement(tag);
  e.textContent = text;
  return e;
}

// A problem's text as nodes: first and last lines as paragraphs, the lines between (a log's
// rows) preformatted; templates/widgets/exercise_prompt.html does the same.
export function promptNodes(text) {
  var lines = text.split("\n"), out = [el("p", lines[0])];
  if (lines.length > 2) {
    var pre = el("pre", lines.slice(1, -1).join("\n"));
    pre.tabIndex = 0;
    out.push(pre);
  }
  if (lines.length > 1) out.push(el("p", lines[lines.length - 1]));
  return out;
};

// True when the page's URL asks for no worked solutions (`solution=0`), or the page is a SCORM
// package's copy built without them; the sheet asks too.
export function solutionsHidden() {
  return new URLSearchParams(location.search).get("solution") === "0" ||
    (meta ? meta("ae-solutions") === "hidden" : false);
};

function pageSeed(name) {
  var q = new URLSearchParams(location.search);
  if (!q.has("seed") || q.has(name + ".seed")) return null;
  var v = q.get("seed");
  return /^\d+$/.test(v) ? Number(v) : v;  // Python says what is wrong with anything else
}

export function exercise(root, widget) {
  var q = function (sel) { return root.querySelector(sel); };
  var field = q('[data-role="answer"]'), feedback = q('[data-role="feedback"]');
  var status = q('[data-role="exercise-status"]');
  var panels = { hint: q('[data-role="hint"]'), solution: q('[data-role="solution"]') };
  var shown = null;  // the problem on screen: kind and seed
  var told = null;  // the last verdict announced (ae:answered), so a redraw does not repeat it
  if (solutionsHidden()) {
    q('[data-action="solution"]').hidden = true;
    panels.solution.remove();  // not merely closed: nothing on the page opens it
    panels.solution = document.createElement("div");  // renders go nowhere
    panels.solution.innerHTML = '<ol data-role="solution-steps"></ol><strong data-role="solution-answer"></strong>';
  }

  function needsPython(what) {
    var st = python && python.status;
    if (st === "loading") status.textContent = what + " needs Python, which is still loading: one moment…";
  }
  function reveal(which, open) {
    var b = q('[data-action="' + which + '"]');
    panels[which].hidden = !open;
    b.setAttribute("aria-expanded", String(open));
  }
  function check() {
    needsPython("Checking your answer");
    widget.update({ answer: field.value });
  }

  q('[data-action="check"]').addEventListener("click", check);
  field.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); check(); }
  });
  ["hint", "solution"].forEach(function (which) {
    q('[data-action="' + which + '"]').addEventListener("click", function () {
      reveal(which, panels[which].hidden);
    });
  });
  q('[data-action="new-problem"]').addEventListener("click", function () {
    needsPython("A new problem");
    var seed = Math.floor(Math.random() * NEW_SEED_RANGE);  // a name for a problem, not math
    widget.update({ seed: seed, answer: null });
  });

  var seed = pageSeed(widget.name);
  if (seed !== null) {
    // after the widget is built (urlstate.js applies the instance's own keys first)
    Promise.resolve().then(function () { widget.update({ seed: seed }, function () {}); });
  }

  return {
    render: function (s) {
      var problem = s.exercise + ":" + s.seed;
      if (shown !== null && shown !== problem) {
        reveal("hint", false);
        reveal("solution", false);
        if (s.params.answer === null || s.params.answer === undefined) field.value = "";
      }
      shown = problem;
      q('[data-role="seed"]').textContent = String(s.seed);
      q('[data-role="title"]').textContent = s.title;
      var prompt = q('[data-role="prompt"]');
      prompt.replaceChildren.apply(prompt, promptNodes(s.prompt));
      q('[data-role="tolerance"]').textContent = s.tolerance_text;
      panels.hint.textContent = s.hint;
      var steps = panels.solution.querySelector('[data-role="solution-steps"]');
      steps.replaceChildren.apply(steps, s.solution_steps.map(function (t) { return el("li", t); }));
      panels.solution.querySelector('[data-role="solution-answer"]').textContent = s.solution_answer;
      if (s.feedback) {
        feedback.textContent = s.feedback.message;
        feedback.setAttribute("data-correct", String(s.feedback.correct));
        var verdict = problem + ":" + s.params.answer;
        if (verdict !== told) {
          // Python's verdict, for the page's listeners (scorm.js, embedevents.js): never a check
          told = verdict;
          root.dispatchEvent(new CustomEvent("ae:answered", { bubbles: true, detail: {
            widget: widget.name, kind: s.exercise, seed: s.seed, answer: s.params.answer,
            correct: s.feedback.correct, counts: s.feedback.counts !== false,
            params: s.params } }));
        }
      } else {
        feedback.textContent = "";
        feedback.removeAttribute("data-correct");
      }
      status.textContent = "";
    },
  };
};
