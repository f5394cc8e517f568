"""pagezero.studies.predict without measuring: the policies and their walks, the policy
chosen per kernel release and preemption model, warm-up detection, the fit
and the projections, the JSON shape. Synthetic numbers and fixture trees only.
"""

import json
import math

import pytest

import pagezero
from pagezero.measure.mem import warming_runs
from pagezero.measure.policy import PAGE_SIZE, Step, clear_order
from pagezero.studies.predict import Prediction
from pagezero.studies.predict.model import FIT_HIGH, FIT_LOW, ProjectedPolicy, fit, project
from pagezero.studies.predict.prediction import group_projections
from pagezero.studies.predict.replays import (
    KERNEL_DEFAULT_PREEMPT,
    MAX_ORDER_BYTES,
    PREEMPT_MODES,
    PROPOSAL_2012,
    every_policy,
    from_7_0,
    gigantic,
    nontemporal_kernels,
    nontemporal_policies,
    pre_7_0,
    replay_for,
    running_kernel,
)
from pagezero.system import kallsyms as sysinfo_kallsyms
from pagezero.system import machine as sysinfo
from pagezero.system.kernels import clear_pages_kernel, kernels
from pagezero.units import parse_size

MB2, GB1 = 2 << 20, 1 << 30

# The replays -------------------------------------------------------------------


def test_max_order_puts_2mb_within_and_1gb_beyond():
    assert MB2 <= MAX_ORDER_BYTES < GB1
    assert not gigantic(MB2) and not gigantic(4 << 20) and gigantic(8 << 20) and gigantic(GB1)


@pytest.mark.parametrize(
    "folio, strategy, source",
    [
        (MB2, "page-at-a-time", "process_huge_page()"),
        (GB1, "front-to-back", "clear_gigantic_page()"),
    ],
)
def test_pre_7_0_is_process_huge_page_then_clear_gigantic_page(folio, strategy, source):
    r = pre_7_0(folio)
    assert (r.policy, r.preempt, r.strategy) == ("pre-7.0", "any", strategy)
    assert r.source == f"mm/memory.c {source}" and r.release == "before 7.0"
    assert r.kernel == clear_pages_kernel()


@pytest.mark.parametrize(
    "preempt, batch",
    [("none", "32MB"), ("voluntary", "32MB"), ("full", "extent"), ("lazy", "extent")],
)
def test_7_0_batches_by_preemption_model(preempt, batch):
    small, giant = from_7_0(MB2, preempt), from_7_0(GB1, preempt)
    assert (small.strategy, small.batch) == ("neighbourhood-last", batch)
    assert (giant.strategy, giant.batch) == ("sequential", batch)
    assert giant.source == "mm/memory.c clear_contig_highpages()"
    assert small.release == giant.release == "7.0 and later"


def test_7_0_refuses_an_unknown_preemption_model():
    with pytest.raises(ValueError, match="unknown preemption model 'dynamic'"):
        from_7_0(MB2, "dynamic")


def test_every_policy_is_clear_pages_kernels_and_each_has_nontemporal_candidates():
    nts = [
        k.name
        for k in kernels("clear")
        if k.available and not k.temporal and k.name != clear_pages_kernel()
    ]
    assert nontemporal_kernels() == nts
    for folio in (MB2, GB1):
        policies = every_policy(folio)
        assert [(p.policy, p.preempt) for p in policies] == [("pre-7.0", "any")] + [
            ("7.0", m) for m in PREEMPT_MODES
        ]
        assert {p.kernel for p in policies} == {clear_pages_kernel()}
        assert not any(p.nontemporal for p in policies)
        candidates = nontemporal_policies(folio)
        assert len(candidates) == len(nts) * len(policies)
        assert all(c.nontemporal and c.stores == "non-temporal" for c in candidates)
        assert {c.kernel for c in candidates} == set(nts)
        # Before 7.0, the 2012 proposal's walk; from 7.0, the policy's own walk.
        proposal = [c for c in candidates if c.policy == "pre-7.0"]
        assert {c.strategy for c in proposal} <= {"nocache-except-target"}
        assert all(PROPOSAL_2012 in c.source for c in proposal)
        seven = {c.strategy for c in candidates if c.policy == "7.0"}
        assert seven <= {from_7_0(folio, "full").strategy}


