"""A sweep's worker processes: a benchmark added with register() runs in them,
and a worker that dies loses its own repetitions only."""

import sys

import pytest

import pagezero
from pagezero.runs import sweeps

# A benchmark in a module of its own, importable by name as register() asks.
# Every call leaves a file in `mark`; the call that finds `die_at` files there
# kills its own process, as the OOM killer would.
MODULE = """
import os, signal
import pagezero

MARK = {mark!r}
DIE_AT = {die_at!r}

def run(size="64KB", loops=1):
    n = len(os.listdir(MARK))
    open(os.path.join(MARK, str(n)), "w").close()
    if n == DIE_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    return pagezero.memset(size=size, loops=loops)[0]
"""


@pytest.fixture
def bench_module(tmp_path, monkeypatch):
    """make(name, die_at=None): register a benchmark from a fresh module in tmp_path."""
    made = []

    def make(name, die_at=None):
        mark = tmp_path / f"{name}-calls"
        mark.mkdir()
        (tmp_path / f"{name}.py").write_text(MODULE.format(mark=str(mark), die_at=die_at))
        monkeypatch.syspath_prepend(str(tmp_path))
        module = __import__(name)
        sweeps.register(name, module.run)
        made.append(name)
        return module

    yield make
    for name in made:
        sweeps.BENCHMARKS.pop(name, None)
        sys.modules.pop(name, None)


def test_a_registered_benchmark_runs_in_worker_processes(bench_module):
    bench_module("pz_bench_ok")
    rs = pagezero.sweep(
        "pz_bench_ok", {"size": ["64KB"]}, repeat=2, warmup=0, processes=2, progress=False
    )
    assert [r["process"] for r in rs.runs] == [0, 1]
    assert len({r["pid"] for r in rs.runs}) == 2
    assert rs.lost == ()


def test_a_benchmark_a_worker_cannot_import_is_refused_before_anything_runs():
    calls = []
    sweeps.register("pz_lambda", lambda size="64KB": calls.append(size))
    try:
        with pytest.raises(
            ValueError, match="cannot run in a worker process: its run function is a lambda"
        ):
            pagezero.sweep("pz_lambda", {"size": ["64KB"]}, repeat=2, processes=2)
    finally:
        sweeps.BENCHMARKS.pop("pz_lambda")
    assert calls == []


def test_a_dying_worker_keeps_the_other_workers_repetitions(bench_module):
    bench_module("pz_bench_dies", die_at=1)  # the second worker's only call
    rs = pagezero.sweep(
        "pz_bench_dies", {"size": ["64KB"]}, repeat=3, warmup=0, processes=3, progress=False
    )
    assert [r["process"] for r in rs.runs] == [0, 2]
    assert [dict(x) for x in rs.lost] == [
        {"process": 1, "repetitions": (1,), "reason": "killed by SIGKILL"}
    ]
    assert rs.interrupted is None
    assert sweeps.lost_lines(rs) == [
        "pagezero: warning: worker process 1 lost (repetitions 1): killed by SIGKILL"
    ]


def test_the_lost_workers_are_saved_with_the_results(tmp_path):
    rs = pagezero.ResultSet(
        [pagezero.memset(size="64KB", loops=1)[0]],
        lost=[{"process": 1, "repetitions": [1], "reason": "killed"}],
    )
    rs.save(tmp_path / "s.json")
    back = pagezero.ResultSet.load(tmp_path / "s.json")
    assert [dict(x) for x in back.lost] == [{"process": 1, "repetitions": (1,), "reason": "killed"}]


def test_every_worker_lost_is_an_error_naming_the_first(bench_module):
    bench_module("pz_bench_all_die", die_at=0)
    with pytest.raises(RuntimeError, match="sweep worker 0 failed: killed by SIGKILL"):
        pagezero.sweep(
            "pz_bench_all_die", {"size": ["64KB"]}, repeat=1, warmup=0, processes=2, progress=False
        )


def test_runs_is_not_a_grid_parameter():
    with pytest.raises(ValueError, match="runs is not a grid parameter"):
        pagezero.sweep("memset", {"runs": [2]})
