"""`pagezero predict` in the report: huge-page faults, each policy projected (docs/predict.rst)."""

import os

from pagezero._core import PagezeroError
from pagezero.interrupt import as_interrupted
from pagezero.studies.predict import predict
from pagezero.studies.predict.model import FIT_HIGH, FIT_LOW
from pagezero.studies.predict.prediction import group_projections
from pagezero.studies.predict.replays import PREEMPT_MODES, PROPOSAL_2012
from pagezero.studies.predict.study import minimum_fault_size
from pagezero.studies.report.cells import Section, failure_text, save_json
from pagezero.studies.report.words import md_table, rate, text_table
from pagezero.units import parse_size

TITLE = "Clearing policies"

# Other machines' published figures, for scale: (machine, pages, preemption models, the clear
# before and after, perf's "GB/sec" before and after: 2^30 bytes/s, shown in the report's 10^9).
# Milan's: the series merged in 7.0 as posted in v8 (Oct 2025; its batch 8MB, 7.0's 32MB).
MILAN = "AMD EPYC Milan 7J13"
ZEN5 = "AMD Zen 5, v6.17-rc6"
_SERIES = ("page by page", "contiguous (v8)")
FOR_SCALE_PERF_GIB = (
    (MILAN, "2MB", ("all",), *_SERIES, 12.92, 17.03),
    (MILAN, "1GB", ("full", "lazy"), *_SERIES, 17.26, 42.17),
    (MILAN, "1GB", ("none", "voluntary"), *_SERIES, 17.14, 18.04),
    (ZEN5, "2MB", ("-",), "base", "clear_pages", 20.66, 35.06),
    (ZEN5, "2MB", ("-",), "base", "movnt", 20.66, 51.59),
    (ZEN5, "2MB", ("-",), "base", "clzero", 20.66, 66.95),
)
FOR_SCALE_HEADER = ["machine", "pages", "preempt", "before", "after", "before GB/s"]
FOR_SCALE_HEADER += ["after GB/s", "change", "perf's GB/sec (2^30)"]

# Replays per run: a handful at the quick scales (each 1GB clear is ~70 ms plus the flush of
# the whole folio before it).
QUICK_REPLAY_LOOPS = {"2MB": 5, "1GB": 2}
PREDICT_HEADER = (
    "page, model, clearing share (sampled), kernel clear (us/fault), remainder (us/fault), "
    "fault GB/s, replayed policy, replay GB/s, explained by the replay, remainder by "
    "subtraction (us/fault), runs kept, faults on"
).split(", ")
PROJECTION_HEADER = ["page", "policy", "stores", "kernel", "preempt", "projected GB/s"]
PROJECTION_HEADER += ["low..high", "vs today"]
_NO_FIT = "the model does not fit this machine and nothing is projected (prediction table)."


def _gain(before, after):
    return f"{(after / before - 1):+.0%}"


def _gb(gib):
    """perf's "GB/sec" (2^30 bytes/s) as the for-scale table's 10^9 bytes/s."""
    return f"{gib * 2**30 / 1e9:.2f}"


def for_scale_line():
    """summary.txt's one sentence on other machines' published figures (for-scale table)."""
    milan = [r for r in FOR_SCALE_PERF_GIB if r[0] == MILAN]
    zen5 = [r for r in FOR_SCALE_PERF_GIB if r[0] == ZEN5]
    (*_, a2, b2), *at_1gb_rows = milan
    at_1gb = " and ".join(
        f"{_gain(a, b)} under preempt={'|'.join(modes)}" for _, _, modes, *_, a, b in at_1gb_rows
    )
    *rates, last = [f"{_gb(b)} with {after}" for *_, after, _, b in zen5]
    return (
        f"For scale, other machines, not this CPU: 64GB of demand faults on an {MILAN} gained "
        f"{_gain(a2, b2)} at 2MB and, at 1GB, {at_1gb} (the series merged in 7.0, as posted in "
        f"v8); an {ZEN5.replace(',', ' on')} cleared 2MB pages at {_gb(zen5[0][5])} GB/s in "
        f"its base, {', '.join(rates)} and {last} (for-scale table)."
    )


