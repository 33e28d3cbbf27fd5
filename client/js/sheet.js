// bundle: page  provides: AE.views.sheet  uses: AE.meta AE.urlState AE.promptNodes
// The teacher's sheet view: the kinds ticked and the seed go to Python, which draws the problems
// and their key; this view only lists them, keeps the link to the sheet, and prints.
(function () {
  "use strict";
  var AE = (window.AE = window.AE || {});
  AE.views = AE.views || {};

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

  AE.views.sheet = function (root, widget) {
    var q = function (sel) { return root.querySelector(sel); };
    var boxes = Array.prototype.slice.call(root.querySelectorAll('[data-role="kind-choice"]'));
    var base = AE.meta("ae-base") || "../";

    boxes.forEach(function (b) {
      b.addEventListener("change", function () {
        var kinds = widget.state.params.kinds.filter(function (k) { return k !== b.value; });
        if (b.checked) kinds.push(b.value);  // a kind ticked goes to the end of the sheet
        widget.update({ kinds: kinds });
      });
    });
    q('[data-action="reroll-sheet"]').addEventListener("click", function () {
      widget.update({ seed: Math.floor(Math.random() * 1e6) });  // a name for a sheet, not math
    });
    q('[data-action="print"]').addEventListener("click", function () { window.print(); });

    function link() {
      var a = q('[data-role="sheet-link"]');
      a.href = location.pathname + AE.urlState.query(AE.urlState.entries(widget));
      a.textContent = new URL(a.href, location.href).href;
    }

    return {
      render: function (s) {
        boxes.forEach(function (b) { b.checked = s.params.kinds.indexOf(b.value) >= 0; });
        q('[data-role="sheet-seed"]').textContent = String(s.params.seed);
        var problems = q('[data-role="problems"]'), answers = q('[data-role="answers"]');
        problems.replaceChildren.apply(problems, s.problems.map(function (p) {
          return item("li", AE.promptNodes(p.prompt).concat([text("p", "Answer: ____________________", "sheet-answer-line")]));
        }));
        answers.replaceChildren.apply(answers, s.answers.map(function (a) {
          var open = document.createElement("a");
          open.href = base + "embed/exercise-" + a.kind + "/?exercise-" + a.kind + ".seed=" + a.seed;
          open.textContent = "exercise " + a.kind + ", problem " + a.seed;
          var head = item("p", [text("strong", a.solution_answer), document.createTextNode(" "),
            item("span", [document.createTextNode("("), open, document.createTextNode(")")])]);
          head.lastChild.className = "sheet-open";
          var steps = item("ol", a.solution_steps.map(function (t) { return text("li", t); }));
          steps.className = "sheet-steps";
          return item("li", [head, steps]);
        }));
        if (AE.urlState) link();
      },
    };
  };
})();
