"""The question banks (exercises/export.py): every format's answers and tolerances are the core's.

The oracle is the core itself, recomputed here: the Problem `problem(kind, seed)` draws, and the
checker (`feedback`) that the page runs. A numerical answer exported must be accepted by the page's
checker, a value just outside its margin refused, and the margin equal to the core's relative
tolerance of the answer in the asked unit. GIFT and CSV are read back with parsers written here.
"""

from __future__ import annotations

import csv
import io
import math
import re
import zipfile
from xml.etree import ElementTree as ET

import pytest

from allreduce_explainer.errors import ParamError
from allreduce_explainer.exercises import KINDS, feedback, problem
from allreduce_explainer.exercises import export as ex
from allreduce_explainer.exercises.units import unit

SEED, COUNT = 11, 2
ALL = list(KINDS)
QTI = {"q": ex.QTI_NS}


def asked_value(p) -> float:
    """The answer in the unit asked: the core's base-unit answer over the unit's scale."""
    return p.answer / unit(p.unit).scale if p.unit else float(p.answer)


def expect(kind: str, seed: int):
    p = problem(kind, seed)
    shape = {"choice": "choice", "vector": "shortanswer"}.get(p.dimension, "numerical")
    return p, shape


def shown_prompt(p) -> str:
    """The prompt a platform shows: a choice's without the page's "Type a or b." (its choices are
    buttons there)."""
    typed = " Type " + " or ".join(p.choices) + "."
    return p.prompt.removesuffix(typed) if p.choices else p.prompt


def accepted(p, value: float) -> bool:
    return feedback(p, f"{value!r} {p.unit}".strip())["correct"]


@pytest.fixture(scope="module")
def bank():
    places = {
        k: ex.Place(f"Stage 1 · page of {k}", f"slug-{k}", f"objective of {k}") for k in ALL[:5]
    }
    return ex.questions(ALL, SEED, COUNT, places, "https://example.org/ae/")


def seeds():
    return [(k, s) for k in ALL for s in range(SEED, SEED + COUNT)]


def first_match(answers, typed: float):
    """A platform's verdict on a typed number: the first answer (lo, hi, fraction, message) whose
    range holds it, as Moodle's first-matching-answer strategy and QTI's conditions with
    continue="No" pick one; None when none does."""
    return next(((f, msg) for lo, hi, f, msg in answers if lo <= typed <= hi), None)


def check_misconceptions(p, answers):
    """Each misconception of the problem, typed in the asked unit, gets from the platform what
    the page's checker says of it: its message and no mark (or the mark, if the checker takes
    it as right)."""
    named = 0
    for wrong, _ in p.mistakes:
        typed = wrong / unit(p.unit).scale if p.unit else float(wrong)
        verdict = feedback(p, f"{typed!r} {p.unit}".strip())
        got = first_match(answers, typed)
        if verdict["correct"]:
            assert got is not None and got[0] == 100
        else:
            assert got == (0, verdict["message"]), (p.prompt[:40], typed)
            named += 1
    return named


def html_text(html: str) -> str:
    return ET.fromstring(f"<x>{html}</x>").findtext("p")


def check_numeric(kind, seed, value, margin):
    """The exported answer is the site's, rounded as its worked answer shows it (3 significant
    figures; exact when the checker is), and the platform's range around it holds every answer
    the page's checker takes (its tolerance of the exact answer) and no misconception."""
    p = problem(kind, seed)
    want = asked_value(p)
    assert value == (float(f"{want:.3g}") if p.tolerance else want)
    assert accepted(p, value)  # the page's checker takes the exported answer
    wrong = [
        w / unit(p.unit).scale if p.unit else float(w)
        for w, _ in p.mistakes
        if not feedback(p, f"{(w / unit(p.unit).scale if p.unit else w)!r} {p.unit}".strip())[
            "correct"
        ]
    ]
    assert all(abs(w - value) > margin for w in wrong), (kind, seed, wrong)
    if p.tolerance == 0:
        assert margin == 0
        return
    site = (want - p.tolerance * abs(want), want + p.tolerance * abs(want))
    inside = [abs(e - value) <= margin * (1 + 1e-9) for e in site]
    # short of the site's range only where a misconception lies between
    nearest = min([abs(w - value) for w in wrong], default=math.inf)
    assert all(inside) or nearest <= max(abs(e - value) for e in site), (kind, seed)
    assert margin <= max(abs(e - value) for e in site) * (1 + 1e-9)  # nothing more


