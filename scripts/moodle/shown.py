"""The answer the site shows for each numerical question of a Moodle XML bank, from the core:
the bank's idnumbers name each question's kind and seed (`kind-seed`), and the site's worked
answer is the problem's own `answer_text()`. bank.php holds what Moodle shows against it.

Usage: python scripts/moodle/shown.py BANK_XML > shown.json
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

from allreduce_explainer.exercises import problem


def shown(bank_xml: str) -> dict[str, str]:
    """idnumber -> the site's answer text, for every numerical question in the bank."""
    out = {}
    for q in ET.parse(bank_xml).getroot().iter("question"):
        if q.get("type") == "numerical":
            ident = q.findtext("idnumber")
            kind, seed = ident.rsplit("-", 1)
            out[ident] = problem(kind, int(seed)).answer_text()
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.split("\n\n")[-1])
    json.dump(shown(sys.argv[1]), sys.stdout, indent=1, ensure_ascii=False)
