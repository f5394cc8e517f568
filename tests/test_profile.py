"""Inside the fault: faults(profile=True) samples a real fault workload's timed loops
(csrc/sample.c), names the kernel's routines from /proc/kallsyms and sorts them
(pagezero.measure.profile); where sampling is refused the run goes on and says why
(PAGEZERO_REFUSE_PROFILE makes the C core refuse as perf_event_paranoid would)."""

import errno
import json
import math
import os
from types import SimpleNamespace

import pytest
from conftest import ok, pagezero_cli, require_hugepages
from helpers.profiles import fake_kernel, made_up

import pagezero
from pagezero.measure import profile as inside
from pagezero.results.result import thawed


def _sampling_refusal():
    """Why this machine cannot sample the kernel (not root, paranoid, kptr_restrict), or None."""
    why = inside.refusal()
    if why:
        return why
    rs = pagezero.faults("4MB", loops=1, profile=True)
    return rs[0].details["profile"].get("refused")


@pytest.fixture(scope="module")
def can_sample():
    why = _sampling_refusal()
    if why:
        pytest.skip(f"perf events cannot sample the kernel here: {why}")


def check_profile(p):
    """The structure of a sampled details["profile"], whatever the machine."""
    assert p["samples"] > 0 and p["lost"] >= 0
    assert p["event"] in ("cycles", "cpu-clock")
    assert set(p["groups"]) == set(inside.GROUP_NAMES)
    assert math.isclose(sum(p["groups"].values()), 1.0)
    assert math.isclose(sum(s["share"] for s in p["symbols"]), 1.0)
    assert all(s["group"] in inside.GROUP_NAMES for s in p["symbols"])
    low, high = p["clearing_interval"]
    assert 0 <= low <= p["clearing_share"] <= high <= 1
    table = inside.clearing_routines()
    assert p["clearing_routines"], "a demand fault run sampled no clearing routine"
    for r in p["clearing_routines"]:
        assert r["symbol"] in table and r["source"] == table[r["symbol"]].source
    assert math.isclose(
        sum(r["share"] for r in p["clearing_routines"]), p["clearing_share"], rel_tol=1e-9
    )
    # How the clear was found: the era kallsyms shows (or that it is unknown), not the release.
    assert p["clearing_found"].startswith("clearing found by ")
    json.dumps(thawed(p))  # JSON for scripts


@pytest.mark.parametrize("threads", [1, 2])
def test_a_demand_fault_run_is_profiled(can_sample, threads):
    rs = pagezero.faults("64MB", loops=2, threads=threads, profile=True)
    p = rs[0].details["profile"]
    check_profile(p)
    assert rs[0].bytes_per_sec > 0
    share, low, high = inside.clearing_share(rs)
    assert (share, low, high) == (p["clearing_share"], *p["clearing_interval"])
    agrees, sentence = inside.routine_check(rs)
    assert agrees in (True, False, None) and p["clearing_routines"][0]["symbol"] in sentence


@pytest.mark.owns_hugepage_pools
def test_hugetlb_faults_are_profiled(can_sample):
    # As root the run grows the pool by what it lacks and gives it back (CI runs as root).
    if os.geteuid() != 0:
        require_hugepages("2MB", 8)
    rs = pagezero.faults("16MB", page="2MB", loops=2, profile=True, reserve=True)
    check_profile(rs[0].details["profile"])


def test_a_refused_profile_says_why_and_the_run_goes_on(switch):
    switch(PAGEZERO_REFUSE_PROFILE="1")
    rs = pagezero.faults("16MB", loops=2, profile=True)
    why = rs[0].details["profile"]["refused"]
    assert why and "\n" not in why
    assert "root" in why or "paranoid" in why or "container" in why, why
    assert rs[0].bytes_per_sec > 0 and len(rs[0].samples) == 2
    assert inside.clearing_share(rs) is None
    agrees, sentence = inside.routine_check(rs)
    assert agrees is None and "refused" in sentence