def test_moodle_takes_microseconds_typed_as_the_site_takes_them():
    """A time asked in s, typed as 630000 µs: Moodle divides the typed number by the unit's
    multiplier (the answer times it is the answer in that unit) and compares within the margin."""
    qs = ex.questions("ring_time", 0, 20)
    root = ET.fromstring(ex.export("moodle", qs))
    for q, item in zip(qs, [i for i in root.findall("question") if i.get("type") != "category"]):
        units = {
            u.findtext("unit_name"): float(u.findtext("multiplier")) for u in item.iter("unit")
        }
        a = item.find("answer")
        value, margin = float(a.findtext("text")), float(a.findtext("tolerance"))
        micro = q.exact * unit(q.problem.unit).scale * 1e6  # the exact answer in µs
        for name in ("µs", "μs", "us"):
            assert abs(micro / units[name] - value) <= margin, (q.ident, name)
            assert feedback(q.problem, f"{micro:.6g} {name}")["correct"]


def test_moodle_xml_answers_are_the_cores(bank):
    root = ET.fromstring(ex.export("moodle", bank))
    items = [q for q in root.findall("question") if q.get("type") != "category"]
    assert [q.findtext("idnumber") for q in items] == [f"{k}-{s}" for k, s in seeds()]
    named = 0
    for q, (kind, seed) in zip(items, seeds()):
        p, shape = expect(kind, seed)
        assert q.get("type") == {"choice": "multichoice"}.get(shape, shape)
        fb = q.findtext("generalfeedback/text")
        assert p.steps[0].split()[0] in fb and f"{kind}.seed={seed}" in fb
        if shape == "numerical":
            a, *wrong = q.findall("answer")
            assert a.get("fraction") == "100" and {w.get("fraction") for w in wrong} <= {"0"}
            check_numeric(kind, seed, float(a.findtext("text")), float(a.findtext("tolerance")))
            answers = []
            for w in [a, *wrong]:
                value, margin = float(w.findtext("text")), float(w.findtext("tolerance"))
                said = html_text(w.findtext("feedback/text"))
                answers.append((value - margin, value + margin, int(w.get("fraction")), said))
            named += check_misconceptions(p, answers)
            if p.unit:
                assert q.findtext("units/unit/unit_name") == p.unit
                assert q.findtext("units/unit/multiplier") == "1.0"
                value = float(a.findtext("text"))
                offered = set()
                for u in q.findall("units/unit"):  # the answer in each unit Moodle offers
                    typed = value * float(u.findtext("multiplier"))
                    name = u.findtext("unit_name")
                    offered.add(name)
                    assert feedback(p, f"{typed!r} {name}")["correct"], (kind, seed, name)
                # Moodle matches a unit's exact text: every spelling the site reads is listed
                if p.dimension == "time":
                    assert {"s", "ms", "µs", "μs", "us", "ns"} <= offered, offered
        elif shape == "choice":
            marks = {a.findtext("text"): a.get("fraction") for a in q.findall("answer")}
            assert marks == {c: "100" if c == p.answer else "0" for c in p.choices}
            said = {
                a.findtext("text"): html_text(a.findtext("feedback/text"))
                for a in q.findall("answer")
            }
            for bad, _ in p.mistakes:  # a named wrong choice gets the checker's message
                assert said[bad] == feedback(p, bad)["message"]
                named += 1
            assert "Type " not in q.findtext("questiontext/text")  # choices read as choices
        else:
            for a in q.findall("answer"):
                assert feedback(p, a.findtext("text"))["correct"]
    assert named > len(items) // 4  # the bank has misconceptions to carry
    placed = items[0].findtext("questiontext/text")
    assert "objective of " + ALL[0] in placed and "https://example.org/ae/slug-" in placed


