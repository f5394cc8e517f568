"""predict from what the kernel does: the sampled clearing share of the fault time (details
["profile"], as faults(..., profile=True) records it) times the fault time is the kernel's
clear, and each policy scales it by its replay over the running policy's. Synthetic
profiles only, shaped as measured: an Intel Xeon VM's 2MB faults (96% clear_page_erms, the
replay slower than the kernel, where subtraction finds no fit), an AMD Zen 4 VM's (the
replay faster, both models fit); a refused profile falls back to subtraction and says so;
a run's fault time comes from the loops its rate kept.
"""

import json
import math

import pytest
from helpers.profiles import sampled
from test_predict import check_json_shape, synthetic_prediction

import pagezero
from pagezero.measure.profile import wilson
from pagezero.results.result import Result
from pagezero.results.resultset import ResultSet
from pagezero.studies.predict import study as measure_module
from pagezero.studies.predict.model import Inside, inside, observed
from pagezero.studies.predict.replays import from_7_0, nontemporal_kernels, pre_7_0, running_kernel

MB2 = 2 << 20
NTS = nontemporal_kernels()
REFUSED = "perf_event_paranoid is 3 (not root): run as root, or echo 1 > it"
GROUPS = ("page allocation", "page tables", "memcg accounting", "fault entry and return")


def profile(share, samples=2000):
    """A profile as faults(..., profile=True) records it: `share` in clear_page_erms, the
    rest spread over the groups."""
    return sampled(share, samples, (*GROUPS, "user space", "other"))


def fault_run(fault_us, prof):
    """One fault run of two 2MB faults per loop, each taking `fault_us` of CPU time
    (details["thread_cpu_ns"]), sampled as `prof` (None: not sampled)."""
    ns = int(fault_us * 1000)
    details = {"thread_cpu_ns": ((2 * ns,) * 2,), "profile": prof}
    return Result("mmap", "demand", {"page": "2MB"}, 4 << 20, "ns", [2 * ns] * 2, details=details)


def replay_run(point, us):
    ns = int(us * 1000)
    params = {"strategy": point["strategy"], "batch_bytes": MB2, "backing": "hugetlb"}
    params["nt_kernel"] = point.get("nt_kernel")
    return Result("folio", point["kernel"], params, MB2, "ns", [ns] * 3)


# Per run: fault us, its clearing share; replays (us): the running policy's, 7.0's with
# clear_pages()'s kernel, the fastest non-temporal walk's.
INTEL = dict(
    faults=[(235.0, 0.96), (236.0, 0.97), (237.0, 0.95)],  # 8.9 GB/s
    replays=(247.0, 233.0, 107.0),  # 8.5, 9.0, 19.6 GB/s: rep stosb slower than the kernel's
)
AMD = dict(
    faults=[(168.0, 0.90), (169.0, 0.91), (170.0, 0.89)],  # 12.4 GB/s
    replays=(143.6, 120.0, 60.0),  # 14.6 GB/s: the replay explains 85%
)


@pytest.fixture
def measured(monkeypatch, fake):
    """predict() on shaped runs: measured(shape, refused=False) -> the Prediction, and
    the keywords the fault runs were asked with."""
    fake.set(total=4, free=4)
    asked = {}
    monkeypatch.setattr(measure_module, "SAMPLED", {"profile": True})
    era = (None, "kallsyms hidden")  # the release decides, whatever kernel runs the tests
    monkeypatch.setattr(measure_module, "running_kernel", lambda info: running_kernel(info, era))
    monkeypatch.setattr(
        measure_module,
        "machine",
        lambda: {"kernel_release": "6.18.0", "preemption": {"model": "none"}, "thp": {}},
    )

    def run(shape, refused=False):
        def faults(runs=1, **args):
            if runs == 1:  # the warm-up pass, not sampled
                return ResultSet([fault_run(1000.0, None)])
            asked.setdefault("runs", []).append(args)
            if not args.get("profile"):  # the fault time's runs
                return ResultSet([fault_run(us, None) for us, _ in shape["faults"]])
            # The sampled runs: sampling's cost inside the fault slows them, which the fault
            # time must not see.
            profiles = [{"refused": REFUSED} if refused else profile(s) for _, s in shape["faults"]]
            return ResultSet(
                [fault_run(3 * us, p) for (us, _), p in zip(shape["faults"], profiles)]
            )

        def across_processes(benchmark, points, runs):
            own, seven, nt = shape["replays"]
            rs = []
            for p in points:
                if p.get("nt_kernel") or p["kernel"] in NTS:
                    us = nt + NTS.index(p.get("nt_kernel") or p["kernel"])
                else:
                    us = own if p["strategy"] == pre_7_0(MB2).strategy else seven
                rs += [replay_run(p, us * (1 + 0.002 * i)) for i in range(runs)]
            return ResultSet(rs)

        monkeypatch.setattr(measure_module, "faults", faults)
        monkeypatch.setattr(measure_module, "across_processes", across_processes)
        return pagezero.predict("2MB", runs=3, size="4MB", loops=2)

    return run, asked


