// A stepper's diagram: draws the layout and one frame's arrows that Python computed
// (widgets/diagram.py). No geometry here: positions, paths and labels come from the state.
// how many GPU colours the stylesheet defines (--gpu-0 ...), from palette.py via the page
var COLOURS = Number(document.documentElement.dataset.gpuColours) || 1;
var NS = "http://www.w3.org/2000/svg";
var MIN_SCALE = 0.8;  // below this the labels get too small: the diagram scrolls instead

function s(tag, attrs, text) {
  var e = document.createElementNS(NS, tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function colour(i) { return i === null || i < 0 ? "currentColor" : "var(--gpu-" + (i % COLOURS) + ")"; }

// The layout, once per state: boxes, faint links, cards, nodes; an empty layer for the arrows.
function layout(svg, d) {
  svg.setAttribute("viewBox", "0 0 " + d.w + " " + d.h);
  // the page's first state gave the size too, and a size is the SVG's aspect ratio: keep both
  svg.setAttribute("width", d.w);
  svg.setAttribute("height", d.h);
  svg.style.minWidth = Math.round(d.w * MIN_SCALE) + "px";
  svg.style.width = d.w + "px";  // its natural size, shrunk to the column (CSS max-width)
  var title = s("title");
  var boxes = s("g", { class: "boxes" }), links = s("g", { class: "links" });
  d.boxes.forEach(function (b) {
    boxes.appendChild(s("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 8 }));
    boxes.appendChild(s("text", { x: b.x + 8, y: b.y + b.h - 8 }, b.label));  // under the arcs
  });
  d.links.forEach(function (p) { links.appendChild(s("path", { d: p })); });
  (d.captions || []).forEach(function (c) {
    boxes.appendChild(s("text", { class: "caption", x: c.x, y: c.y }, c.text));
  });
  (d.cards || []).forEach(function (c) {
    var card = s("rect", { class: "card", x: c.x - 11, y: c.y - 4, width: 22, height: 8, rx: 2 });
    card.appendChild(s("title", {}, "network card"));
    boxes.appendChild(card);
  });
  var arrows = s("g", { class: "arrows" }), nodes = s("g", { class: "nodes" });
  d.nodes.forEach(function (n, i) {
    var g = s("g", { class: "node", "data-gpu": n.gpu, "data-node": i, style: "--c: " + colour(n.gpu) });
    var r = d.switch_r, sw = n.gpu < 0 ? 2 * r : d.node[0], sh = n.gpu < 0 ? 2 * r : d.node[1];
    g.appendChild(s("rect", { x: n.x - sw / 2, y: n.y - sh / 2, width: sw, height: sh, rx: n.gpu < 0 ? r : 6 }));
    g.appendChild(s("text", { x: n.x, y: n.y + 4.5 }, n.label));
    nodes.appendChild(g);
  });
  svg.replaceChildren(title, boxes, links, arrows, nodes);
}

// One frame: its arrows, drawn in along their paths by CSS (not when the reader asks for less
// motion), and the nodes that send and receive marked (an arrow names its two nodes).
function frame(svg, f, k) {
  var layer = svg.querySelector(".arrows"), words = [];
  layer.replaceChildren();
  var sent = {}, got = {};
  f.arrows.forEach(function (a) {
    var g = s("g", { class: "arrow", "data-from": a[0], "data-to": a[1], style: "--c: " + colour(a[2]) });
    g.appendChild(s("path", { d: a[3], pathLength: 1 }));
    if (a[4]) g.appendChild(s("text", { x: a[5], y: a[6] + 4 }, a[4]));
    layer.appendChild(g);
    sent[a[7]] = got[a[8]] = true;
    words.push(name(a[0]) + " → " + name(a[1]) + (a[4] ? ": " + a[4] : ""));
  });
  svg.querySelectorAll(".node").forEach(function (n) {
    var i = n.getAttribute("data-node");
    n.classList.toggle("sending", !!sent[i]);
    n.classList.toggle("receiving", !!got[i]);
  });
  var what = words.length ? words.join("; ") : "no transfers";
  svg.setAttribute("aria-label", "Diagram, step " + k + ": " + what);
  svg.querySelector("title").textContent = "Step " + k + ": " + what;
}
function name(i) { return i < 0 ? "switch" : "GPU " + i; }

export const diagram = { layout: layout, frame: frame };