def test_qti_zip_answers_are_the_cores(bank):
    z = zipfile.ZipFile(io.BytesIO(ex.export("qti", bank)))
    assert z.namelist() == ["imsmanifest.xml", "bank.xml"]
    manifest = ET.fromstring(z.read("imsmanifest.xml"))
    (res,) = manifest.iter(f"{{{ex.CC_NS}}}resource")
    assert res.get("type") == "imsqti_xmlv1p2" and res.get("href") == "bank.xml"
    root = ET.fromstring(z.read("bank.xml"))
    items = root.findall(".//q:item", QTI)
    assert [i.get("ident") for i in items] == [f"{k}-{s}" for k, s in seeds()]
    named = 0
    for item, (kind, seed) in zip(items, seeds()):
        p, shape = expect(kind, seed)
        meta = {
            f.findtext("q:fieldlabel", namespaces=QTI): f.findtext("q:fieldentry", namespaces=QTI)
            for f in item.findall(".//q:qtimetadatafield", QTI)
        }
        qtype = {"numerical": "numerical_question", "shortanswer": "short_answer_question"}
        assert meta["question_type"] == qtype.get(shape, "multiple_choice_question")
        conds = item.findall("q:resprocessing/q:respcondition", QTI)
        scored = [c for c in conds if c.find("q:setvar", QTI) is not None]
        assert [c.findtext("q:setvar", namespaces=QTI) for c in scored] == ["100"]
        var = scored[0].find("q:conditionvar", QTI)
        said = {
            fb.get("ident"): fb.findtext(".//q:mattext", namespaces=QTI)
            for fb in item.findall("q:itemfeedback", QTI)
        }
        wrong = conds[conds.index(scored[0]) + 1 :]  # after the right answer, in order
        assert all(c.get("continue") == "No" for c in [scored[0], *wrong])
        messages = [
            html_text(said[c.find("q:displayfeedback", QTI).get("linkrefid")]) for c in wrong
        ]
        if shape == "numerical":
            value = float(var.findtext("q:or/q:varequal", namespaces=QTI))
            lo = float(var.findtext("q:or/q:and/q:vargte", namespaces=QTI))
            hi = float(var.findtext("q:or/q:and/q:varlte", namespaces=QTI))
            check_numeric(kind, seed, value, (hi - lo) / 2)
            assert lo <= value <= hi
            answers = [(lo, hi, 100, None)]
            for c, message in zip(wrong, messages):  # not (below lo or above hi)
                outside = c.find("q:conditionvar/q:not/q:or", QTI)
                below = float(outside.findtext("q:varlt", namespaces=QTI))
                above = float(outside.findtext("q:vargt", namespaces=QTI))
                answers.append((below, above, 0, message))
            named += check_misconceptions(p, answers)
        elif shape == "choice":
            labels = {
                lab.get("ident"): lab.findtext(".//q:mattext", namespaces=QTI)
                for lab in item.findall(".//q:response_label", QTI)
            }
            assert sorted(html_text(t) for t in labels.values()) == sorted(p.choices)
            assert html_text(labels[var.findtext("q:varequal", namespaces=QTI)]) == p.answer
            for c, message in zip(wrong, messages):
                chosen = html_text(labels[c.findtext("q:conditionvar/q:varequal", namespaces=QTI)])
                assert message == feedback(p, chosen)["message"] != "Correct."
                named += 1
            assert len(wrong) == len(p.mistakes)
        else:
            for v in var.findall("q:varequal", QTI):
                assert feedback(p, v.text)["correct"]
        assert p.answer_text() in said["general_fb"].replace("&amp;", "&")
    assert named > len(items) // 4


# ---- GIFT, read back ---------------------------------------------------------------------------


def gift_split(text: str, sep: str) -> list[str]:
    """`text` cut at each unescaped `sep`."""
    out, cur, i = [], "", 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            cur += text[i : i + 2]
            i += 2
        elif text.startswith(sep, i):
            out.append(cur)
            cur, i = "", i + len(sep)
        else:
            cur += text[i]
            i += 1
    return out + [cur]


def gift_unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def parse_gift(text: str) -> list[dict]:
    """Each question's name, body, answer block and general feedback."""
    out = []
    for line in text.splitlines():
        if not line.startswith("::"):
            continue
        _, name, rest = gift_split(line, "::")[:3]
        body, answer = gift_split(rest, "{")
        answer, general = gift_split(answer.rstrip("}"), "####")
        out.append(
            {
                "name": gift_unescape(name),
                "body": gift_unescape(body),
                "answer": answer.strip(),
                "feedback": gift_unescape(general),
            }
        )
    return out


