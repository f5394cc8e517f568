"""pagezero.predict() and `pagezero predict`: the pipeline on synthetic
measurements, bad input, a stop signal, and a real measurement at tiny sizes
where this machine has 2MB pages (hugetlb or THP)."""

import json
import signal

import pytest
from conftest import check_environment_error, check_usage_error, free_hugepages, ok, pagezero_cli
from test_predict import check_json_shape, synthetic_prediction

import pagezero
from pagezero.cli import main
from pagezero.interrupt import Interrupted
from pagezero.results.result import Result
from pagezero.results.resultset import ResultSet
from pagezero.studies.predict import Prediction
from pagezero.studies.predict import study as measure_module
from pagezero.studies.predict.replays import (
    PREEMPT_MODES,
    nontemporal_kernels,
    pre_7_0,
    running_kernel,
)
from pagezero.system import machine as sysinfo
from pagezero.system.kernels import clear_pages_kernel

MB2 = 2 << 20


def thp_mode():
    return sysinfo.machine()["thp"]["enabled"]


def least_size():
    """The least fault size predict takes here (twice the LLC), at least 4MB."""
    return str(max(measure_module.minimum_fault_size("2MB", sysinfo.machine()) or 0, 4 << 20))


def has_2mb_pages():
    return free_hugepages("2MB") >= int(least_size()) // MB2 or thp_mode() in ("always", "madvise")


needs_2mb_pages = pytest.mark.skipif(
    not has_2mb_pages(),
    reason=f"needs 2MB pages for the faults: {int(least_size()) // MB2} free 2MB hugepages or "
    "THP (always|madvise); "
    f"THP is {thp_mode()!r} and {free_hugepages('2MB')} 2MB hugepages are free",
)

# The pipeline on synthetic measurements ---------------------------------------------


def fault_result(rate):
    """One unsampled fault run of 8MB per loop whose 2MB faults take 1/`rate` s of CPU time
    each (details["thread_cpu_ns"]); its loops' wall time, with the mmap and the time the
    scheduler ran another thread, four times that, which the fit must not see."""
    fault_ns = int(MB2 / rate * 1e9)
    cpu = ((4 * fault_ns,) * 2,)  # one thread, two kept loops of four faults
    loop = 4 * 4 * fault_ns
    details = {"thread_cpu_ns": cpu}
    return Result("mmap", "demand", {"page": "2MB"}, 8 << 20, "ns", [loop, loop], details=details)


def folio_result(strategy, batch_bytes, kernel, clear_us, nt_kernel=None):
    ns = int(clear_us * 1000)
    params = {"strategy": strategy, "batch_bytes": batch_bytes, "backing": "hugetlb"}
    return Result("mmap", kernel, dict(params, nt_kernel=nt_kernel), MB2, "ns", [ns, ns, ns])


NTS = nontemporal_kernels()


def synthetic_clear_us(point):
    """The replays' clears: the running kernel's 170 us, 7.0's 120 us; with non-temporal
    stores 7.0 fastest with the first kernel (90 us, then 1 us more each), the 2012 walk
    with the last (140 us, then 1 us less each)."""
    if point.get("nt_kernel"):
        return 140.0 - NTS.index(point["nt_kernel"])
    if point["kernel"] in NTS:
        return 90.0 + NTS.index(point["kernel"])
    return 170.0 if point["strategy"] == pre_7_0(MB2).strategy else 120.0


@pytest.fixture
def synthetic(monkeypatch, fake):
    """predict() on a fake 2MB pool with synthetic fault runs (the first one
    warming up) and replays: 2MB faults of 200 us, the running kernel's replay
    170 us, 7.0's 120 us. Records the pool's size during the runs."""
    seen = {}
    fake.set(total=0, free=0)

    def faults(runs=1, **args):
        assert not args.get("latency"), "no fault timed on its own: thread CPU time per loop"
        seen.setdefault("pool", fake.get("total"))
        if runs == 1:  # the warm-up pass
            seen["warm"] = args["loops"]
            return ResultSet([fault_result(1e9)])
        seen.setdefault("sampled", []).append(bool(args.get("profile")))
        per_fault = MB2 / 200e-6
        return ResultSet([fault_result(r) for r in [per_fault / 8, per_fault, per_fault]])

    def across_processes(benchmark, points, runs):
        assert benchmark == "folio"
        seen["points"] = points
        rs = []
        for p in points:
            us, nt = synthetic_clear_us(p), p.get("nt_kernel")
            rs += [folio_result(p["strategy"], MB2, p["kernel"], us, nt) for _ in range(runs)]
        return ResultSet(rs)

    monkeypatch.setattr(measure_module, "faults", faults)
    monkeypatch.setattr(measure_module, "across_processes", across_processes)
    # The symbols cannot say (as where kptr_restrict hides them): the release decides.
    era = (None, "kallsyms hidden")
    monkeypatch.setattr(measure_module, "running_kernel", lambda info: running_kernel(info, era))
    monkeypatch.setattr(
        measure_module,
        "machine",
        lambda: {
            "kernel_release": "6.18.44",
            "preemption": {"model": "full", "source": "x"},
            "thp": {"enabled": "never"},
        },
    )
    return seen, fake