def test_the_2012_walk_clears_the_faulting_page_with_clear_pages_kernel():
    nt = "x86-64-movnti"
    args = pre_7_0(MB2, nt).folio_args()
    assert args == {
        "strategy": "nocache-except-target",
        "batch": "extent",
        "kernel": clear_pages_kernel(),
        "nt_kernel": nt,
    }
    assert from_7_0(GB1, "none", nt).folio_args() == {
        "strategy": "sequential",
        "batch": "32MB",
        "kernel": nt,
    }
    assert pre_7_0(MB2, nt).same_walk(MB2) != pre_7_0(MB2).same_walk(MB2)


def test_a_32mb_batch_and_the_whole_extent_are_one_walk_for_2mb_only():
    assert from_7_0(MB2, "none").same_walk(MB2) == from_7_0(MB2, "full").same_walk(MB2)
    assert from_7_0(GB1, "none").same_walk(GB1) != from_7_0(GB1, "full").same_walk(GB1)


def expected_steps(replay, nr):
    """The order each replay stands for, written out for a folio of nr pages."""
    if replay.strategy == "front-to-back":  # clear_gigantic_page()
        return tuple(Step(i, 1, False) for i in range(nr))
    if replay.strategy == "page-at-a-time":  # process_huge_page(), fault at 0
        return tuple(Step(i, 1, False) for i in reversed(range(nr)))
    if replay.strategy == "nocache-except-target":  # 2012: all but the fault, then it
        return tuple(Step(i, 1, True) for i in range(1, nr)) + (Step(0, 1, False),)
    if replay.strategy == "neighbourhood-last":  # fault at 0: right of 0..2, then 0..2
        return (Step(3, nr - 3, False), Step(0, 3, False))
    # clear_contig_highpages(): front to back in the batch, or whole.
    return (Step(0, nr, False),)


REPLAYS = [
    *every_policy(MB2),
    *every_policy(GB1),
    *nontemporal_policies(MB2)[:5],
    *nontemporal_policies(GB1)[:5],
]


@pytest.mark.parametrize("replay", REPLAYS, ids=str)
def test_each_replay_is_recorded_through_the_walk_that_is_timed(replay):
    # A 64-page folio: the walk is the same function whatever the size, and
    # every batch here (32MB, the extent) holds the whole folio.
    nr = 64
    buf = pagezero.region(nr * PAGE_SIZE, thp=False)
    try:
        steps = pagezero.clear_folio(buf, fault_index=0, record=True, **replay.folio_args())
    finally:
        buf.close()
    assert steps == clear_order(replay.strategy, nr, 0, batch=replay.batch)
    assert steps == expected_steps(replay, nr)