def test_the_cli_prints_the_block_or_why_not(can_sample):
    out = ok(pagezero_cli("mem", "mmap", "-f", "demand", "-s", "32MB", "-l", "2", "--profile"))
    assert "# inside the fault: " in out and "% clearing (" in out and "# samples: " in out
    refused = pagezero_cli(
        "mem",
        "mmap",
        "-f",
        "demand",
        "-s",
        "16MB",
        "-l",
        "2",
        "--profile",
        env=dict(os.environ, PAGEZERO_REFUSE_PROFILE="1"),
    )
    out = ok(refused)
    lines = [line for line in out.splitlines() if line.startswith("# inside the fault")]
    assert len(lines) == 1 and "not sampled" in lines[0] and "went on" in lines[0]


def test_profile_must_be_a_bool():
    with pytest.raises(ValueError, match="profile must be True or False"):
        pagezero.faults("4MB", loops=1, profile="yes")


# The naming and the sums, on samples made up -----------------------------------------

_SYMBOLS = ((0x1000, "clear_page_rep"), (0x2000, "exc_page_fault"), (0x3000, "_raw_spin_lock"))


@pytest.fixture
def x86_kernel(monkeypatch):
    """A kernel of three symbols on x86-64 before 7.0, whose registry assumes rep stosb."""
    fake_kernel(monkeypatch, _SYMBOLS)


def test_samples_are_named_and_grouped(x86_kernel):
    p = inside.summarize(made_up([0x1010] * 6 + [0x2008] * 2 + [0x3000], user=1))
    assert p["samples"] == 10 and p["lost"] == 3
    assert p["clearing_share"] == pytest.approx(0.6)
    assert [r["symbol"] for r in p["clearing_routines"]] == ["clear_page_rep"]
    assert p["clearing_routines"][0]["source"] == "arch/x86/lib/clear_page_64.S"
    assert p["groups"]["fault entry and return"] == pytest.approx(0.2)
    assert p["groups"]["page tables and their locks"] == pytest.approx(0.1)
    assert p["groups"]["user space"] == pytest.approx(0.1)
    # A Wilson interval over 10 samples is wide, and holds the share.
    low, high = p["clearing_interval"]
    assert low < 0.6 < high and high - low > 0.3


def test_a_routine_other_than_the_assumed_one_is_said_plainly(x86_kernel):
    agrees, sentence = inside.routine_check(inside.summarize(made_up([0x1000] * 4)))
    assert agrees is False
    assert "clear_page_rep (rep stosq)" in sentence and "not x86-64-stosb" in sentence
    assert "page_64.h" in sentence


def test_the_assumed_routine_agrees(monkeypatch, x86_kernel):
    monkeypatch.setattr(inside, "clear_pages_kernel", lambda: "x86-64-stosq")
    agrees, sentence = inside.routine_check(inside.summarize(made_up([0x1000] * 4)))
    assert agrees is True and "as assumed" in sentence


def test_the_share_across_runs_is_a_median_with_an_interval(x86_kernel):
    runs = [
        SimpleNamespace(
            details={"profile": inside.summarize(made_up([0x1000] * k + [0x2000] * (10 - k)))}
        )
        for k in (2, 5, 6, 7, 9, 4)
    ]
    share, low, high = inside.clearing_share(runs)
    assert share == pytest.approx(0.55) and low <= share <= high
    assert (low, high) == (pytest.approx(0.2), pytest.approx(0.9))


def test_hidden_kernel_addresses_are_a_refusal(monkeypatch):
    monkeypatch.setattr(inside.kallsyms, "table", lambda *_: ((), ()))
    why = inside.refusal()
    assert "kptr_restrict" in why and "sysctl kernel.kptr_restrict=0" in why
    rs = pagezero.faults("4MB", loops=1, profile=True)
    assert rs[0].details["profile"] == {"refused": why}