def seven_with_clear_pages(p):
    return next(x for x in p.projections if x.replay.policy == "7.0" and not x.replay.nontemporal)


def test_intel_2mb_projects_where_subtraction_does_not_fit(measured):
    run, asked = measured
    p = run(INTEL)
    # The fault time from runs without sampling, the share from runs with it, none timing
    # each fault on its own.
    assert [a.get("profile", False) for a in asked["runs"]] == [False, True]
    assert not any(a.get("latency") for a in asked["runs"])
    # Subtraction: the replay explains 105%, the remainder below zero in every run.
    # (run i's replays take 1 + 0.2% i as long: the median run is the second)
    assert p.explained == pytest.approx(247 * 1.002 / 236) and p.cross_check == []
    assert "does not fit this machine" in p.verdict
    # Observed: 96% of 236 us is the kernel's clear; 7.0 scales it by 233/247.
    assert p.model == "observed" and p.sampling is None
    assert p.observed.clear_s == pytest.approx(0.96 * 236e-6)
    seven = seven_with_clear_pages(p)
    t = 236e-6 * (1 - 0.96 + 0.96 * 233 / 247)
    assert seven.bytes_per_sec == pytest.approx(MB2 / t, rel=1e-3)
    assert seven.low < seven.bytes_per_sec < seven.high
    # The interval: the share's 95..97% and the faults' 235..237 us at the bounds' corners
    # (the ratio is the same in every run): a faster policy gains least where the kernel
    # clears least, so the slowest fault with the least share.
    worst = 237e-6 * (1 - 0.95 + 0.95 * 233 / 247)
    assert seven.low == pytest.approx(MB2 / worst, rel=1e-3)
    if NTS:
        nt = next(x for x in p.projections if x.replay.policy == "7.0" and x.replay.nontemporal)
        assert nt.bytes_per_sec / p.fault_bytes_per_sec > 1.9  # the non-temporal stores' 2x
    answers = p.answers()
    assert answers[1] == (
        "2MB: the kernel clears for 96% (95..97%, 75% interval, 3 runs) of the fault "
        "(clear_page_erms, rep "
        "stosb): 226.6 of 236.0 us, the rest 9.4 us"
    )
    assert any(line.startswith("7.0 with ") and "->" in line for line in answers)
    assert answers[-1] == (
        "cross-check: the replay alone would explain 105% of the fault time, against 96% "
        "sampled (subtraction does not fit)"
    )
    doc = json.loads(json.dumps(p.to_json()))
    check_json_shape(doc)
    assert doc["model"] == "observed" and doc["clearing_share"] == 0.96
    assert doc["kernel_clear_us"] == pytest.approx(226.56)
    assert doc["observed_remainder_us"] == pytest.approx(9.44)
    assert doc["observed"]["clearing_routines"] == ["clear_page_erms, rep stosb"]
    assert doc["observed"]["low"] == 0.95 and doc["observed"]["spread_of"] == "runs"
    # min..max of 3 runs is the sign test's 75% interval, not 95%: the level is said.
    assert doc["observed"]["level"] == 0.75
    share = doc["estimators"]["clearing_share"]
    assert share["per_run"] == [0.96, 0.97, 0.95] and share["runs"] == 3
    assert share["level"] == 0.75 and "separate runs with sampling" in share["estimator"]
    assert doc["estimators"]["fault_time"]["per_run_us"] == pytest.approx([235.0, 236.0, 237.0])
    assert doc["explained"] > 1.04 and doc["cross_check"] == [] and doc["projections"]


def test_amd_2mb_projects_with_both_models_side_by_side(measured):
    run, _ = measured
    p = run(AMD)
    assert p.model == "observed" and p.explained == pytest.approx(143.6 * 1.002 / 169, rel=1e-5)
    assert len(p.cross_check) == len(p.projections) > 0
    by_subtraction = next(x for x in p.cross_check if x.replay == seven_with_clear_pages(p).replay)
    assert by_subtraction.bytes_per_sec == pytest.approx(
        MB2 / ((169 - 23.6 * 1.002) * 1e-6), rel=1e-5
    )
    observed_7 = seven_with_clear_pages(p).bytes_per_sec
    assert observed_7 == pytest.approx(MB2 / (169e-6 * (0.1 + 0.9 * 120 / 143.6)), rel=1e-3)
    assert p.answers()[-1].endswith(
        "against 90% sampled (subtraction fits too: its projections are the cross-check)"
    )
    text = "\n".join(p.describe())
    assert "# every projection, observed model, GB/s" in text
    assert "# every projection by subtraction, the cross-check, GB/s" in text
    assert (
        "  clearing share           90% of the fault, sampled (89%..91%, 75% interval, 3 runs"
        in text
    )
    assert text.count("# assumed:") == 2 and "as the replays' clears do" in text


