// bundle: page  provides: AE.python AE.widgets  needs: AE.Python AE.Widget AE.onPage AE.startPage *
// Render every widget from its inline state at once, then boot Python in the background. The
// widgets are made again for each page navigate.js swaps in, and Python keeps running.
(function () {
  "use strict";
  var AE = window.AE;
  AE.python = new AE.Python();
  AE.onPage(function () {
    AE.widgets = [];
    document.querySelectorAll("[data-widget]").forEach(function (el) {
      AE.widgets.push(new AE.Widget(el));
    });
    AE.python.showStatus();
    AE.python.warm();
  });
  AE.startPage();
  AE.python.start();
})();
