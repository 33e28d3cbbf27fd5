// The stepper view: one generic view for every trace (naive, ring, tree ...). It only indexes
// into the frames Python computed; "Step k of K", buttons disabled at the ends, arrow keys/space.
import { diagram } from "./diagram.js";
import { leverOff, timing } from "./probe.js";

// how many GPU colours the stylesheet defines (--gpu-0 ...), from palette.py via the page
var COLOURS = Number(document.documentElement.dataset.gpuColours) || 1;
var PLAY_MS = 1100;

function el(tag, attrs, text) {
  var e = document.createElement(tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function reducedMotion() {
  return window.matchMedia && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// A number as the grid prints it: `digits` significant digits (none: all), in JavaScript's
// notation, with a true minus sign. Python's widgets/common.value_text follows the same rule
// for the narration; both are tested on tests/data/number_format.json.
export function formatValue(v, digits) {
  if (typeof v !== "number") return String(v);
  var text = digits ? String(Number(v.toPrecision(digits))) : String(v);
  return text.replace(/-/g, "−");
};

export function stepper(root, widget) {
  var k = 0, state = null, timer = null;
  var limit = null;  // the last step shown while a prediction waits (predict.js), else null
  var q = function (sel) { return root.querySelector(sel); };
  var grid = q('[data-role="grid"]'), counter = q('[data-role="step-counter"]');
  var narration = q('[data-role="narration"]'), verdict = q('[data-role="verdict"]');
  var check = q('[data-role="check"]');
  var phase = q('[data-role="phase"]'), rowsShow = q('[data-role="rows-show"]');
  var svg = q('svg[data-role="diagram"]'), toggle = q('[data-action="contributions"]');
  var letters = q('[data-role="letters"]'), shown = false;  // the contributions view
  var shape = null;  // the shape the grid's table was built for (shapeOf)
  if (toggle) toggle.addEventListener("click", function () {
    shown = !shown;
    toggle.setAttribute("aria-pressed", String(shown));
    draw();
  });
  var buttons = {};
  ["prev", "next", "reset", "play"].forEach(function (a) {
    buttons[a] = q('[data-action="' + a + '"]');
  });

  function last() { return state.frames.length - 1; }
  function reach() { return limit === null ? last() : Math.min(limit, last()); }
  function go(to) {
    var before = k, t0 = performance.now();
    k = Math.max(0, Math.min(reach(), to));
    if (k === reach()) stop();
    draw();
    timing({ widget: widget.name, kind: "step", render: performance.now() - t0 });
    if (k !== before) widget.onStep(k);
  }
  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    buttons.play.setAttribute("aria-pressed", "false");
    buttons.play.textContent = "Play";
  }
  function play() {
    if (timer) return stop();
    if (k === reach()) k = 0;
    if (reducedMotion()) return go(reach());  // no animation when the reader asks for less motion
    buttons.play.setAttribute("aria-pressed", "true");
    buttons.play.textContent = "Pause";
    timer = setInterval(function () { return root.isConnected ? go(k + 1) : stop(); }, PLAY_MS);
    go(k + 1);
  }
  buttons.prev.addEventListener("click", function () { stop(); go(k - 1); });
  buttons.next.addEventListener("click", function () { stop(); go(k + 1); });
  buttons.reset.addEventListener("click", function () { stop(); go(0); });
  buttons.play.addEventListener("click", play);
  root.addEventListener("keydown", function (e) {
    if (e.target.closest("input, select, textarea, [data-action=contributions]")) return;
    if (e.key === "ArrowRight" || e.key === " ") { e.preventDefault(); stop(); go(k + 1); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); stop(); go(k - 1); }
    else if (e.key === "Home") { e.preventDefault(); stop(); go(0); }
    else if (e.key === "End") { e.preventDefault(); stop(); go(last()); }
  });

  function cellMarks(frame) {
    // which cells were sent from and which received in this step
    var marks = {};
    frame.moves.forEach(function (m) {
      for (var j = m[2]; j < m[3]; j++) {
        marks[m[0] + ":" + j] = (marks[m[0] + ":" + j] || "") + " sent";
        marks[m[1] + ":" + j] = (marks[m[1] + ":" + j] || "") + " received";
      }
    });
    return marks;
  }

  // A cell's class and text at this step; the grid is built once per shape (its rows and
  // columns, the boxes of step 0, the contributions view) and each step after that only
  // rewrites the cells whose class or text changed: at 16 GPUs of 64 numbers, a step rebuilt
  // a thousand cells, and laid them all out again, to change a few dozen.
  function gpuCell(frame, marks, i, j) {
    return "cell chunk-" + (chunkIndex(j) % 2) + (marks[i + ":" + j] || "") +
      (frame.complete[i][j] ? " complete" : "");
  }
  function extraCell(x, marks, j) {
    return "cell" + (x.key !== undefined ? marks[x.key + ":" + j] || "" : "");
  }
  function extraText(x, v) { return v === null ? "" : formatValue(v, x.digits || state.digits); }
  function extras(frame) { return (frame.rows || []).concat(state.extra_rows || []); }
  function caption() { return "Buffers after step " + k + ": one row per GPU, one column per number"; }
  function cell(cls, text, symbol) {
    var td = el("td", { class: cls });
    td.appendChild(document.createTextNode(text));  // a text node even when empty: set() writes it
    if (symbol !== undefined) td.appendChild(el("span", { class: "holders", "data-role": "holders" }, symbol));
    return td;
  }
  function set(td, cls, text, symbol) {
    if (td.className !== cls) td.className = cls;
    if (td.firstChild.nodeValue !== text) td.firstChild.nodeValue = text;
    if (symbol !== undefined && td.lastChild.textContent !== symbol) td.lastChild.textContent = symbol;
  }
  function shapeOf(frame) {
    return JSON.stringify([frame.buffers.length, frame.buffers[0].length,
      extras(frame).map(function (x) { return [x.label, x.values.length, x.key !== undefined]; }),
      state.editable && k === 0, shown]);
  }

  function table(frame) {
    var t = el("table", { class: "buffers" });
    t.appendChild(el("caption", { class: "visually-hidden" }, caption()));
    var head = el("thead"), hr = el("tr");
    hr.appendChild(el("th", { scope: "col" }, "GPU"));
    state.chunks.forEach(function (c, i) {
      if (c[1] > c[0]) hr.appendChild(el("th", { scope: "colgroup", colspan: c[1] - c[0], class: "chunk-head chunk-" + (i % 2) },
        state.chunks.length > 1 ? "chunk " + i : "gradient"));
    });
    hr.appendChild(el("th", { scope: "col", class: "move-head" }, "this step"));
    head.appendChild(hr);
    t.appendChild(head);
    var body = el("tbody"), marks = cellMarks(frame), held = frame.holders && frame.holders.map(cells);
    var editable = state.editable && k === 0;
    var groups = {};  // first row of each group (across servers: a server) -> its label
    (state.row_groups || []).forEach(function (g) { groups[g[1]] = g[0]; });
    frame.buffers.forEach(function (row, i) {
      if (groups[i] !== undefined) {
        if (body.childNodes.length) t.appendChild(body);
        body = el("tbody", { class: "row-group" });
        var gr = el("tr", { class: "group-head" });
        gr.appendChild(el("th", { scope: "rowgroup", colspan: row.length + 2 }, groups[i]));
        body.appendChild(gr);
      }
      var tr = el("tr", { "data-gpu": i });
      var th = el("th", { scope: "row", class: "gpu", style: "--gpu: var(--gpu-" + (i % COLOURS) + ")" });
      th.appendChild(el("span", { class: "swatch", "aria-hidden": "true" }));
      th.appendChild(document.createTextNode("GPU " + i));
      tr.appendChild(th);
      row.forEach(function (v, j) {
        var cls = gpuCell(frame, marks, i, j);
        if (editable) {
          var td = el("td", { class: cls, "data-elem": j });
          // the number as the grid prints it, in a box as wide as it (the exact value in its
          // tooltip): the full digits of a bf16 number would not fit sixteen to a row
          var text = formatValue(v, state.digits);
          var inp = el("input", { type: "text", inputmode: "decimal", title: String(v),
            "aria-label": "GPU " + i + ", number " + j, size: text.length });
          inp.style.setProperty("--chars", text.length);
          inp.value = text;
          inp.addEventListener("change", function () { edit(i, j, inp.value); });
          td.appendChild(inp);
          return tr.appendChild(td);
        }
        var symbol = shown && frame.holders ? state.symbols[held[i][j]] : undefined;
        var c = cell(cls, formatValue(v, state.digits), symbol);
        c.setAttribute("data-elem", j);
        tr.appendChild(c);
      });
      tr.appendChild(cell("move", moveText(movesOf(frame, i))));
      body.appendChild(tr);
    });
    if (state.row_groups) { t.appendChild(body); body = el("tbody"); }
    // rows below the GPUs: this frame's (the switch, an optimizer state), then the state's
    extras(frame).forEach(function (x) {
      var tr = el("tr", { class: "extra" + (x.key !== undefined ? " node" : "") });
      tr.appendChild(el("th", { scope: "row" }, x.label));
      x.values.forEach(function (v, j) { tr.appendChild(cell(extraCell(x, marks, j), extraText(x, v))); });
      tr.appendChild(cell("move", x.move || ""));
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  }

  // The same grid at another step of the same shape: only what changed is written.
  function patch(frame) {
    var t = grid.querySelector("table.buffers"), marks = cellMarks(frame);
    var held = shown && frame.holders && frame.holders.map(cells);
    t.caption.textContent = caption();
    t.querySelectorAll("tr[data-gpu]").forEach(function (tr) {
      var i = Number(tr.getAttribute("data-gpu")), tds = tr.cells;
      frame.buffers[i].forEach(function (v, j) {
        set(tds[j + 1], gpuCell(frame, marks, i, j), formatValue(v, state.digits),
          held ? state.symbols[held[i][j]] : undefined);
      });
      set(tds[tds.length - 1], "move", moveText(movesOf(frame, i)));
    });
    var rows = t.querySelectorAll("tr.extra");
    extras(frame).forEach(function (x, r) {
      var tds = rows[r].cells;
      x.values.forEach(function (v, j) { set(tds[j + 1], extraCell(x, marks, j), extraText(x, v)); });
      set(tds[tds.length - 1], "move", x.move || "");
    });
  }

  function movesOf(frame, i) { return frame.moves.filter(function (m) { return m[0] === i; }); }

  // what a GPU sends this step: "chunk 2 → GPU 3", or "all chunks → switch" (moves to -1)
  function moveText(moves) {
    var to = function (d) { return d === -1 ? "switch" : "GPU " + d; };
    var chunks = state.chunks.filter(function (c) { return c[1] > c[0]; }).length;
    if (moves.length > 1 && moves.length === chunks &&
        moves.every(function (m) { return m[1] === moves[0][1]; })) {
      return "all chunks → " + to(moves[0][1]);
    }
    // one chunk to two children (a tree's broadcast): "chunk 2 → GPU 1 and GPU 5", once
    var parts = [], what = null;
    moves.forEach(function (m) {
      var chunk = state.chunks.length > 1 ? "chunk " + m[4] : "all";
      if (chunk === what) parts[parts.length - 1] += " and " + to(m[1]);
      else parts.push(chunk + " → " + to(m[1]));
      what = chunk;
    });
    return parts.join(", ");
  }

  function cells(runs) {  // widgets/diagram.py: a row of holders as [symbol, count, ...]
    var out = [];
    for (var r = 0; r < runs.length; r += 2) for (var c = 0; c < runs[r + 1]; c++) out.push(runs[r]);
    return out;
  }

  function chunkIndex(j) {
    for (var c = 0; c < state.chunks.length; c++) if (j < state.chunks[c][1]) return c;
    return 0;
  }

  function edit(i, j, text) {
    var values = state.inputs.map(function (r) { return r.slice(); });
    var trimmed = text.trim().replace("−", "-");
    var num = Number(trimmed);
    values[i][j] = trimmed === "" || !isFinite(num) ? text : num;  // Python says what is wrong
    widget.update({ values: values });
  }

  function checkTable() {
    var c = state.check, t = el("table", { class: "buffers check-table" });
    t.appendChild(el("caption", { class: "visually-hidden" }, "Every GPU's result against the target"));
    var hr = el("tr");
    hr.appendChild(el("th", { scope: "col" }, "check"));
    state.target.forEach(function (_, j) { hr.appendChild(el("th", { scope: "col" }, "#" + j)); });
    var head = el("thead"); head.appendChild(hr); t.appendChild(head);
    var body = el("tbody");
    function row(label, cells, cls) {
      var tr = el("tr", cls ? { class: cls } : {});
      tr.appendChild(el("th", { scope: "row" }, label));
      cells.forEach(function (x) { tr.appendChild(el("td", { class: "cell" }, x)); });
      body.appendChild(tr);
    }
    c.matches.forEach(function (m, i) {
      // a float that is off by some ulps is "≈", not wrong: the verdict and rows below say how far
      var miss = state.dtype === "int" ? "✗" : "≈";
      row("GPU " + i, m.map(function (ok) { return ok ? "✓" : miss; }), "marks");
    });
    row(c.target_label || "target", state.target.map(function (v) { return formatValue(v, state.digits); }), "extra");
    if (c.rows) {  // a widget that says itself what to show under the marks
      c.rows.forEach(function (x) {
        row(x.label, x.values.map(function (v) {
          return typeof v === "number" ? formatValue(v, state.digits) : String(v);
        }), "extra");
      });
    } else if (state.dtype !== "int") {
      row("sum in GPU order", c.in_order.map(function (v) { return formatValue(v, state.digits); }), "extra");
      row("ulp from target", c.ulps.map(String), "extra");
      row("ulp from GPU order", c.ulps_in_order.map(String), "extra");
    }
    t.appendChild(body);
    return t;
  }

  function draw() {
    var frame = state.frames[k], now = shapeOf(frame);
    if (now === shape && !leverOff("patch-grid")) patch(frame);
    else { grid.replaceChildren(table(frame)); shape = now; }
    if (svg && state.diagram) diagram.frame(svg, frame, k);
    if (letters) letters.hidden = !shown;
    counter.textContent = "Step " + k + " of " + last();
    narration.replaceChildren.apply(narration, frame.narration.map(function (line) { return el("p", {}, line); }));
    buttons.prev.disabled = k === 0;
    buttons.reset.disabled = k === 0;
    buttons.next.disabled = k >= reach();
    root.setAttribute("data-step", k);
    if (phase) phase.textContent = frame.label || frame.phase || "";
    if (rowsShow) rowsShow.textContent = frame.rows_show || "";
    if (verdict && state.check) {
      var done = k === last();
      verdict.textContent = done ? state.check.verdict : "Step to the end to see the check.";
      verdict.classList.toggle("ok", done && state.check.all_match);
      check.replaceChildren.apply(check, done ? [checkTable()] : []);
    }
  }

  return {
    render: function (s) {
      stop();
      state = s;
      k = 0;
      shape = null;  // a new state: the grid is built again
      if (svg && state.diagram) diagram.layout(svg, state.diagram);
      if (letters && state.letters) letters.textContent = state.letters;
      draw();
    },
    step: function () { return k; },
    setStep: function (to) {
      stop();
      k = Math.max(0, Math.min(reach(), to));
      draw();
    },
    // Steps after `to` out of reach (null: none): a prediction about them waits (predict.js).
    lock: function (to) {
      limit = to;
      if (!state) return;
      if (k > reach()) { stop(); k = reach(); }
      draw();
    },
  };
};
