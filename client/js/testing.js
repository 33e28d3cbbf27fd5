// The test entry: bench/ and the browser tests add it to a page before the page's scripts run
// (Playwright's add_init_script, tests/conftest.py, bench/sitespeed/harness.py); the site never
// ships it (tests/site/test_bundle.py). `AE.bench.timings`: the latest interactions' timings, from
// the reader's change to the new state on screen, and its parts (bounded: a long session must not
// grow it); `AE.bench.without`: the speed levers bench/site.py turns off to measure each side by
// side in one page ("coalesce" in widget.js, "layout-once" in chart.js, "patch-grid" in
// stepper.js, read through probe.js). The worker's other bench hook is its "stats" message
// (protocol.js).
(function () {
  var AE = (window.AE = window.AE || {});
  AE.bench = {
    without: new Set(),
    timings: [],
    timing: function (entry) {
      AE.bench.timings.push(entry);
      if (AE.bench.timings.length > 256) AE.bench.timings.shift();
    },
  };
})();