def test_gift_round_trips(bank):
    parsed = parse_gift(ex.export("gift", bank).decode("utf-8"))
    assert len(parsed) == len(bank)
    for q, got, (kind, seed) in zip(bank, parsed, seeds()):
        p, shape = expect(kind, seed)
        assert got["name"] == q.name
        assert got["body"].startswith(shown_prompt(p) + "\n")
        assert not p.choices or "Type " + " or ".join(p.choices) not in got["body"]
        assert got["feedback"].rstrip() == "\n".join([*p.steps, f"Answer: {p.answer_text()}"])
        if shape == "numerical":
            assert got["answer"].startswith("#=")
            right, *wrong = gift_split(got["answer"][2:], " =")
            value, margin = (float(x) for x in right.split(":"))
            check_numeric(kind, seed, value, margin)
            answers = [(value - margin, value + margin, 100, None)]
            for w in wrong:  # %0%value:margin#message
                assert w.startswith("%0%")
                number, message = gift_split(w[3:], "#")
                value, margin = (float(x) for x in number.split(":"))
                answers.append((value - margin, value + margin, 0, gift_unescape(message)))
            check_misconceptions(p, answers)
        elif shape == "choice":
            # every unescaped = or ~ starts an answer (in the text they are escaped)
            parts = re.findall(r"([=~])((?:\\.|[^=~\\])*)", got["answer"])
            marks = {gift_unescape(gift_split(t, "#")[0]).strip(): m for m, t in parts}
            assert marks == {c: "=" if c == p.answer else "~" for c in p.choices}
            said = {
                gift_unescape(gift_split(t, "#")[0]).strip(): gift_split(t, "#")[1:]
                for _, t in parts
            }
            for bad, _ in p.mistakes:
                assert gift_unescape(said[bad][0]).strip() == feedback(p, bad)["message"]
        else:
            for part in gift_split(got["answer"], " ="):
                assert feedback(p, gift_unescape(part.lstrip("=")))["correct"]


def test_csv_round_trips(bank):
    rows = list(csv.DictReader(io.StringIO(ex.export("csv", bank).decode("utf-8"))))
    assert tuple(rows[0]) == ex.CSV_COLUMNS
    named = 0
    for row, (kind, seed) in zip(rows, seeds(), strict=True):
        p, shape = expect(kind, seed)
        assert (row["kind"], int(row["seed"]), row["type"]) == (kind, seed, shape)
        assert row["question"].startswith(shown_prompt(p) + "\n")
        assert float(row["tolerance_relative"]) == p.tolerance
        assert row["unit"] == p.unit
        if shape == "numerical":
            check_numeric(kind, seed, float(row["answer"]), float(row["margin"]))
        else:
            assert feedback(p, row["answer"])["correct"]
            assert row["choices"].split("|") == (list(p.choices) or [""])
        assert f"exercise-{kind}.seed={seed}" in row["link"]
        for line in filter(None, row["mistakes"].split("\n")):  # "value: message"
            typed, message = line.split(": ", 1)
            verdict = feedback(p, f"{typed} {p.unit}".strip())
            assert verdict == {"correct": False, "message": message}, (kind, seed, typed)
            named += 1
    assert named > len(rows) // 4


def test_same_bank_same_bytes():
    """A zip's entries are dated, so the date is fixed: the build writes the same bytes."""
    for fmt in ex.FORMATS:
        assert ex.export(fmt, ex.questions(ALL[:3], 4, 2)) == ex.export(
            fmt, ex.questions(ALL[:3], 4, 2)
        )
    z = zipfile.ZipFile(io.BytesIO(ex.export("qti", ex.questions(ALL[:3], 4, 1))))
    assert {i.date_time for i in z.infolist()} == {ex.ZIP_TIME}


@pytest.mark.parametrize(
    "args, field",
    [
        (("nope", 0, 1), "kinds"),
        (("ring_time", -1, 1), "seed"),
        (("ring_time", 0, 0), "count"),
        (("ring_time", 0, ex.MAX_COUNT + 1), "count"),
    ],
)
def test_bad_input_names_the_field(args, field):

    with pytest.raises(ParamError) as e:
        ex.questions(*args)
    assert e.value.field == field