def test_the_7_0_gigantic_walk_clears_in_32mb_units_when_cooperative():
    nr = GB1 // PAGE_SIZE
    coop = clear_order("sequential", nr, 0, batch=from_7_0(GB1, "none").batch)
    assert len(coop) == 32 and all(s.count == (32 << 20) // PAGE_SIZE for s in coop)
    assert clear_order("sequential", nr, 0, batch=from_7_0(GB1, "full").batch) == (
        Step(0, nr, False),
    )


# The policy chosen -------------------------------------------------------------


def machine_from(tmp_path, release, files, uname="#1 SMP"):
    """A machine() dict for kernel `release`, its preemption read from a fixture tree."""
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return {
        "kernel_release": release,
        "preemption": sysinfo.preemption(str(tmp_path), uname_version=uname),
    }


DEBUGFS = "sys/kernel/debug/sched/preempt"


@pytest.mark.parametrize(
    "release, files, uname, policy, preempt, batch",
    [
        ("6.18.44", {DEBUGFS: "none (voluntary) full lazy"}, "", "pre-7.0", "voluntary", "extent"),
        ("6.1.0-13-amd64", {"proc/cmdline": "ro preempt=full"}, "", "pre-7.0", "full", "extent"),
        ("7.0.0", {DEBUGFS: "(none) voluntary full lazy"}, "", "7.0", "none", "32MB"),
        ("7.0.3-arch1", {DEBUGFS: "none voluntary (full) lazy"}, "", "7.0", "full", "extent"),
        ("7.1.0", {DEBUGFS: "none voluntary full (lazy)"}, "", "7.0", "lazy", "extent"),
        ("7.2.0-rt", {}, "#1 SMP PREEMPT_RT", "7.0", "full", "extent"),
        ("7.0.0", {}, "#1 SMP PREEMPT_DYNAMIC", "7.0", KERNEL_DEFAULT_PREEMPT, "32MB"),
        ("10.0", {}, "#1 SMP", "7.0", KERNEL_DEFAULT_PREEMPT, "32MB"),
    ],
)
def test_policy_per_release_and_preemption(tmp_path, release, files, uname, policy, preempt, batch):
    # Symbols that cannot say: the release decides.
    kernel = running_kernel(machine_from(tmp_path, release, files, uname), era=(None, "hidden"))
    r = replay_for(kernel, MB2)
    assert (r.policy, kernel.preempt) == (policy, preempt)
    if policy == "7.0":
        assert r.batch == batch and r.preempt == preempt
    assert replay_for(kernel, GB1).strategy == (
        "sequential" if policy == "7.0" else "front-to-back"
    )


@pytest.mark.parametrize(
    "release, symbol, policy, how",
    [
        ("6.12.0-backport", "__clear_pages_unrolled", "7.0", "from the kernel's symbols"),
        ("7.0.1", "clear_page_erms", "pre-7.0", "from the kernel's symbols"),
        ("7.0.1", "memset", "7.0", "from the release 7.0.1"),
        ("6.18.44", "memset", "pre-7.0", "from the release 6.18.44"),
    ],
)
def test_the_policy_era_is_the_symbols_before_the_release(tmp_path, release, symbol, policy, how):
    # A distribution backports the clear_pages() series: the release does not say, kallsyms does.
    kallsyms = tmp_path / "kallsyms"
    kallsyms.write_text(f"ffffffff81000000 T {symbol}\nffffffff81000100 T next_one\n")
    era = sysinfo_kallsyms.clear_era(str(kallsyms), arch="x86_64")
    kernel = running_kernel({"kernel_release": release, "preemption": {"model": "full"}}, era)
    assert replay_for(kernel, MB2).policy == policy
    assert kernel.era_words.startswith(f"{policy} policy {how}")
    assert f"kallsyms has {symbol}" in kernel.era_words or "has none of" in kernel.era_words


def test_an_assumed_preemption_model_says_so(tmp_path):
    dynamic = running_kernel(machine_from(tmp_path, "6.18.0", {}, "#1 SMP PREEMPT_DYNAMIC"))
    assert dynamic.preempt_read == "dynamic" and "debugfs" in dynamic.preempt_note
    assert "kernel/Kconfig.preempt" in dynamic.preempt_note
    read = running_kernel(machine_from(tmp_path, "6.18.0", {DEBUGFS: "none (full) lazy"}))
    assert read.preempt_note is None


@pytest.mark.parametrize(
    "release, version", [("6.18.44-fc", (6, 18)), ("7.0", (7, 0)), ("", None), ("x.y", None)]
)
def test_release_tuple(release, version):
    assert sysinfo.release_tuple(release) == version


def test_an_unreadable_release_is_taken_as_pre_7_0():
    info = {"kernel_release": "custom", "preemption": {"model": "full"}}
    kernel = running_kernel(info, era=(None, "no telling symbol"))
    assert replay_for(kernel, MB2).policy == "pre-7.0"


# Warm-up -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rates, discarded",
    [
        ([1.9, 10.8, 11.5, 12.0], 1),  # the host's first touch (2MB, Zen 4 VM)
        ([1.9, 2.1, 10.8, 11.5, 12.0], 2),  # two runs still warming
        ([10.8, 11.5, 12.0], 0),
        ([6.0, 11.0, 12.0], 0),  # slower, but not half: kept
        ([10.8, 2.0, 12.0], 0),  # slow in the middle: the spread, kept
        ([1.0, 10.0], 1),
        ([1.0], 0),  # nothing to compare with
        ([1.0, 1.1, 1.2], 0),
    ],
)
def test_warming_runs_on_synthetic_runs(rates, discarded):
    assert warming_runs(rates) == discarded


