"""A fake sweepable benchmark and the results it makes: the sweeps, results files
and interruption tests run the sweep machinery on it, fast and without the C core."""

import contextlib
import dataclasses

from pagezero.interrupt import Interrupted
from pagezero.results.resultset import Result
from pagezero.runs import sweeps

MACHINE = {
    "cpu_model": "Test CPU",
    "kernel_release": "6.0.0-test",
    "caches": [
        {
            "level": 3,
            "type": "Unified",
            "size_bytes": 32 << 20,
            "shared_cpu_list": "0-1",
            "source": "fixture",
        }
    ],
}


def make_result(
    function="a", size=4096, samples=(1000, 1100), benchmark="fake", machine=MACHINE, **params
):
    return Result(
        benchmark=benchmark,
        function=function,
        params=dict(size=size, **params),
        bytes_per_loop=size,
        clock="ns",
        samples=samples,
        machine=machine,
    )


class Fake:
    """A sweepable benchmark: records each call's parameters; raises
    KeyboardInterrupt on call number `interrupt_at` (1-based), or, with
    `signum`, Interrupted(signum) carrying the one loop it completed, as a
    run of the C core does when a stop signal cuts it short."""

    def __init__(self, interrupt_at=None, signum=None):
        self.calls = []
        self.interrupt_at = interrupt_at
        self.signum = signum

    def run(self, function="a", size=4096, loops=2):
        self.calls.append({"function": function, "size": size, "loops": loops})
        if len(self.calls) == self.interrupt_at:
            if self.signum is None:
                raise KeyboardInterrupt
            cut = dataclasses.replace(
                make_result(function, size, samples=[7], loops=loops), interrupted=self.signum.name
            )
            raise Interrupted(self.signum, partial=cut)
        return make_result(function, size, samples=[1000 + i for i in range(loops)], loops=loops)


@contextlib.contextmanager
def registered_fake():
    """A Fake registered as the benchmark "fake", unregistered afterwards."""
    f = Fake()
    sweeps.register(
        "fake",
        lambda function="a", size=4096, loops=2: f.run(function, size, loops),
        check=lambda function="a", size=4096, loops=2: _check_fake(size),
    )
    try:
        yield f
    finally:
        sweeps.BENCHMARKS.pop("fake", None)


def _check_fake(size):
    if size <= 0:
        raise ValueError(f"size must be positive, not {size}")


def key(d):
    return (d["function"], d["size"])


def point_key(result):
    return (result.function, result.params["size"])


GRID6 = {"function": ["a", "b"], "size": [4096, 8192, 16384]}  # 6 points
POINTS6 = {(f, s) for f in GRID6["function"] for s in GRID6["size"]}


def orders(rs):
    """{repetition: [point, ...] in the order run}."""
    out = {}
    for r, run in zip(rs.results, rs.runs):
        out.setdefault(run["repetition"], []).append(point_key(r))
    return out
