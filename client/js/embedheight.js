// An embed page in a frame reports its height to the page that embeds it, which may size the
// iframe to fit (a message of type "allreduce-explainer:height").
(function () {
  if (!document.documentElement.hasAttribute("data-embed")) return;
  try {
    if (window.self === window.top) return;
  } catch (e) { /* a cross-origin parent: framed */ }
  var last = 0;
  var send = function () {
    var h = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (h === last) return;
    last = h;
    try { window.parent.postMessage({ type: "allreduce-explainer:height", height: h }, "*"); } catch (e) { /* no parent */ }
  };
  if (window.ResizeObserver) new ResizeObserver(send).observe(document.documentElement);
  window.addEventListener("load", send);
  send();
})();