def test_warming_runs_keeps_at_least_one_run():
    assert warming_runs([1.0, 3.0, 9.0, 27.0]) == 3


def test_warming_runs_refuses_a_non_positive_rate():
    with pytest.raises(ValueError, match="positive"):
        warming_runs([0.0, 1.0])


# The fit -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault_us, clear_us, fits",
    [
        (100.0, 50.0, False),  # explains 50%: too low
        (100.0, 59.0, False),
        (100.0, 60.0, True),
        (100.0, 85.0, True),  # the 6.18 / Zen 4 case
        (100.0, 100.0, True),
        (100.0, 110.0, False),  # one run: a remainder of -10 us, with no spread to hold zero
        (100.0, 120.0, False),  # the replay slower than the fault: too high
    ],
)
def test_fit_check_on_synthetic_numbers(fault_us, clear_us, fits):
    f = fit(MB2, [fault_us * 1e-6], [clear_us * 1e-6])
    assert math.isclose(f.explained, clear_us / fault_us)
    assert f.fits is fits
    assert ("the model fits" in f.verdict()) is fits
    if not fits:
        assert "does not fit this machine" in f.verdict()


@pytest.mark.parametrize(
    "explained, fits", [(0.59, False), (0.60, True), (1.10, True), (1.11, False)]
)
def test_the_fit_holds_from_60_to_110_percent(explained, fits):
    # A slow third fault run: the remainder's interval reaches above zero throughout.
    f = fit(MB2, [1.0, 1.0, 1.5], [explained] * 3)
    assert f.remainder_high > 0 and f.fits is fits


def test_a_remainder_below_zero_across_the_runs_is_refused_with_its_figures():
    # Explained 107% (within 110%), remainder -7 us, -10..-4 us across the runs: every run's
    # fault is faster than every replayed clear.
    f = fit(MB2, [100e-6, 104e-6], [110e-6, 108e-6])
    assert FIT_LOW < f.explained < FIT_HIGH and f.remainder_high < 0
    assert not f.fits
    v = f.verdict()
    assert "the model does not fit this machine" in v and "nothing projected" in v
    assert "explains 107%" in v and "remainder -7.0 us per fault (-10.0..-4.0 across" in v
    assert "the model fits" not in v


def test_a_remainder_below_zero_within_the_spread_is_none():
    # Median fault 106 us, median clear 107 us: -1 us, but -8..+6 across the runs.
    f = fit(MB2, [100e-6, 112e-6], [108e-6, 106e-6])
    assert f.remainder_s < 0 < f.remainder_high and f.fits
    assert "zero within the runs' spread" in f.verdict() and "the model fits" in f.verdict()
    p = project(f, from_7_0(MB2, "full"), [50e-6])
    assert math.isclose(p.bytes_per_sec, MB2 / 50e-6)  # no remainder
    assert math.isclose(p.low, MB2 / 56e-6) and math.isclose(p.high, MB2 / 50e-6)


def test_fit_remainder_and_projection():
    # Faults of 150/160/170 us, replays of 120/125/130 us: remainder 35 us.
    f = fit(MB2, [160e-6, 150e-6, 170e-6], [125e-6, 120e-6, 130e-6])
    assert math.isclose(f.remainder_s, 35e-6)
    assert math.isclose(f.remainder_low, 20e-6) and math.isclose(f.remainder_high, 50e-6)
    p = project(f, from_7_0(MB2, "full"), [60e-6, 50e-6, 70e-6])
    assert p.replay == from_7_0(MB2, "full") and math.isclose(p.replay_bytes_per_sec, MB2 / 60e-6)
    assert math.isclose(p.bytes_per_sec, MB2 / 95e-6)
    assert math.isclose(p.low, MB2 / 120e-6) and math.isclose(p.high, MB2 / 70e-6)
    assert p.low < p.bytes_per_sec < p.high


