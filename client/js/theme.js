// Runs in <head>, before the page paints: apply the reader's remembered theme, if any.
(function () {
  "use strict";
  var root = document.documentElement;
  var KEY = "allreduce-explainer:theme";
  function stored() {
    try { return localStorage.getItem(KEY); } catch (e) { return null; }  // storage may be blocked
  }
  var t = stored();
  if (t === "light" || t === "dark") root.setAttribute("data-theme", t);
  window.AETheme = {
    current: function () {
      var t = root.getAttribute("data-theme");
      if (t) return t;
      return window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
    },
    toggle: function () {
      var next = this.current() === "dark" ? "light" : "dark";
      root.setAttribute("data-theme", next);
      try { localStorage.setItem(KEY, next); } catch (e) { /* not remembered, still applied */ }
      document.dispatchEvent(new CustomEvent("ae:theme"));
    },
  };
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest('[data-action="theme"]');
    if (b) window.AETheme.toggle();
  });
})();
