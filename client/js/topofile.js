// Stage 10's topology widget: a topology file opened from disk is read here, in the browser
// (never uploaded), into the widget's `file` text box, which Python parses (widgets/nccltopo.py).
import { onPage, widgets } from "./page.js";

function attach(input) {
  var fig = input.closest("[data-widget]");
  input.addEventListener("change", function () {
    var file = input.files && input.files[0];
    if (!file) return;
    file.slice(0, (1 << 20) + 1).text().then(function (text) {
      var all = widgets || [];
      for (var i = 0; i < all.length; i++) if (all[i].el === fig) all[i].update({ file: text });
      input.value = "";
    });
  });
}

onPage(function () {
  document.querySelectorAll('[data-widget] [data-role="topology-file"]').forEach(attach);
});