def _for_scale_table():
    """The for-scale table's markdown lines, a row per published figure."""
    rows = [
        [m, page, ", ".join(modes), before, after, _gb(a), _gb(b), _gain(a, b), f"{a} -> {b}"]
        for m, page, modes, before, after, a, b in FOR_SCALE_PERF_GIB
    ]
    return md_table(FOR_SCALE_HEADER, rows)


def fault_size(page, cfg, info):
    """The bytes the study faults per loop: the scale's, at least one page and twice the LLC
    (predict's least: the faults clear cold folios, as the replays)."""
    return max(cfg["fault_size"], parse_size(page), minimum_fault_size(page, info) or 0)


def _measure(pages, cfg, info, reserve, quick):
    found, notes, stop = [], [], None
    args = dict(runs=cfg["runs"], reserve=reserve, loops=cfg["fault_loops"])
    for page in pages:
        size = fault_size(page, cfg, info)
        try:
            replays = QUICK_REPLAY_LOOPS[page] if quick else None
            found.append(predict(page, size=size, replay_loops=replays, **args))
        except KeyboardInterrupt as e:
            stop = as_interrupted(e)
            if stop.partial is not None:
                found.append(stop.partial)
            break
        except (PagezeroError, OSError, ValueError, RuntimeError) as e:
            notes.append(f"{page}: not predicted: {failure_text(e)}.")
    return found, notes, stop


def study_predict(out_dir, cfg, info, functions, progress, reserve=False):
    """pagezero.predict() for 2MB pages (and 1GB unless cfg's "quick"): answers and tables."""
    pages = ("2MB",) if cfg["quick"] else ("2MB", "1GB")
    found, notes, stop = _measure(pages, cfg, info, reserve, cfg["quick"])
    section = Section(TITLE, interrupted=stop.signame if stop else None)
    path, doc = os.path.join(out_dir, "predict.json"), [p.to_json() for p in found]
    return save_json(section, path, doc, lambda: _tabulate(section, found, notes))


def _tabulate(section, found, notes):
    rows, proj, text = [], [], []  # the tables' rows, summary.txt's
    for p in found:
        if p.explained is None:
            continue
        r, o = p.replay, p.observed
        seen = ["-"] * 3
        if o and p.inside:
            seen = [p.inside.share_text(), f"{o.clear_s * 1e6:.1f}", f"{o.remainder_s * 1e6:.1f}"]
        rows.append(
            [p.page, p.model, *seen]
            + [rate(p.fault_bytes_per_sec), f"{r.policy} ({r.strategy}, {r.source})"]
            + [rate(p.replay_bytes_per_sec), f"{p.explained:.0%}", f"{p.remainder_us:.1f}"]
            + [f"{p.runs - p.discarded_runs} of {p.runs}", p.fault_pages.split(" (")[0]]
        )
        for g in group_projections(p.projections):
            x, gain = g.projected, _gain(p.fault_bytes_per_sec, g.projected.bytes_per_sec)
            alike = len(g.modes) == len(PREEMPT_MODES)
            modes = "all four" if alike else ", ".join(g.modes)
            low_high = f"{rate(x.low)}..{rate(x.high)}"
            proposal = x.replay.nontemporal and x.replay.policy == "pre-7.0"
            policy = "pre-7.0, the 2012 proposal" if proposal else x.replay.policy
            proj.append([p.page, policy, _stores(x.replay), x.replay.kernel, modes])
            proj[-1] += [rate(x.bytes_per_sec), low_high, gain]
            modes = "all" if alike else "|".join(g.modes)
            text.append([p.page, x.replay.policy, x.replay.kernel, modes, rate(x.bytes_per_sec)])
            text[-1].append(gain)
        section.answers += _answer(p)
        section.summary += _rest(p)
    if text:
        header = ["page", "policy", "kernel", "preempt", "GB/s", "vs today"]
        section.text = text_table(header, text)
    if any(p.projections for p in found):
        section.summary.append(for_scale_line())
    projected = [
        "",
        "Projected fault rates, each policy with clear_pages()'s stores and with the fastest "
        "non-temporal kernel (low..high from the runs' spread; preemption models that clear "
        "alike in one row):",
        "",
        *md_table(PROJECTION_HEADER, proj),
    ]
    section.body = [
        "From `pagezero predict`: demand faults on huge pages, sampled. The kernel's clear "
        "per fault is the sampled clearing share of the fault time (model: observed), the "
        "rest the fault path's own cost, which another policy is assumed not to change; each "
        "policy's clear is the kernel's scaled by its replay on a cold folio over the running "
        "policy's. Where the faults were not sampled, the running policy's replay stands for "
        "the kernel's clear and the rest is the remainder (model: subtraction, also shown "
        "beside the observed model as the cross-check). Every policy is also replayed with "
        f'each non-temporal kernel ("{PROPOSAL_2012}", 2012), the fastest projected. '
        "GB/s = 10^9 bytes/s.",
        "",
        *md_table(PREDICT_HEADER, rows),
        *(projected if proj else []),
        "",
        "For scale only, other machines' published figures, not this CPU's (the for-scale "
        f'table): {MILAN}, 64GB of demand faults with "mm: folio_zero_user: clear contiguous '
        'pages" as posted in v8 (2025; merged in 7.0 with a 32MB batch where v8 had 8MB) against '
        f"clearing page by page; {ZEN5}, 2MB pages against its base. GB/s = 10^9 bytes/s:",
        "",
        *_for_scale_table(),
        *[f"\n{p.page}: {p.sampling}; projected by subtraction." for p in found if p.sampling],
        *[f"\n{p.page} {p.cross_check_line()}." for p in found if p.cross_check_line()],
        *[f"\n{p.page}: {p.verdict}." for p in found if p.verdict and not p.projections],
        *[f"\n{n}" for n in notes],
    ]


