// "Deeper" boxes print open: opened before printing, and closed again after the ones that were
// closed. (The print stylesheet shows them too, where the browser supports ::details-content.)
(function () {
  "use strict";
  var opened = [];
  window.addEventListener("beforeprint", function () {
    opened = Array.prototype.filter.call(
      document.querySelectorAll("details[data-role=deeper]:not([open])"),
      function (d) { d.open = true; return true; }
    );
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });
})();