@pytest.mark.parametrize("fault, clear", [([], [1.0]), ([1.0], [0.0]), ([-1.0], [1.0])])
def test_fit_refuses_empty_or_non_positive_times(fault, clear):
    with pytest.raises(ValueError, match="positive times"):
        fit(MB2, fault, clear)


# The JSON shape --------------------------------------------------------------------


NT = "x86-64-movnti"  # a name only: nothing runs


def synthetic_prediction(fits=True, page="2MB"):
    """A 2MB (or 1GB) prediction made by hand: faults at 10 GB/s, pre-7.0 running; 7.0
    projected at 11 GB/s with clear_pages()'s kernel and 15 GB/s with NT, the 2012 proposal
    at 13 GB/s; for 1GB, 7.0 under none|voluntary at 10.5 and 14 GB/s instead."""
    folio = parse_size(page)
    p = Prediction(page, "6.18.0", "none", None, f"{page} hugetlb", 1 << 30, 5, "warmed")
    p.run_rates, p.discarded_runs = [1e9, 9e9, 1e10, 1.1e10], 1
    p.fault_bytes_per_sec, p.replay, p.replay_backing = 1e10, pre_7_0(folio), "hugetlb"
    p.replay_bytes_per_sec, p.explained, p.remainder_us = 1.2e10, 0.83, 30.0
    p.remainder_interval_us, p.nontemporal_kernels = (20.0, 40.0), [NT]
    if not fits:
        return p
    p.projections = [ProjectedPolicy(pre_7_0(folio, NT), 1.3e10, 1.2e10, 1.4e10, 2e10)]
    for mode in PREEMPT_MODES:
        cooperative = page == "1GB" and mode in ("none", "voluntary")
        own, nt = (1.05e10, 1.4e10) if cooperative else (1.1e10, 1.5e10)
        p.projections += [
            ProjectedPolicy(from_7_0(folio, mode), own, own * 0.9, own * 1.1, 3e10),
            ProjectedPolicy(from_7_0(folio, mode, NT), nt, nt * 0.9, nt * 1.1, 4e10),
        ]
    return p


TYPES = {
    "page": str,
    "kernel_release": str,
    "preempt": str,
    "fault_bytes_per_sec": float,
    "model": str,
    "clearing_share": (float, type(None)),
    "kernel_clear_us": (float, type(None)),
    "observed_remainder_us": (float, type(None)),
    "replay_policy": str,
    "replay_bytes_per_sec": float,
    "explained": float,
    "remainder_us": float,
    "runs": int,
    "discarded_runs": int,
    "projections": list,
}
PROJECTION_TYPES = {
    "policy": str,
    "preempt": str,
    "kernel": str,
    "stores": str,
    "bytes_per_sec": float,
    "low": float,
    "high": float,
}


def check_json_shape(doc):
    assert list(doc)[: len(TYPES)] == list(TYPES)  # the documented figures come first
    for key, kind in TYPES.items():
        assert isinstance(doc[key], kind), (key, doc[key])
    for row in doc["projections"]:
        for key, kind in PROJECTION_TYPES.items():
            assert isinstance(row[key], kind), (key, row)
        assert row["low"] <= row["bytes_per_sec"] <= row["high"]


def test_json_shape():
    doc = json.loads(json.dumps(synthetic_prediction().to_json()))
    check_json_shape(doc)
    assert doc["runs"] == 4 and doc["discarded_runs"] == 1
    first, second = doc["projections"][:2]
    assert (first["policy"], first["stores"], first["kernel"]) == ("pre-7.0", "non-temporal", NT)
    assert (second["policy"], second["preempt"], second["stores"]) == (
        "7.0",
        "none",
        "clear_pages()",
    )
    assert len(doc["assumptions"]) == 2 and doc["model"] == "subtraction"
    assert doc["observed"] is None and doc["cross_check"] == []
    assert doc["remainder_interval_us"] == [20.0, 40.0] and doc["nontemporal_kernels"] == [NT]
    assert doc["answers"] == synthetic_prediction().answers()


