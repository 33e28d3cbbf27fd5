"""Interaction: p50/p95 of many changes of one control per page (each once the previous is
painted), a stepper's steps, the heaviest inputs (HEAVY), and the levers (LEVERS) measured on and
off alternately in one page."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

from allreduce_explainer.logs import explain

from .harness import (
    CHART_P95_MS,
    RECOMPUTE_P95_MS,
    ROOT,
    STEP_MS,
    Page,
    Session,
    ms,
    percentile,
    short,
    spread,
    verdict,
    within_ms,
)

# In the page: set the widget's `preset` parameters first (the heaviest input: one update, its
# timing kept), then change one control `n` times, waiting each time for the widget to settle and
# for its frame to be painted; returns the runtime's timing entries of each recompute. With
# `alternate` (a lever's name, widget.js's AE.bench.without), every other change is made without
# that lever, so both sides share the page, its caches and the machine's load.
CHANGE_JS = """async ({ widget, sel, values, n, preset, alternate }) => {
  const w = document.querySelector('[data-widget="' + widget + '"]');
  const c = w.querySelector(sel);
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const latest = () => {
    const last = AE.bench.timings[AE.bench.timings.length - 1];  // the page keeps the latest 256
    return last && last.kind === "recompute" ? last : null;
  };
  let taken = null;
  if (preset) {
    const before = latest();
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    AE.widgets.find((x) => x.el === w).update(preset);
    await settled;
    await frame();
    const t = latest();
    taken = t && t !== before ? t : { error: (w.querySelector("[data-error-for]:not(:empty)")
      || { textContent: "no answer" }).textContent };
  }
  const out = [];
  for (let i = 0; i < n; i++) {
    const without = Boolean(alternate) && i % 2 === 1;
    AE.bench.without = new Set(without ? [alternate] : []);
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    if (c.type === "checkbox") c.checked = Boolean(values[i % values.length]);
    else c.value = String(values[i % values.length]);
    c.dispatchEvent(new Event("change", { bubbles: true }));
    await settled;
    // the next change comes once this one is on screen (its frame, and the task after the
    // paint), as a reader's would: otherwise it would share the CPU with the previous paint
    await frame();
    const last = latest();
    out.push(last ? { ...last, without: without } : null);
  }
  AE.bench.without = new Set();
  return { timings: out, preset: taken };
}"""

# In the page: rapid input, as a reader holding an arrow key or typing a number: `size` changes
# `gap` ms apart, then the time from the last change to its state on screen (the widget settled
# and idle). Every other burst is made without the lever "coalesce".
BURST_JS = """async ({ widget, sel, values, bursts, size, gap, preset }) => {
  const w = document.querySelector('[data-widget="' + widget + '"]');
  const c = w.querySelector(sel);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  if (preset) {
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    AE.widgets.find((x) => x.el === w).update(preset);
    await settled;
  }
  const out = [];
  for (let b = 0; b < bursts; b++) {
    const without = b % 2 === 1;
    AE.bench.without = new Set(without ? ["coalesce"] : []);
    let fired = false, last = 0;
    const done = new Promise((resolve) => {
      const on = () => {
        if (!fired || w.hasAttribute("aria-busy")) return;
        w.removeEventListener("ae:settled", on);
        resolve(performance.now());
      };
      w.addEventListener("ae:settled", on);
    });
    for (let i = 0; i < size; i++) {
      c.value = String(values[i % values.length]);
      c.dispatchEvent(new Event("change", { bubbles: true }));
      last = performance.now();
      if (i < size - 1) await sleep(gap);
    }
    fired = true;
    const end = await done;
    out.push({ without: without, ms: end - last });
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    await sleep(100);
  }
  AE.bench.without = new Set();
  return out;
}"""

# A stepper's steps; `heavy`: first at the most GPUs and the longest vectors its controls allow.
# With `alternate` (a lever's name), every other step is made without that lever.
STEP_JS = """async ({ n, heavy, alternate }) => {
  const w = document.querySelector('[data-widget][data-kind="stepper"]');
  if (heavy) {
    const preset = {};
    w.querySelectorAll('input[type="number"][data-param]').forEach((c) => {
      const k = c.getAttribute("data-param");
      if (["gpus", "length", "servers"].includes(k) && c.max !== "") preset[k] = Number(c.max);
    });
    const settled = new Promise((r) => w.addEventListener("ae:settled", r, { once: true }));
    AE.widgets.find((x) => x.el === w).update(preset);
    await settled;
    const err = w.querySelector("[data-error-for]:not(:empty)");
    if (err) return { error: JSON.stringify(preset) + ": " + err.textContent };
    heavy = preset;
  }
  const next = w.querySelector('[data-action="next"]');
  const prev = w.querySelector('[data-action="prev"]');
  w.querySelector('[data-action="reset"]').click();
  const out = [];
  let forward = true;
  for (let i = 0; i < n; i++) {
    if (forward && next.disabled) forward = false;
    if (!forward && prev.disabled) forward = true;
    const without = Boolean(alternate) && i % 2 === 1;
    AE.bench.without = new Set(without ? [alternate] : []);
    (forward ? next : prev).click();
    out.push({ ms: AE.bench.timings[AE.bench.timings.length - 1].render, without: without });
    await new Promise((r) => requestAnimationFrame(() => r()));
  }
  AE.bench.without = new Set();
  return { steps: out, preset: heavy || null };
}"""

# The control to move on a page: a chart's where there is one, else a stepper's, else the first
# widget's; its first number field or menu, else a box to tick. Its attributes, to choose valid
# values, and a selector for it inside its widget.
CONTROL_JS = """() => {
  const ws = ["chart", "stepper"].flatMap((k) =>
    Array.from(document.querySelectorAll('[data-widget][data-kind="' + k + '"]')))
    .concat(Array.from(document.querySelectorAll("[data-widget]")));
  for (const w of ws) {
    const c = w.querySelector('input[type="number"][data-param], select[data-param]');
    if (!c) continue;
    return { widget: w.getAttribute("data-widget"), kind: w.getAttribute("data-kind"),
      param: c.getAttribute("data-param"),
      sel: '[data-param="' + c.getAttribute("data-param") + '"]',
      tag: c.tagName, type: c.type, value: c.value, min: c.min, max: c.max, step: c.step,
      options: c.tagName === "SELECT" ? Array.from(c.options, (o) => o.value) : [] };
  }
  for (const w of ws) {
    const boxes = Array.from(w.querySelectorAll('input[type="checkbox"][value]'));
    const c = boxes.find((b) => !b.checked) || boxes[0];
    if (!c) continue;
    return { widget: w.getAttribute("data-widget"), kind: w.getAttribute("data-kind"),
      param: c.value, sel: 'input[type="checkbox"][value="' + c.value + '"]', tag: c.tagName,
      type: "checkbox", checked: c.checked };
  }
  return null;
}"""


@dataclass(frozen=True)
class Scenario:
    """A page's heaviest input: `preset` set on `widget` first, then `param` changed
    through `values` (the GPU count between 1,024 and half of it, where the page allows 1,024)."""

    label: str
    widget: str
    param: str
    values: tuple
    preset: tuple = ()  # (name, value) pairs; "log_file": BIG_LOG stands for the 1 MB log

    def params(self) -> dict | None:
        return {k: big_log() if v is BIG_LOG else v for k, v in self.preset} or None


BIG_LOG = object()  # a scenario's stand-in for the log big_log() makes
LOG_SOURCE = ROOT / "tests" / "data" / "nccl-tests" / "nccl-tests-309-16xh100-2nodes-ib-ndr.txt"
GPUS = (1024, 512)
HEAVY = {
    "why-allreduce": [Scenario("1,024 GPUs", "scaling", "gpus", GPUS)],
    "what-each-gpu-sends": [Scenario("1,024 GPUs", "sends", "gpus", GPUS)],
    "latency-ring-vs-tree": [Scenario("1,024 GPUs", "latency", "gpus", GPUS)],
    "across-servers": [Scenario("64 servers (512 GPUs, its most)", "servers_compare", "servers",
                                (64, 32))],
    "ddp-buckets": [
        Scenario("Llama 3 405B, 1,024 GPUs", "ddp_buckets", "gpus", GPUS,
                 (("model", "llama3-405b"),)),
        Scenario("Llama 3 405B, bucket cap", "ddp_buckets", "bucket_cap_mb", (50, 25),
                 (("model", "llama3-405b"),)),
    ],
    "sharded-data-parallel": [
        Scenario("Llama 3 405B, 1,024 GPUs", "shard_memory", "gpus", GPUS,
                 (("model", "llama3-405b"),)),
    ],
    "in-network-reduction": [
        Scenario("1,024 GPUs (128 servers)", "innetwork_bandwidth", "servers", (128, 64)),
    ],
    "your-cluster": [
        Scenario("a 1 MB log, 1,024 GPUs", "cluster", "gpus", GPUS,
                 (("example", ""), ("log", ""), ("log_file", BIG_LOG))),
    ],
}  # fmt: skip


@functools.cache
def big_log() -> str:
    """A cited nccl-tests log repeated up to the calculator's limit (logs/explain.py): the largest
    log the page reads."""

    log = LOG_SOURCE.read_text()
    big = log
    while len((big + log).encode()) <= explain.MAX_LOG_BYTES:
        big += log
    return big


# Stage 7's lanes drawn as they were before: each shade's boxes as a trace with a gap after
# every box (four corners, then null), which Plotly splits into one piece per box and handles
# piece by piece (884 pieces a lane for Llama 3 405B), where widgets/buckets.py joins them into
# one gapless polygon along the lane's foot. Applied in the page to the state Python sent, on
# the changes made "without" the lever "joined-lanes".
LANES_JS = """() => {
  const w = document.querySelector('[data-widget="ddp_buckets"]');
  const wo = AE.widgets.find((x) => x.el === w);
  const render = wo.view.render;
  const gapped = (xs) => xs.flatMap((x, i) => (i % 4 === 3 ? [x, null] : [x]));
  const apart = (fig) => ({ ...fig, data: fig.data.map((t) => (t.mode !== "none" ? t
    : { ...t, x: gapped(t.x), y: gapped(t.y), customdata: gapped(t.customdata) })) });
  wo.view.render = (s) => {
    if (!AE.bench.without.has("joined-lanes")) return render(s);
    return render({ ...s, figure: apart(s.figure) });
  };
}"""

# The levers measured side by side (widget.js's AE.bench.without): each on and off, alternately,
# in one page. "layout-once": every chart drawn before any text or table is written, the theme's
# colours read once per theme, and unchanged summaries and tables not rewritten (chart.js);
# "coalesce": an answer that a newer change has made stale is not drawn (widget.js), measured on
# bursts of rapid input (BURST); "joined-lanes": stage 7's lanes as one gapless polygon per
# shade, against a box per gap-separated piece (LANES_JS); "patch-grid": a stepper's step
# rewriting only the cells that changed (stepper.js), against building its grid again, at the
# stepper's heaviest state.
STEPS = Scenario("steps at its most GPUs and longest vectors", "stepper", "next", ())
LEVERS = (
    ("layout-once", "ddp-buckets", HEAVY["ddp-buckets"][0]),
    ("layout-once", "why-allreduce", HEAVY["why-allreduce"][0]),
    ("layout-once", "latency-ring-vs-tree", HEAVY["latency-ring-vs-tree"][0]),
    ("coalesce", "ddp-buckets", HEAVY["ddp-buckets"][0]),
    ("coalesce", "latency-ring-vs-tree", HEAVY["latency-ring-vs-tree"][0]),
    ("joined-lanes", "ddp-buckets", HEAVY["ddp-buckets"][0]),
    ("patch-grid", "in-network-reduction", STEPS),
    ("patch-grid", "ring-reduce-scatter", STEPS),
)
LEVER_TEXT = {
    "layout-once": "every chart drawn before any text or table is written, the theme's colours "
    "read once per theme, unchanged summaries and tables not rewritten (chart.js)",
    "coalesce": "an answer a newer change has made stale is not drawn (widget.js)",
    "joined-lanes": "stage 7's lanes as one gapless polygon per shade, against boxes separated "
    "by gaps",
    "patch-grid": "a stepper's step rewrites only the cells that changed, against building the "
    "grid again (stepper.js)",
}
BURST = {"bursts": 12, "size": 5, "gap": 8}  # 5 changes 8 ms apart, 6 bursts each way


def control_values(c: dict, doubling: bool = False) -> list:
    """Valid values to cycle through, none equal to the next one, so each change recomputes:
    up to four steps from the default, or (`doubling`, for a field that refuses those, as GPU
    counts that must fill whole servers do) twice the default and back."""
    if c["type"] == "checkbox":
        return [not c["checked"], c["checked"]]
    if c["tag"] == "SELECT":
        opts = c["options"]
        i = opts.index(c["value"]) if c["value"] in opts else 0
        return opts[i + 1 :] + opts[: i + 1]
    v = float(c["value"])
    lo = float(c["min"]) if c["min"] else float("-inf")
    hi = float(c["max"]) if c["max"] else float("inf")
    if doubling:
        other = 2 * v if 2 * v <= hi else v / 2
        return [int(x) if float(x).is_integer() else x for x in (other, v)]
    step = float(c["step"]) if c["step"] not in ("", "any") else None
    up = [v + k * step for k in range(1, 5)] if step else [v * 1.25**k for k in range(1, 5)]
    down = [v - k * step for k in range(1, 5)] if step else [v / 1.25**k for k in range(1, 5)]
    candidates = [x for x in up if x <= hi] or [x for x in down if x >= lo]
    values = candidates + [v]
    return [int(x) if float(x).is_integer() else round(x, 6) for x in values]


def interaction_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Page | Control (input) | Changes | Total p50 / p95 (ms) | Python p50 / p95 "
        "| Render p50 / p95 | Target |",
        "|---|---|---:|---:|---:|---:|---|",
    ]

    def row(title: str, what: str, e: dict, limit: float) -> str:
        p95 = e["total"]["p95"]
        line = (
            f"| {title} | {what} | {e['changes']} | {ms(e['total']['p50'])} / {ms(p95)} "
            f"| {ms(e['python']['p50'])} / {ms(e['python']['p95'])} "
            f"| {ms(e['render']['p50'])} / {ms(e['render']['p95'])} "
            f"| p95 ≤ {limit} ms: {verdict(within_ms(p95, limit))} |"
        )
        return line + (f" {e['failed']} changes answered with an error" if e["failed"] else "")

    def step(title: str, what: str, s: dict, n: int) -> str:
        if s.get("error"):
            return f"| {title} | {what}: {s['error']} | | | | | FAIL |"
        return (
            f"| {title} | {what} | {n} | {ms(s['p50'])} / {ms(s['p95'])} | – "
            f"| {ms(s['p50'])} / {ms(s['p95'])} "
            f"| p95 ≤ {STEP_MS} ms: {verdict(within_ms(s['p95'], STEP_MS))} |"
        )

    for slug, e in r["interactions"].items():
        title = titles.get(slug, slug)
        if "error" in e:
            rows.append(f"| {title} | {e['error']} | | | | | FAIL |")
            continue
        limit = CHART_P95_MS if e["kind"] == "chart" else RECOMPUTE_P95_MS
        rows.append(row(title, f"{e['widget']}.{e['param']} ({e['kind']})", e, limit))
        for h in e.get("heavy", []):
            if "error" in h or (h["preset"] or {}).get("error"):
                why = h.get("error") or h["preset"]["error"]
                rows.append(f"| {title} | {h['label']}: {why} | | | | | FAIL |")
                continue
            rows.append(row(title, f"{h['widget']}.{h['param']}, {h['label']}", h, CHART_P95_MS))
        if "step" in e:
            rows.append(step(title, "a stepper step (no Python)", e["step"], e["changes"]))
        if "heavy_step" in e:
            preset = ", ".join(f"{k} {v}" for k, v in (e["heavy_step"].get("preset") or {}).items())
            rows.append(
                step(
                    title,
                    f"a stepper step at {preset or 'its most'}",
                    e["heavy_step"],
                    e["changes"],
                )
            )
    return rows


def page_results(e: dict) -> tuple[tuple[float | None, str], tuple[float | None, str] | None]:
    """A page's worst chart-change p95 and worst step p95 over its inputs, with the input."""
    charts = []
    if e.get("kind") == "chart":
        charts.append((e["total"]["p95"], f"{e['widget']}.{e['param']}"))
    for h in e.get("heavy", []):
        if "error" in h or (h["preset"] or {}).get("error"):
            charts.append((None, h["label"]))
        else:
            charts.append((h["total"]["p95"], h["label"]))
    steps = [
        (e[k]["p95"], name)
        for k, name in (("step", "defaults"), ("heavy_step", "its most"))
        if k in e
    ]
    worst = lambda xs: max(xs, key=lambda x: float("inf") if x[0] is None else x[0])  # noqa: E731
    return (worst(charts) if charts else (None, "")), (worst(steps) if steps else None)


