// Render every widget from its inline state at once, then boot Python in the background.
(function () {
  "use strict";
  var AE = window.AE;
  AE.python = new AE.Python();
  AE.widgets = [];
  document.querySelectorAll("[data-widget]").forEach(function (el) {
    AE.widgets.push(new AE.Widget(el));
  });
  AE.python.start();
})();
