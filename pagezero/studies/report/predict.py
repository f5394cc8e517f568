"""`pagezero predict` in the report: how much of a huge-page fault the running kernel's
clearing explains, and what the 7.0 policy would make of it, beside the gains measured on
AMD Milan for scale."""

import os

from pagezero._core import PagezeroError
from pagezero.interrupt import as_interrupted
from pagezero.studies.predict import predict
from pagezero.studies.predict.model import FIT_HIGH, FIT_LOW
from pagezero.studies.report.cells import Section, failure_text, save_json
from pagezero.studies.report.words import rate

TITLE = "What a new clearing policy would gain here"

# AMD Milan, preempt=full, demand faults before -> after, as measured in "mm:
# folio_zero_user: clear contiguous pages" (2025) (GB/s as printed there).
MILAN = {"2MB": (11.82, 16.48), "1GB": (17.51, 43.23)}

# Replays per run: a handful at the quick scales (each 1GB clear is ~70 ms plus the flush of
# the whole folio before it).
_REPLAY_LOOPS = {"2MB": 5, "1GB": 2}
_NO_FIT = "the model does not fit this machine and nothing is projected (prediction table)."


def _gain(before, after):
    return f"{(after / before - 1):+.0%}"


def _measure(pages, cfg, reserve, quick):
    found, notes, stop = [], [], None
    args = dict(runs=cfg["runs"], reserve=reserve, loops=cfg["fault_loops"])
    for page in pages:
        size = max(cfg["fault_size"], 1 << 30 if page == "1GB" else 2 << 20)
        try:
            replays = _REPLAY_LOOPS[page] if quick else None
            found.append(predict(page, size=size, replay_loops=replays, **args))
        except KeyboardInterrupt as e:
            stop = as_interrupted(e)
            if stop.partial is not None:
                found.append(stop.partial)
            break
        except (PagezeroError, OSError, ValueError, RuntimeError) as e:
            notes.append(f"{page}: not predicted: {failure_text(e)}.")
    return found, notes, stop


def study_predict(out_dir, cfg, info, functions, progress, reserve, quick):
    """pagezero.predict() for 2MB pages (and 1GB unless `quick`), beside Milan's gains."""
    pages = ("2MB",) if quick else ("2MB", "1GB")
    found, notes, stop = _measure(pages, cfg, reserve, quick)
    section = Section(TITLE, interrupted=stop.signame if stop else None)
    path, doc = os.path.join(out_dir, "predict.json"), [p.to_json() for p in found]
    return save_json(section, path, doc, lambda: _tabulate(section, found, notes))


def _tabulate(section, found, notes):
    rows = [
        "| page | explained | fault GB/s | replayed policy | replay GB/s | remainder (us/fault) "
        "| runs kept | faults on |",
        "|---|---|---|---|---|---|---|---|",
    ]
    proj = [
        "| page | policy | preempt | kernel | projected GB/s | low..high |",
        "|---|---|---|---|---|---|",
    ]
    for p in found:
        if p.explained is None:
            continue
        r = p.replay
        rows.append(
            f"| {p.page} | {p.explained:.0%} | {rate(p.fault_bytes_per_sec)} | {r.policy} "
            f"({r.strategy}, {r.source}) | {rate(p.replay_bytes_per_sec)} | {p.remainder_us:.1f} "
            f"| {p.runs - p.discarded_runs} of {p.runs} | {p.fault_pages.split(' (')[0]} |"
        )
        for x in p.projections:
            proj.append(
                f"| {p.page} | {x.replay.policy} | {x.replay.preempt} | {x.replay.kernel} | "
                f"{rate(x.bytes_per_sec)} | {rate(x.low)}..{rate(x.high)} |"
            )
        section.summary.append(_summary(p))
    milan = ", ".join(
        f"{page} demand faults {a} -> {b} GB/s ({_gain(a, b)})" for page, (a, b) in MILAN.items()
    )
    projected = ["", "Projected fault rates (low..high from the runs' spread):", "", *proj]
    if len(proj) == 2:
        projected = []
    section.body = [
        "From `pagezero predict`: demand faults on huge pages, the running kernel's clearing "
        "replayed on a cold folio of the same size, and the share of the fault time it "
        "explains; the rest is the fault path's own cost, which another policy is assumed "
        "not to change. GB/s = 10^9 bytes/s.",
        "",
        *rows,
        "",
        f'For scale, AMD Milan with preempt=full in "mm: folio_zero_user: clear contiguous '
        f'pages" (2025), measured before and after: {milan}.',
        *projected,
        *[f"\n{p.page}: {p.verdict}." for p in found if p.verdict and not p.projections],
        *[f"\n{n}" for n in notes],
    ]


def _summary(p):
    share = f"The running kernel's clearing explains {p.explained:.0%} of a {p.page} demand fault"
    # 7.0 under preempt=full with clear_page()'s kernel: Milan's case.
    full = next(
        (x for x in p.projections if (x.replay.policy, x.replay.preempt) == ("7.0", "full")), None
    )
    if full is None:
        bound = f"under {FIT_LOW:.0%}" if p.explained < FIT_LOW else f"over {FIT_HIGH:.0%}"
        return f"{share} here, {bound}: {_NO_FIT}"
    a, b = MILAN[p.page]
    return (
        f"{share} here; 7.0 with preempt=full would fault at {rate(full.bytes_per_sec)} GB/s "
        f"({_gain(p.fault_bytes_per_sec, full.bytes_per_sec)}; AMD Milan measured "
        f"{_gain(a, b)}; prediction table)."
    )
