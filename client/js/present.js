// Projector mode: `present=1` in the URL shows one widget filling the screen, zoomed for a
// lecture hall: the widget named by the URL's `widget=<name>` (its data-widget name), else the
// page's first. The arrow keys step a stepper from anywhere on the page; Escape leaves.
export function present() {
  var q = new URLSearchParams(location.search);
  if (q.get("present") !== "1") return;
  var name = q.get("widget");
  var target = document.querySelector(name ? '[data-widget="' + CSS.escape(name) + '"]' : "[data-widget]");
  if (!target) return;  // nothing to present: the page stays as it is
  document.documentElement.setAttribute("data-present", "");
  target.classList.add("presented");
  // everything but the path from <body> down to the widget steps aside
  for (var n = target; n.parentElement && n !== document.body; n = n.parentElement) {
    Array.prototype.forEach.call(n.parentElement.children, function (c) {
      if (c !== n) c.classList.add("present-hidden");
    });
  }
  q.delete("present");
  q.delete("widget");
  var exit = document.createElement("a");
  exit.className = "present-exit";
  exit.href = location.pathname + (q.toString() ? "?" + q : "") + "#" + target.id;
  exit.textContent = "Leave projector mode (Esc)";
  target.parentElement.insertBefore(exit, target);

  target.tabIndex = -1;
  target.focus({ preventScroll: true });
  var keys = { ArrowRight: "next", ArrowLeft: "prev", " ": "next", Home: "reset" };
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { location.href = exit.href; return; }
    if (target.contains(e.target) || e.target.closest("input, select, textarea, button, a")) return;
    var button = keys[e.key] && target.querySelector('[data-action="' + keys[e.key] + '"]');
    if (button) {  // the widget's own keys (stepper.js) work when it has the focus
      e.preventDefault();
      if (!button.disabled) button.click();
    }
  });
}