def test_predict_pipeline_on_synthetic_runs(synthetic):
    seen, fake = synthetic
    p = pagezero.predict("2MB", runs=3, reserve=True, size="8MB", loops=2)
    assert seen["pool"] == 4 and fake.get("total") == 0, "reserved for the runs, given back"
    assert seen["warm"] == 1 and "warmed the pool first" in p.warm_up
    # The fault time from runs without sampling, the share from as many runs with it.
    assert seen["sampled"] == [False, True]
    assert (p.runs, p.discarded_runs) == (3, 1)
    fault_time = p.to_json()["estimators"]["fault_time"]
    assert fault_time["estimator"].startswith("mean on-CPU time per fault")
    assert fault_time["per_run_us"] == pytest.approx([200.0, 200.0], rel=1e-3)
    assert fault_time["us"] == pytest.approx(200.0, rel=1e-3) and fault_time["runs"] == 2
    assert any(line.startswith("# fault time: mean on-CPU") for line in p.describe())
    assert p.fault_pages == "2MB hugetlb" and p.preempt == "full"
    assert p.replay.policy == "pre-7.0" and p.replay.strategy == "page-at-a-time"
    assert p.explained == pytest.approx(170 / 200, rel=1e-3)
    assert p.remainder_us == pytest.approx(30.0, rel=1e-3)
    # Each policy with clear_pages()'s stores (but the running one) and with the fastest
    # non-temporal kernel.
    with_nt = [("pre-7.0", "any", True)] if NTS else []
    for m in PREEMPT_MODES:
        with_nt += [("7.0", m, False)] + ([("7.0", m, True)] if NTS else [])
    got = [(x.replay.policy, x.replay.preempt, x.replay.nontemporal) for x in p.projections]
    assert got == with_nt
    seven = [x for x in p.projections if x.replay.policy == "7.0"]
    assert seven[0].bytes_per_sec == pytest.approx(MB2 / 150e-6, rel=1e-3)
    if NTS:
        assert p.nontemporal_kernels == NTS
        nt_7_0 = [x for x in seven if x.replay.nontemporal]
        assert {x.replay.kernel for x in nt_7_0} == {NTS[0]}  # 90 us: the fastest
        assert nt_7_0[0].bytes_per_sec == pytest.approx(MB2 / 120e-6, rel=1e-3)
        proposal = p.projections[0]
        assert proposal.replay.kernel == NTS[-1]  # the 2012 walk's fastest
        assert proposal.replay.strategy == "nocache-except-target"
    # One replay per distinct walk: the running policy and 7.0's (32MB = whole for 2MB), and
    # with each non-temporal kernel the 2012 walk and 7.0's.
    assert len(seen["points"]) == 2 + 2 * len(NTS)
    nocache = [pt for pt in seen["points"] if pt["strategy"] == "nocache-except-target"]
    assert sorted(pt["nt_kernel"] for pt in nocache) == sorted(NTS)
    assert {pt["kernel"] for pt in nocache} <= {clear_pages_kernel()}
    assert all(pt["cache"] == "cold" and pt["size"] == "2MB" for pt in seen["points"])
    check_json_shape(json.loads(json.dumps(p.to_json())))


def test_a_7_0_kernel_projects_only_what_clears_otherwise(synthetic, monkeypatch):
    # 7.0 under preempt=full, 2MB: every model is today's walk with clear_pages()'s kernel,
    # so pre-7.0 and the non-temporal projections (the 2012 proposal among them) remain.
    info = {"kernel_release": "7.0.1", "preemption": {"model": "full"}, "thp": {"enabled": "never"}}
    monkeypatch.setattr(measure_module, "machine", lambda: info)
    p = pagezero.predict("2MB", runs=3, reserve=True, size="8MB", loops=2)
    assert p.replay.policy == "7.0" and p.replay.strategy == "neighbourhood-last"
    own = [x.replay.policy for x in p.projections if not x.replay.nontemporal]
    assert own == ["pre-7.0"]
    assert len(p.projections) == 1 + (1 + len(PREEMPT_MODES)) * bool(NTS)
    if NTS:
        assert "all four preemption models project the same" in p.answers()[-1]