def _stores(replay):
    return "non-temporal" if replay.nontemporal else "clear_pages()'s"


def _answer(p):
    """predict's answers for one page size: the 7.0 policy's rates with both kernels first, one
    answer a group of preemption models that clear alike."""
    today = f"{rate(p.fault_bytes_per_sec)} GB/s today"
    if p.observed and p.inside:
        today += f", {p.inside.share:.0%} of it clearing"
    if not p.projections:
        return [f"{today}: {p.page} demand faults; {_no_fit(p)}"]
    by_modes = {}  # the preemption models that clear alike -> their projections
    for g in group_projections(p.projections):
        if g.projected.replay.policy == "7.0":
            by_modes.setdefault(g.modes, []).append(g.projected)
    answers = []  # one a group of preemption models that clear alike: each one or two lines
    for modes, projected in by_modes.items():
        kernels = " and ".join(
            f"{rate(x.bytes_per_sec)} GB/s ({_gain(p.fault_bytes_per_sec, x.bytes_per_sec)})"
            f" with {_stores(x.replay)} {x.replay.kernel}"
            for x in projected
        )
        under = "" if len(modes) == len(PREEMPT_MODES) else f" and preempt={'|'.join(modes)}"
        answers.append(
            f"{kernels}: {p.page} demand faults under the 7.0 policy{under}, from {today} "
            f"(projection table)."
        )
    return answers


def _rest(p):
    """The other summary lines for one page size: the 2012 proposal's projection."""
    proposal = next(
        (x for x in p.projections if x.replay.policy == "pre-7.0" and x.replay.nontemporal), None
    )
    if proposal is None:
        return []
    return [
        f"{p.page}: the 2012 proposal (clear_huge_page() page by page, every page but the "
        f"faulting one with {proposal.replay.kernel}) would fault at "
        f"{rate(proposal.bytes_per_sec)} GB/s "
        f"({_gain(p.fault_bytes_per_sec, proposal.bytes_per_sec)}; projection table)."
    ]


def _no_fit(p):
    why = f"the replay explains {p.explained:.0%}"
    if p.explained < FIT_LOW:
        why += f", under {FIT_LOW:.0%}"
    elif p.explained > FIT_HIGH:
        why += f", over {FIT_HIGH:.0%}"
    else:
        why += ", but the remainder is below zero across the runs (the replay clears slower "
        why += "than the kernel faults)"
    return f"{why}: {_NO_FIT}"
