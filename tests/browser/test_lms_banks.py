"""The teacher's sheet of a site built without its address: each question bank is made by the
page's Python when asked, with links under the address the page was opened at, and downloaded."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from allreduce_explainer.exercises.export import BANK_COUNT, BANK_FILES
from helpers import open_page, stages


def test_a_bank_made_in_the_browser_links_to_the_pages_own_site(page, server):
    open_page(page, server, "teachers-sheet", live=True)
    button = page.locator('[data-action="make-bank"][data-format="moodle"]')
    page.wait_for_function("() => !document.querySelector('[data-action=make-bank]').disabled")
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == BANK_FILES["moodle"][0]
    root = ET.parse(download.path()).getroot()
    items = [q for q in root.findall("question") if q.get("type") != "category"]
    kinds = [k for p in stages() for k in p.exercises]
    assert len(items) == len(kinds) * BANK_COUNT
    hrefs = [
        h for q in items for h in re.findall(r'href="([^"]+)"', q.findtext("questiontext/text"))
    ]
    assert len(hrefs) == len(items)
    for href in hrefs:  # the served site's own pages, each found there
        assert href.startswith(server + "/"), href
        assert page.request.get(href.replace("&amp;", "&")).ok
    assert page.locator('[data-role="bank-site"]').inner_text() == server + "/"
    page.watch.assert_clean()