def test_predict_projects_nothing_when_the_model_does_not_fit(synthetic, monkeypatch):
    real = measure_module.across_processes

    def slow_replays(benchmark, points, runs):  # the replay: 100 us of 200: 50%
        rs = real(benchmark, points, runs)
        return ResultSet(
            [
                folio_result(r.params["strategy"], MB2, r.function, 100.0, r.params["nt_kernel"])
                for r in rs.results
            ]
        )

    monkeypatch.setattr(measure_module, "across_processes", slow_replays)
    p = pagezero.predict("2MB", runs=3, reserve=True, size="8MB", loops=2)
    assert p.explained == pytest.approx(0.5, rel=1e-3)
    assert p.projections == [] and "does not fit this machine" in p.verdict
    assert p.to_json()["projections"] == []


def test_predict_refuses_a_remainder_below_zero_across_the_runs(synthetic, monkeypatch):
    real = measure_module.across_processes

    def slower_replays(benchmark, points, runs):  # the replay: 205 us of 200, every run
        rs = real(benchmark, points, runs)
        return ResultSet(
            [
                folio_result(r.params["strategy"], MB2, r.function, 205.0, r.params["nt_kernel"])
                for r in rs.results
            ]
        )

    monkeypatch.setattr(measure_module, "across_processes", slower_replays)
    p = pagezero.predict("2MB", runs=3, reserve=True, size="8MB", loops=2)
    assert p.explained == pytest.approx(1.025, rel=1e-3)  # within 60%..110%
    assert p.remainder_us == pytest.approx(-5.0, abs=0.01)
    assert p.projections == [] and "does not fit this machine" in p.verdict
    assert "remainder -5.0 us per fault (-5.0..-5.0 across the runs)" in p.verdict
    # Not sampled (faults() without profile=): today's model answers, and says so.
    assert p.sampling == "the faults were not sampled" and p.model == "subtraction"
    assert p.answers()[1] == "2MB: the faults were not sampled: today's subtraction model answers"
    assert p.answers()[2].startswith("2MB: nothing projected: the replay explains 102%")


def test_predict_refuses_faults_within_twice_the_llc(synthetic, monkeypatch):
    # The replays clear a cold folio: the faults must not clear folios still in the cache.
    l3 = {"level": 3, "type": "Unified", "size_bytes": 32 << 20, "source": "s"}
    info = {"kernel_release": "6.18.44", "preemption": {"model": "full"}, "thp": {}}
    monkeypatch.setattr(measure_module, "machine", lambda: dict(info, caches=[l3]))
    with pytest.raises(ValueError, match=r"size 8MB is under twice the LLC \(32MB, sysfs\).*64MB"):
        pagezero.predict("2MB", runs=1, reserve=True, size="8MB", loops=1)
    assert measure_module.minimum_fault_size("1GB", {"caches": [l3]}) == 1 << 30
    assert measure_module.minimum_fault_size("2MB", {"caches": []}) is None


def test_predict_refuses_init_on_alloc_thp_faults_before_measuring(synthetic, monkeypatch):
    seen, _ = synthetic
    info = {
        "kernel_release": "6.12.5",
        "preemption": {"model": "full"},
        "thp": {"enabled": "always"},
        "init_on_alloc": {"value": True},
    }
    monkeypatch.setattr(measure_module, "machine", lambda: info)
    with pytest.raises(pagezero.PagezeroError, match="clears its folio twice.*--reserve"):
        pagezero.predict("2MB", runs=1, size="8MB", loops=1)
    assert "warm" not in seen and "sampled" not in seen  # nothing measured


def test_the_replays_take_4kb_pages_where_the_linear_map_is(synthetic, monkeypatch):
    seen, _ = synthetic
    linear = {"pages": "4KB", "source": "/proc/cmdline rodata=full"}
    info = {"kernel_release": "6.18.44", "preemption": {"model": "full"}, "thp": {}}
    monkeypatch.setattr(measure_module, "machine", lambda: dict(info, linear_map=linear))
    p = pagezero.predict("2MB", runs=3, reserve=True, size="8MB", loops=2)
    assert {pt["backing"] for pt in seen["points"]} == {"4KB"}
    assert p.replay_pages.startswith("4KB pages, as the kernel's linear map")
    assert "# replays on 4KB pages" in "\n".join(p.describe())
    assert p.to_json()["replay_pages"] == p.replay_pages


def test_predict_without_pages_names_the_fix(synthetic):
    with pytest.raises(pagezero.MappingError, match="not enough 2MB hugepages.*--reserve"):
        pagezero.predict("2MB", runs=1, size="8MB", loops=1)


# Bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"page": "4MB"}, "page must be one of 2MB, 1GB"),
        ({"page": "4KB"}, "page must be one of"),
        ({"runs": 0}, "runs must be a positive int"),
        ({"runs": True}, "runs must be a positive int"),
        ({"size": "3MB"}, "not a whole number of 2MB pages"),
        ({"loops": 0}, "loops"),
        ({"replay_loops": 0}, "loops"),
    ],
)
def test_api_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pagezero.predict(**kwargs)


@pytest.mark.parametrize(
    "args",
    [
        ["-p", "4MB"],
        ["-p", ""],
        ["--runs", "0"],
        ["--runs", "-1"],
        ["--runs", "x"],
        ["-s", "3MB"],
        ["-l", "0"],
        ["--format", "xml"],
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(args):
    check_usage_error(pagezero_cli("predict", *args))


@pytest.mark.skipif(free_hugepages("1GB") > 0, reason="a free 1GB hugepage is reserved here")
def test_cli_1gb_without_pages_exits_1_naming_the_fix():
    proc = pagezero_cli("predict", "-p", "1GB", "--runs", "1")
    check_environment_error(proc, "not enough 1GB hugepages", "nr_hugepages", "--reserve")


# A stop signal -------------------------------------------------------------------------


def test_ctrl_c_prints_and_saves_the_partial_and_exits_130(monkeypatch, tmp_path, capsys):
    partial = synthetic_prediction(fits=False)
    partial.interrupted = "SIGINT"

    def stopped(*args, **kwargs):
        raise Interrupted(signal.SIGINT, partial=partial)

    monkeypatch.setattr("pagezero.cli.studies.predict", stopped)
    out = tmp_path / "p.json"
    assert main(["predict", "-o", str(out)]) == 130
    captured = capsys.readouterr()
    assert "interrupted by SIGINT" in captured.out and "fault rate" in captured.out
    assert captured.err.strip() == f"pagezero: interrupted by SIGINT; saved to {out}"
    saved = json.loads(out.read_text())
    assert saved["interrupted"] == "SIGINT" and saved["runs"] == 4


def test_ctrl_c_before_anything_was_measured(monkeypatch, capsys):
    def stopped(*args, **kwargs):
        raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr("pagezero.cli.studies.predict", stopped)
    assert main(["predict"]) == 143
    assert capsys.readouterr().err.strip() == "pagezero: interrupted by SIGTERM; nothing measured"


# A real measurement at tiny sizes --------------------------------------------------------


@needs_2mb_pages
def test_cli_json_from_a_real_tiny_run(tmp_path):
    out = tmp_path / "predict.json"
    proc = pagezero_cli(
        "predict", "-p", "2MB", "-s", least_size(), "-l", "1", "--runs", "2", "--format", "json",
        "-o", out,
    )  # fmt: skip
    doc = json.loads(ok(proc))
    assert json.loads(out.read_text()) == doc
    check_json_shape(doc)
    assert doc["page"] == "2MB" and doc["runs"] == 2 and 0 <= doc["discarded_runs"] <= 1
    assert doc["replay_policy"] in ("pre-7.0", "7.0")
    assert doc["fault_pages"].startswith("2MB")
    fits = doc["verdict"].endswith("the model fits")
    assert fits is (0.60 <= doc["explained"] <= 1.10 and doc["remainder_interval_us"][1] >= 0)
    # Each policy with clear_pages()'s kernel (the running one aside) and with the fastest
    # non-temporal one.
    expected = len(PREEMPT_MODES) * (1 + bool(NTS)) + bool(NTS)
    # The observed model projects whether or not subtraction fits.
    assert len(doc["projections"]) == (expected if fits or doc["model"] == "observed" else 0)
    assert doc["answers"][0].startswith("2MB demand faults today: ")
    assert doc["explained"] == pytest.approx(
        doc["fault_bytes_per_sec"] / doc["replay_bytes_per_sec"], rel=1e-9
    )


@needs_2mb_pages
def test_cli_text_from_a_real_tiny_run():
    out = ok(pagezero_cli("predict", "-s", least_size(), "-l", "1", "--runs", "1"))
    assert out.startswith("2MB demand faults today: ") and "GB/sec" not in out
    assert "# warmed the pool first" in out
    assert "explained" in out and "us per fault" in out
    assert out.count("# assumed:") == 2


@pytest.mark.skipif(free_hugepages("1GB") < 1, reason="needs a free 1GB hugepage; none reserved")
def test_1gb_replays_the_gigantic_policy():
    p = pagezero.predict("1GB", runs=1, loops=1, replay_loops=1)
    assert isinstance(p, Prediction) and p.page == "1GB" and p.fault_pages == "1GB hugetlb"
    assert p.replay.strategy == ("sequential" if p.replay.policy == "7.0" else "front-to-back")
