// What bench/ and the tests measure and switch, inert on a reader's page: the test entry
// (testing.js, which bench/ and the browser tests add to a page before its scripts run) puts
// window.AE.bench there; the shipped bundles only ask whether it is.

// Whether the speed lever `name` ("coalesce", "layout-once", "patch-grid") is turned off.
export function leverOff(name) {
  var bench = window.AE && window.AE.bench;
  return Boolean(bench && bench.without.has(name));
}

// One interaction's timings (widget.js, stepper.js), kept only when a test entry listens.
export function timing(entry) {
  var bench = window.AE && window.AE.bench;
  if (bench) bench.timing(entry);
}