def test_text_opens_with_the_answers_in_gb_per_s():
    lines = synthetic_prediction().describe()
    assert (
        lines[0]
        == "2MB demand faults today: 10.00 GB/s (kernel 6.18.0, pre-7.0 policy, preempt=none)"
    )
    # One line per answer, before the method: the 2012 proposal, 7.0 with each kernel.
    assert lines[1] == (
        f"pre-7.0 with {NT} (fastest non-temporal; the 2012 proposal): 10.00 -> 13.00 GB/s "
        "(+30%; 12.00..14.00)"
    )
    assert lines[2] == (
        f"7.0 with {clear_pages_kernel()} (clear_pages()'s): 10.00 -> 11.00 GB/s (+10%; "
        "9.90..12.10), all four preemption models project the same"
    )
    assert lines[3].startswith(f"7.0 with {NT} (fastest non-temporal): 10.00 -> 15.00 GB/s")
    assert lines[4].startswith("# how:")
    text = "\n".join(lines)
    assert "GB/sec" not in text and "2^30" not in text
    assert "preempt=full" not in "\n".join(lines[:4])  # all four alike: none named


def test_text_names_the_preemption_models_where_they_differ():
    answers = synthetic_prediction(page="1GB").answers()
    seven = [line for line in answers if line.startswith("7.0")]
    assert [line.rsplit(", ", 1)[-1] for line in seven] == [
        "preempt=none|voluntary",
        "preempt=full|lazy",
        "preempt=none|voluntary",
        "preempt=full|lazy",
    ]
    assert "10.00 -> 10.50 GB/s" in seven[0] and "10.00 -> 15.00 GB/s" in seven[3]


def test_text_without_a_fit_answers_that_nothing_is_projected():
    p = synthetic_prediction(fits=False)
    p.verdict = "the replay explains 107% of the fault time, remainder -7.0 us per fault: ..."
    first, second = p.answers()
    assert first.startswith("2MB demand faults today: 10.00 GB/s")
    assert second == f"2MB: nothing projected: {p.verdict}"
    assert not any("->" in line for line in p.describe())


def test_without_a_nontemporal_kernel_the_text_says_so():
    p = synthetic_prediction()
    p.nontemporal_kernels = []
    p.projections = [x for x in p.projections if not x.replay.nontemporal]
    answers = p.answers()
    assert answers[-1] == "no non-temporal clear kernel runs on this CPU: none projected with one"
    assert len(answers) == 3  # today, 7.0 with clear_pages()'s kernel, the line above


def test_groups_join_only_the_same_figures():
    p = synthetic_prediction()
    groups = group_projections(p.projections)
    assert [(g.projected.replay.policy, g.projected.replay.nontemporal) for g in groups] == [
        ("pre-7.0", True),
        ("7.0", False),
        ("7.0", True),
    ]
    assert groups[1].modes == PREEMPT_MODES and groups[0].modes == ("any",)
    assert groups[0].preempt_words == ""
    assert len(group_projections(synthetic_prediction(page="1GB").projections)) == 5


def test_text_names_the_assumptions_and_the_discarded_runs():
    text = "\n".join(synthetic_prediction().describe())
    assert "3 of 4 runs kept, 1 discarded as still warming up" in text
    assert text.count("# assumed:") == 2 and "remainder" in text
    assert "process_huge_page()" in text


def test_simple_is_the_numbers_one_a_line():
    p = synthetic_prediction()
    assert p.simple()[:6] == ["1e+10", "1.2e+10", "0.83", "30", "1.3e+10", "1.1e+10"]
    assert len(p.simple()) == 4 + len(p.projections)
    p.lost_runs = 1
    assert "3 of 4 runs kept, 1 discarded as still warming up" in "\n".join(p.describe())
    assert "; 1 lost (worker died)" in "\n".join(p.describe())
