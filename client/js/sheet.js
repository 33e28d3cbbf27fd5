// The teacher's sheet view: the kinds ticked, the seed and whether the pages' questions go too
// are sent to Python, which draws the problems and their key; this view only lists them, keeps
// the link to the sheet, and prints. `solution=0` in the URL leaves the key out (graded work).
import { promptNodes, solutionsHidden } from "./exercise.js";
import { meta } from "./page.js";
import { urlState } from "./urlstate.js";

function item(tag, children) {
  var e = document.createElement(tag);
  children.forEach(function (c) { e.appendChild(c); });
  return e;
}
function text(tag, t, cls) {
  var e = document.createElement(tag);
  e.textContent = t;
  if (cls) e.className = cls;
  return e;
}

export function sheet(root, widget) {
  var q = function (sel) { return root.querySelector(sel); };
  var boxes = Array.prototype.slice.call(root.querySelectorAll('[data-role="kind-choice"]'));
  var base = meta("ae-base") || "../";
  var withQuestions = q('[data-role="questions-choice"]');
  if (solutionsHidden()) q('[data-role="key"]').remove();

  boxes.forEach(function (b) {
    b.addEventListener("change", function () {
      var kinds = widget.state.params.kinds.filter(function (k) { return k !== b.value; });
      if (b.checked) kinds.push(b.value);  // a kind ticked goes to the end of the sheet
      widget.update({ kinds: kinds });
    });
  });
  if (withQuestions) {
    withQuestions.addEventListener("change", function () {
      widget.update({ questions: withQuestions.checked });
    });
  }
  q('[data-action="reroll-sheet"]').addEventListener("click", function () {
    widget.update({ seed: Math.floor(Math.random() * 1e6) });  // a name for a sheet, not math
  });
  q('[data-action="print"]').addEventListener("click", function () { window.print(); });

  function link() {
    var a = q('[data-role="sheet-link"]'), entries = urlState.entries(widget);
    if (solutionsHidden()) entries.push(["solution", "0"]);
    a.href = location.pathname + urlState.query(entries);
    a.textContent = new URL(a.href, location.href).href;
  }

  return {
    render: function (s) {
      boxes.forEach(function (b) { b.checked = s.params.kinds.indexOf(b.value) >= 0; });
      if (withQuestions) withQuestions.checked = s.params.questions;
      q('[data-role="sheet-seed"]').textContent = String(s.params.seed);
      var problems = q('[data-role="problems"]'), answers = q('[data-role="answers"]');
      problems.replaceChildren.apply(problems, s.problems.map(function (p) {
        return item("li", promptNodes(p.prompt).concat([text("p", "Answer: ____________________", "sheet-answer-line")]));
      }));
      var asked = q('[data-role="questions"]'), start = String(s.problems.length + 1);
      q('[data-role="questions-part"]').hidden = !s.questions.length;
      asked.setAttribute("start", start);
      asked.replaceChildren.apply(asked, s.questions.map(function (x) {
        return item("li", [text("p", x.stage, "sheet-question-stage"), text("p", x.q),
          text("p", "Answer: ____________________", "sheet-answer-line")]);
      }));
      var said = q('[data-role="question-answers"]');
      if (said) {  // the key is gone under solution=0
        said.setAttribute("start", start);
        said.replaceChildren.apply(said, s.question_answers.map(function (x) {
          return item("li", [item("p", [text("strong", x.q)]), text("p", x.a)]);
        }));
      }
      if (answers) answers.replaceChildren.apply(answers, s.answers.map(function (a) {
        var open = document.createElement("a");
        open.href = base + "embed/exercise-" + a.kind + "/?exercise-" + a.kind + ".seed=" + a.seed;
        open.textContent = a.title + ", problem " + a.seed;
        var head = item("p", [text("strong", a.solution_answer), document.createTextNode(" "),
          item("span", [document.createTextNode("("), open, document.createTextNode(")")])]);
        head.lastChild.className = "sheet-open";
        var steps = item("ol", a.solution_steps.map(function (t) { return text("li", t); }));
        steps.className = "sheet-steps";
        return item("li", [head, steps]);
      }));
      if (urlState) link();
    },
  };
};