def page_table(r: dict, titles: dict[str, str]) -> list[str]:
    """The targets per page: chart changes and stepper steps, at their heaviest inputs."""
    rows = [
        f"| Page | Chart changes: worst p95 (ms), input | ≤ {CHART_P95_MS} ms "
        f"| Stepper steps: worst p95 (ms), state | ≤ {STEP_MS} ms |",
        "|---|---:|---|---:|---|",
    ]
    for slug, e in r["interactions"].items():
        title = titles.get(slug, slug)
        if "error" in e:
            rows.append(f"| {title} | {e['error']} | FAIL | | |")
            continue
        (chart, what), step = page_results(e)
        chart_cell = "no chart" if not what else f"{ms(chart)}, {what}"
        chart_ok = "" if not what else verdict(within_ms(chart, CHART_P95_MS))
        step_cell = "no stepper" if step is None else f"{ms(step[0])}, {step[1]}"
        step_ok = "" if step is None else verdict(within_ms(step[0], STEP_MS))
        rows.append(f"| {title} | {chart_cell} | {chart_ok} | {step_cell} | {step_ok} |")
    return rows


def lever_table(r: dict, titles: dict[str, str]) -> list[str]:
    rows = [
        "| Lever | Page, input | Measured | With it: p50 / p95 (ms) | Without: p50 / p95 | Kept |",
        "|---|---|---|---:|---:|---|",
    ]
    for x in r.get("levers", []):
        where = f"{titles.get(x['slug'], x['slug'])}, {x['label']}"
        if "error" in x or "with" not in x:
            rows.append(f"| {x['lever']} | {where} | {x.get('error', 'no figures')} | | | |")
            continue
        how = (
            f"{x['changes']} bursts of {BURST['size']} changes {BURST['gap']} ms apart, from the "
            "last change to its state on screen"
            if x["lever"] == "coalesce"
            else f"{x['changes']} steps, alternately with and without"
            if x["lever"] == "patch-grid"
            else f"{x['changes']} changes, alternately with and without"
        )
        a, b = x["with"]["total"], x["without"]["total"]
        kept = "yes" if within_ms(a["p95"], b["p95"] if b["p95"] is not None else -1) else "no"
        kept = f"{kept} (this run)"
        rows.append(
            f"| {x['lever']} | {where} | {how} | {ms(a['p50'])} / {ms(a['p95'])} "
            f"| {ms(b['p50'])} / {ms(b['p95'])} | {kept} |"
        )
    return rows


