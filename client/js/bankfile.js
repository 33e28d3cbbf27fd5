// The teacher's sheet's question banks when the build had no site address: Python writes each
// bank (bridge call "bank_file") with links under the address this page was opened at; this
// only fetches the kinds' places, hands them over and offers Python's bytes as a download.
import { meta, onPage, python } from "./page.js";

function download(name, mime, base64) {
  var bytes = Uint8Array.from(atob(base64), function (c) { return c.charCodeAt(0); });
  var a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([bytes], { type: mime }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
}

export function bankFiles(root) {
  var buttons = root.querySelectorAll('[data-action="make-bank"]');
  if (!buttons.length) return;
  var site = new URL(meta("ae-base") || "../", location.href).href;
  var error = root.querySelector('[data-role="bank-error"]');
  root.querySelector('[data-role="bank-site"]').textContent = site;
  var places = fetch(new URL("banks/places.json", site)).then(function (r) {
    if (!r.ok) throw new Error("banks/places.json: HTTP " + r.status);
    return r.json();
  });
  function enable() {
    var ready = python && python.status === "ready";
    buttons.forEach(function (b) { b.disabled = !ready; });
    if (python && python.status === "failed") error.textContent = python.message;
  }
  document.addEventListener("ae:python", enable);
  enable();
  buttons.forEach(function (b) {
    b.addEventListener("click", function () {
      error.textContent = "";
      places.then(function (p) {
        return python.call("bank_file", { format: b.getAttribute("data-format"), site: site, places: p });
      }).then(function (r) {
        if (!r.response.ok) throw new Error(r.response.error.message);
        var s = r.response.state;
        download(s.file, s.mime, s.base64);
      }).catch(function (e) { error.textContent = "The bank could not be made: " + e.message; });
    });
  });
};
onPage(function () {
  var root = document.getElementById("question-banks");
  if (root) bankFiles(root);
});
