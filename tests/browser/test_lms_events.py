"""An embed's events, from a cross-origin host page: the site on one port, a course page on
another (two origins). With `origin=` naming the host, the embed posts answered, score, completed
and state messages shaped like xAPI statements and obeys set-state; a host at an origin the embed
was not given gets nothing and is not obeyed."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest

from helpers import PY_READY, TIMEOUT_MS

KIND = "ring_time"
NAME = f"exercise-{KIND}"
PREFIX = "allreduce-explainer:"
HOST = """<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>Course page</title></head><body>
<iframe id="ae" title="an exercise" width="900" height="700"></iframe>
<script>
window.got = [];
window.addEventListener("message", function (e) {
  var f = document.getElementById("ae");
  if (e.source === f.contentWindow && e.data && e.data.statement) window.got.push(e.data);
});
document.getElementById("ae").src = decodeURIComponent(location.hash.slice(1));
</script></body></html>
"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """A course page at another origin than the site's."""
    root = tmp_path_factory.mktemp("host")
    (root / "host.html").write_text(HOST)
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def open_host(browser, server, host, origin: str, name: str = NAME):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    src = f"{server}/embed/{name}/index.html?origin={origin}"
    page.goto(f"{host}/host.html#{src}")
    page.frame_locator("#ae").locator(PY_READY).wait_for(state="attached")
    frame = next(f for f in page.frames if f.url.startswith(server))
    return ctx, page, frame


def widget_state(frame) -> dict:
    return frame.evaluate("AE.widgets[0].state")


def answer_right(frame) -> str:
    text = widget_state(frame)["solution_answer"]
    frame.locator("[data-role=answer]").fill(text)
    frame.locator("[data-action=check]").click()
    frame.locator("[data-role=feedback][data-correct=true]").wait_for()
    return text


def messages(page, kind: str) -> list[dict]:
    return [m for m in page.evaluate("window.got") if m["type"] == PREFIX + kind]


def test_events_reach_the_named_origin_and_set_state_is_obeyed(browser, server, host):
    assert server.split(":")[-1] != host.split(":")[-1]  # two origins
    ctx, page, frame = open_host(browser, server, host, host)
    text = answer_right(frame)
    page.wait_for_function(
        "t => ['answered', 'score', 'completed', 'state'].every("
        "k => window.got.some(m => m.type === 'allreduce-explainer:' + k))",
        arg=text,
        timeout=TIMEOUT_MS,
    )
    (answered,) = messages(page, "answered")
    st = answered["statement"]
    assert st["verb"]["id"] == "http://adlnet.gov/expapi/verbs/answered"
    assert st["result"] == {"success": True, "response": text}
    assert f"/embed/{NAME}/" in st["object"]["id"] and "actor" not in st
    assert st["object"]["definition"]["name"]["en-US"] == widget_state(frame)["title"]
    score = messages(page, "score")[-1]["statement"]["result"]["score"]
    assert score == {"raw": 1, "min": 0, "max": 1, "scaled": 1}
    assert messages(page, "completed")[0]["statement"]["verb"]["display"]["en-US"] == "completed"

    page.evaluate(
        "document.getElementById('ae').contentWindow.postMessage("
        "{type: 'allreduce-explainer:set-state', params: {seed: 7, answer: null}}, '*')"
    )
    frame.wait_for_function("() => AE.widgets[0].state.seed === 7", timeout=TIMEOUT_MS)
    page.wait_for_function(
        "window.got.some(m => m.type === 'allreduce-explainer:state'"
        " && m.statement.object.id.indexOf('exercise-ring_time.seed=7') >= 0)",
        timeout=TIMEOUT_MS,
    )
    ctx.close()


def test_a_host_at_an_origin_not_given_gets_nothing_and_is_ignored(browser, server, host):
    other = "http://127.0.0.1:9"  # the embed is told to talk to this origin only
    ctx, page, frame = open_host(browser, server, host, other)
    assert frame.evaluate("AE.embedEvents.origins") == [other]
    seed = widget_state(frame)["seed"]
    page.evaluate(
        "document.getElementById('ae').contentWindow.postMessage("
        "{type: 'allreduce-explainer:set-state', params: {seed: 4242}}, '*')"
    )
    answer_right(frame)  # a verdict the embed would report to its given origin
    page.wait_for_timeout(1500)
    assert widget_state(frame)["seed"] == seed
    assert page.evaluate("window.got") == []
    ctx.close()


def test_a_prediction_is_posted_as_answered_with_the_prediction_as_its_object(
    browser, server, host
):
    """predict.js's ae:predicted, as embedevents.js posts it: verb answered, the object the
    prediction (its id on the embed's address, named by its question); a skip has no result."""
    ctx, page, frame = open_host(browser, server, host, host, "latency")
    frame.locator("[data-role=predict-answer]").fill("30 MB")
    frame.locator("[data-action=predict]").click()
    frame.locator("[data-role=predict-verdict][data-correct]").wait_for()
    page.wait_for_function("window.got.some(m => m.type === 'allreduce-explainer:predicted')")
    (predicted,) = messages(page, "predicted")
    st = predicted["statement"]
    assert predicted["widget"] == "latency"
    assert st["verb"]["id"] == "http://adlnet.gov/expapi/verbs/answered"
    assert "/embed/latency/" in st["object"]["id"]
    assert st["object"]["id"].endswith("#prediction=latency-crossover")
    question = frame.locator("[data-role=predict-question]").inner_text()
    assert st["object"]["definition"]["name"]["en-US"] == question
    correct = frame.locator("[data-role=predict-verdict]").get_attribute("data-correct")
    assert st["result"] == {"success": correct == "true", "response": "30 MB"}
    ctx.close()
    ctx, page, frame = open_host(browser, server, host, host, "ddp_buckets")
    frame.locator("[data-action=predict-skip]").click()
    page.wait_for_function("window.got.some(m => m.type === 'allreduce-explainer:predicted')")
    (skipped,) = messages(page, "predicted")
    assert "result" not in skipped["statement"]
    ctx.close()