def test_a_refused_profile_falls_back_to_subtraction_and_says_so(measured):
    run, _ = measured
    p = run(AMD, refused=True)
    assert p.model == "subtraction" and p.observed is None and p.cross_check == []
    assert p.sampling == f"sampling refused: {REFUSED}"
    assert p.answers()[1] == f"2MB: sampling refused: {REFUSED}: today's subtraction model answers"
    seven = seven_with_clear_pages(p)
    assert seven.bytes_per_sec == pytest.approx(MB2 / ((169 - 23.6 * 1.002) * 1e-6), rel=1e-5)
    doc = p.to_json()
    assert doc["model"] == "subtraction" and doc["sampling"] == p.sampling
    assert doc["clearing_share"] is None and doc["observed"] is None
    assert "cross-check" not in "\n".join(p.describe())


def test_a_refused_profile_on_intel_projects_nothing_and_says_both(measured):
    run, _ = measured
    p = run(INTEL, refused=True)
    assert p.projections == [] and p.answers()[1].startswith("2MB: sampling refused:")
    assert p.answers()[2].startswith("2MB: nothing projected: the replay explains 105%")


# A run's fault time: the loops its rate kept --------------------------------------


def test_a_runs_fault_time_is_its_mean_cpu_time_per_fault_over_the_kept_loops():
    # Two threads, two kept loops of 8MB each (four 2MB faults a thread a loop): 16 faults
    # in 3.2 ms of CPU time; the loops' wall time, 10 ms each, is not the fault's.
    details = {"thread_cpu_ns": ((700_000, 900_000), (800_000, 800_000))}
    r = Result("mmap", "demand", {"page": "2MB"}, 16 << 20, "ns", [10**7] * 2, details=details)
    seconds = measure_module._seconds_per_fault(r, MB2)
    assert seconds == pytest.approx(3.2e-3 / 16)


def test_the_core_gives_each_loops_median_fault():
    [r] = pagezero.faults("4MB", page="4KB", loops=3, latency=True)
    lat = r.details["latency"]
    kept = 3 - r.details.get("warmup", {}).get("loops", 0)
    assert len(lat["loop_p50_ns"]) == kept
    assert all(lat["min_ns"] <= x <= lat["max_ns"] for x in lat["loop_p50_ns"])


# The share over runs and the observed model ------------------------------------------


def test_inside_over_runs_is_the_median_and_the_spread():
    seen = inside([fault_run(100.0, profile(s)) for s in (0.5, 0.3, 0.4)])
    assert isinstance(seen, Inside)
    assert (seen.share, seen.low, seen.high) == (0.4, 0.3, 0.5) and seen.spread_of == "runs"
    assert seen.samples == 6000 and seen.routines == ("clear_page_erms, rep stosb",)
    assert seen.groups["page tables"] == pytest.approx(0.1)
    assert seen.share_text() == "40% (30..50%, 75% interval, 3 runs)" and seen.level == 0.75
    assert seen.per_run == (0.5, 0.3, 0.4)


def test_inside_one_run_is_an_interval_over_its_samples():
    seen = inside([fault_run(100.0, profile(0.96, samples=400))])
    lo, hi = wilson(384, 400)
    assert (seen.low, seen.high) == (lo, hi) and lo < 0.96 < hi < 1
    assert 0.93 < lo and hi < 0.98 and seen.spread_of == "samples"
    assert seen.share_text() == "96% (94..98%, 95% interval, 400 samples, 1 run)"


@pytest.mark.parametrize(
    "profiles, why",
    [
        ([None], "the faults were not sampled"),
        ([profile(0.9), None], "the faults were not sampled"),
        ([profile(0.9), {"refused": REFUSED}], f"sampling refused: {REFUSED}"),
        ([profile(0.9, samples=0)], "sampling took no samples in the faults"),
        ([profile(0.0), profile(0.0)], "sampling saw no clearing routine in the faults"),
    ],
)
def test_inside_says_why_there_is_none(profiles, why):
    assert inside([fault_run(100.0, p) for p in profiles]) == why


def test_the_observed_model_keeps_the_fault_and_scales_only_the_clear():
    o = observed(MB2, [200e-6], 0.75, 0.75, 0.75)
    assert math.isclose(o.clear_s, 150e-6) and math.isclose(o.remainder_s, 50e-6)
    # Twice as fast a replay halves the kernel's clear, whatever the replay's own speed.
    for scale in (0.5, 1.0, 3.0):
        x = o.project(from_7_0(MB2, "full"), [0.5], [75e-6 * scale])
        assert math.isclose(x.bytes_per_sec, MB2 / 125e-6)
        assert math.isclose(x.low, x.high) and math.isclose(
            x.replay_bytes_per_sec, MB2 / (75e-6 * scale)
        )


@pytest.mark.parametrize("share, low, high", [(0.5, 0.6, 0.7), (1.1, 0.9, 1.2), (0.5, -0.1, 0.6)])
def test_the_observed_model_refuses_a_share_outside_its_bounds(share, low, high):
    with pytest.raises(ValueError, match="share"):
        observed(MB2, [1e-4], share, low, high)


def test_the_synthetic_prediction_is_subtractions():
    assert synthetic_prediction().model == "subtraction"
