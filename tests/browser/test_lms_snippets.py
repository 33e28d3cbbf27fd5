"""The copy menu's snippets for authoring tools: each format from the build's templates, filled
with the widget's embed address as shown (its state in the URL), its title and aspect ratio."""

from __future__ import annotations

import json

from helpers import open_page
from sitebuild.embeds import SIZES, SNIPPETS

WIDGET, SLUG = "latency", "latency-ring-vs-tree"


def test_copy_for_each_format(page, server):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_page(page, server, SLUG, live=True)
    w = page.locator(f"[data-widget={WIDGET}]")
    w.locator("[data-param=gpus]").fill("128")
    w.locator("[data-param=gpus]").dispatch_event("change")
    page.wait_for_function(
        f"() => AE.widgets.find(x => x.name === '{WIDGET}').state.params.gpus === 128"
    )
    src = f"{server}/embed/{WIDGET}/?{WIDGET}.gpus=128"
    width, height = SIZES["chart"]
    for fmt in SNIPPETS:
        w.locator("[data-role=snippet-format]").select_option(fmt)
        w.locator("[data-action=copy-snippet]").click()
        text = page.evaluate("() => navigator.clipboard.readText()")
        assert src in text, fmt
        if fmt in ("html", "quarto", "revealjs"):
            assert f"aspect-ratio:{width}/{height}" in text and 'title="' in text
        if fmt == "html":
            assert text.startswith("<iframe") and 'loading="lazy"' in text
        if fmt in ("myst", "quarto", "revealjs"):
            # the static placeholder for print and PDF builds, which the site has
            assert f"{server}/embed/{WIDGET}/placeholder.png" in text
        if fmt == "revealjs":
            assert f'data-src="{src}"' in text and "data-preload" in text
        if fmt == "myst":
            assert text.startswith(":::{iframe} " + src)
        assert "{" + "src}" not in text and "{{" not in text
    assert page.request.get(f"{server}/embed/{WIDGET}/placeholder.png").ok
    page.watch.assert_clean()


def test_the_page_carries_the_builds_templates(page, server):
    open_page(page, server, SLUG)
    data = json.loads(page.locator("#ae-snippets").text_content())
    assert [f["key"] for f in data["formats"]] == list(SNIPPETS)