class Interaction(Session):
    def interactions(self, n: int) -> dict:
        out = {}
        ctx = self.context(first=False)
        for p in self.pages:
            page = ctx.new_page()
            try:
                out[p.slug] = self.interact(page, p, n)
            except Exception as e:
                out[p.slug] = {"error": short(e)}
            finally:
                page.close()
        ctx.close()
        return out

    def interact(self, page, p: Page, n: int) -> dict:
        if not self.open(page, p.slug):
            return {"error": "Python failed"}
        control = page.evaluate(CONTROL_JS)
        if control is None:
            return {"error": "no control found"}
        for doubling in (False, True):
            values = control_values(control, doubling)
            timings = page.evaluate(CHANGE_JS, {**control, "values": values, "n": n})["timings"]
            ok = [t for t in timings if t]
            if (
                len(ok) == len(timings)
                or control["type"] == "checkbox"
                or control["tag"] == "SELECT"
            ):
                break
        entry = {
            "widget": control["widget"],
            "param": control["param"],
            "kind": control["kind"],
            "values": values,
            "changes": len(timings),
            "failed": len(timings) - len(ok),
            **spread(ok),
        }
        if p.stepper:
            entry["step"] = self.steps(page, n, heavy=False)
            entry["heavy_step"] = self.steps(page, n, heavy=True)
        entry["heavy"] = [self.scenario(page, sc, n) for sc in HEAVY.get(p.slug, [])]
        return entry

    def steps(self, page, n: int, heavy: bool) -> dict:
        got = page.evaluate(STEP_JS, {"n": n, "heavy": heavy, "alternate": None})
        if "error" in got:
            return {"error": got["error"], "p50": None, "p95": None}
        xs = [x["ms"] for x in got["steps"]]
        return {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95), "preset": got["preset"]}

    def lever_steps(self, page, n: int, lever: str) -> dict:
        """A stepper's steps at its heaviest state, every other one without `lever`."""
        got = page.evaluate(STEP_JS, {"n": n, "heavy": True, "alternate": lever})
        if "error" in got:
            return {"error": got["error"]}
        out = {"changes": len(got["steps"])}
        for side, without in (("with", False), ("without", True)):
            xs = [x["ms"] for x in got["steps"] if x["without"] is without]
            out[side] = {"total": {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95)}}
        return out

    def scenario(self, page, sc: Scenario, n: int, alternate: str | None = None) -> dict:
        """A heavy input's changes (`alternate`: every other one without that lever)."""
        args = {
            "widget": sc.widget,
            "sel": f'[data-param="{sc.param}"]',
            "n": n,
            "values": list(sc.values),
            "preset": sc.params(),
            "alternate": alternate,
        }
        try:
            got = page.evaluate(CHANGE_JS, args)
        except Exception as e:
            return {"label": sc.label, "error": short(e)}
        timings = got["timings"]
        ok = [t for t in timings if t]
        entry = {
            "label": sc.label,
            "widget": sc.widget,
            "param": sc.param,
            "changes": len(timings),
            "failed": len(timings) - len(ok),
            "preset": got["preset"],
        }
        if alternate:
            entry["with"] = spread([t for t in ok if not t["without"]])
            entry["without"] = spread([t for t in ok if t["without"]])
        else:
            entry.update(spread(ok))
        return entry

    def levers(self, n: int) -> list[dict]:
        """Each lever on and off in the same page, alternately (LEVERS)."""
        slugs = {p.slug for p in self.pages}
        out = []
        ctx = self.context(first=False)
        for lever, slug, sc in LEVERS:
            if slug not in slugs:
                continue
            page = ctx.new_page()
            row = {"lever": lever, "slug": slug, "label": sc.label}
            try:
                if not self.open(page, slug):
                    row["error"] = "Python failed"
                elif lever == "coalesce":
                    args = {
                        "widget": sc.widget,
                        "sel": f'[data-param="{sc.param}"]',
                        "values": list(sc.values),
                        "preset": sc.params(),
                        **BURST,
                    }
                    bursts = page.evaluate(BURST_JS, args)
                    for side, without in (("with", False), ("without", True)):
                        xs = [b["ms"] for b in bursts if b["without"] is without]
                        row[side] = {
                            "total": {"p50": percentile(xs, 0.5), "p95": percentile(xs, 0.95)}
                        }
                    row["changes"] = len(bursts)
                elif lever == "patch-grid":
                    row.update(self.lever_steps(page, n, lever))
                else:
                    if lever == "joined-lanes":
                        page.evaluate(LANES_JS)
                    row.update(self.scenario(page, sc, n, alternate=lever))
                    row["label"] = sc.label
            except Exception as e:
                row["error"] = short(e)
            finally:
                page.close()
            print(f"lever {lever} on {slug} done", file=sys.stderr)
            out.append(row)
        ctx.close()
        return out