def test_samples_weigh_their_period(x86_kernel):
    # cycles at freq=1 gives each sample its own period: three times the cycles count three
    # times; the interval stays one of 6 samples, wide.
    raw = made_up([0x1000] * 2 + [0x2000] * 2, user=2, kernel_periods=(3000, 3000, 1000, 1000))
    p = inside.summarize(dict(raw, user_period=2000, other_period=0))
    assert p["samples"] == 6
    assert p["clearing_share"] == pytest.approx(0.6)
    assert p["groups"]["user space"] == pytest.approx(0.2)
    low, high = p["clearing_interval"]
    assert (low, high) == pytest.approx(inside.wilson(0.6 * 6, 6)) and high - low > 0.5


@pytest.mark.parametrize("k, n", [(0, 7), (3, 10), (10, 10), (512, 2000)])
def test_the_wilson_interval_is_scipys(k, n):
    from scipy import stats as sps

    ci = sps.binomtest(k, n).proportion_ci(0.95, method="wilson")
    assert inside.wilson(k, n) == pytest.approx((ci.low, ci.high))


@pytest.mark.parametrize("n", [1, 3, 7, 10, 99, 4093])
def test_the_wilson_interval_holds_a_share_of_none_or_all(n):
    # A period-weighted share of 1.0 once came out above its interval's high end by rounding.
    assert inside.wilson(n, n)[1] >= 1.0 and inside.wilson(0, n)[0] <= 0.0


def test_a_failed_sample_ring_mmap_names_the_mlock_limit():
    why = inside.summarize({"refused": errno.EPERM, "stage": "mmap"})["refused"]
    assert "perf_event_mlock_kb" in why and "ulimit -l" in why and "seccomp" not in why
    assert "\n" not in why
    assert "mmap" not in inside.summarize({"refused": errno.EPERM})["refused"]  # open, as before


@pytest.mark.parametrize(
    "kptr, paranoid, uid, says",
    [
        (2, 1, 0, "even from root): sysctl kernel.kptr_restrict=1 and run as root"),
        (1, 1, 1000, "run as root"),
        (0, 2, 1000, "kernel.perf_event_paranoid=1"),
        (0, 1, 0, "a security module"),
    ],
)
def test_hidden_kernel_addresses_say_what_shows_them(monkeypatch, kptr, paranoid, uid, says):
    # kernel/kallsyms.c kallsyms_show_value(): 2 hides from root too, 1 shows root only, 0 shows
    # others only where perf_event_paranoid <= 1.
    monkeypatch.setattr(inside.kallsyms, "table", lambda *_: ((), ()))
    sysctl = {"kptr_restrict": kptr, "perf_event_paranoid": paranoid}
    monkeypatch.setattr(inside, "read_int", lambda path: sysctl[os.path.basename(path)])
    monkeypatch.setattr(inside.os, "geteuid", lambda: uid)
    why = inside.refusal()
    assert says in why and "\n" not in why
    assert ("even from root" in why) == (kptr == 2)


def _runs(*ks, samples=10, **profile):
    """Runs whose profiles put k of `samples` samples in clear_page_rep."""
    return [
        SimpleNamespace(
            details={
                "profile": dict(
                    inside.summarize(made_up([0x1000] * k + [0x2000] * (samples - k))), **profile
                )
            }
        )
        for k in ks
    ]


def test_the_interval_prints_its_real_level(x86_kernel):
    # min..max of 3 runs covers the median 75% of the time, not 95%.
    three = _runs(4, 5, 6)
    assert inside.clearing_estimate(three)[3] == pytest.approx(0.75)
    first = inside.lines(three)[0]
    assert "median of 3 runs, 75% interval 40%-60%" in first, first
    assert "95% interval" in inside.lines(three[:1])[0]
    assert inside.clearing_share(three) == inside.clearing_estimate(three)[:3]


def test_lines_say_the_lost_samples_and_the_share_with_the_warmup(x86_kernel):
    out = inside.lines(_runs(5, 6, 7, all_loops={"clearing_share": 0.3, "loops": 5}))
    assert "; 30% with the warm-up loops" in out[0]
    assert any("(cpu-clock, 9 lost)" in line for line in out)
    assert "with the warm-up" not in inside.lines(_runs(5))[0]
