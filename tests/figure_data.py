"""Synthetic result sets for the figure, report.html, publish and browser tests:
every kernel of this machine's registry over extents from 4KB to 256MB, so that
the families, colours and the cache and batch marks are all drawn; and a small
store of two machines' result sets (make_store)."""

import os
import random

from pagezero.results.resultset import Result, ResultSet
from pagezero.store import Store
from pagezero.system.kernels import kernels

KB, MB = 1 << 10, 1 << 20

MACHINE = {
    "cpu_model": "Test CPU 9000",
    "hostname": "testbox",
    "kernel_release": "6.99.0-test",
    "caches": [
        {"level": 1, "type": "Data", "size_bytes": 48 * KB},
        {"level": 2, "type": "Unified", "size_bytes": 1 * MB},
        # The LLC at the 32MB batch of Linux 7.0: the two marks share one x.
        {"level": 3, "type": "Unified", "size_bytes": 32 * MB},
    ],
}

EXTENTS = [4 * KB << i for i in range(17)]  # 4KB .. 256MB


def point(function, size, rate, runs, loops=4, noise=0.01, seed=0, benchmark="memset", **params):
    """`runs` Results (one per process) of one point at about `rate` bytes/sec."""
    rng = random.Random(seed)
    out = []
    for _ in range(runs):
        ticks = [int(1e9 * size / (rate * (1 + rng.gauss(0, noise)))) for _ in range(loops)]
        out.append(
            Result(
                benchmark=benchmark,
                function=function,
                params={"size": size, "chunk": 0, "loops": loops, "page": "2MB", **params},
                bytes_per_loop=size,
                clock="ns",
                samples=ticks,
                machine=MACHINE,
            )
        )
    return out


def result_set(groups, machine=MACHINE):
    """Each group's Results as the runs (processes) of one point."""
    runs = [{"process": i} for g in groups for i in range(len(g))]
    return ResultSet([r for g in groups for r in g], runs, machine=machine)


def names():
    """The clearing kernels of this machine's registry, available or not."""
    return [k.name for k in kernels("clear")]


def extents_set(runs=3, functions=None, machine=MACHINE):
    """Every kernel at every extent, rates that differ per kernel and extent."""
    groups = []
    for i, f in enumerate(functions or names()):
        for j, e in enumerate(EXTENTS):
            rate = (20 + 5 * i + (30 if e < 32 * MB else 0)) * 1e9
            groups.append(point(f, e, rate, runs, seed=100 * i + j))
    return result_set(groups, machine)


DAY = 86400


def _set(host, rate, seed):
    machine = dict(MACHINE, hostname=host)
    kernels = names()[:2]
    groups = [
        point(k, size, rate * (1 + i), 3, seed=seed + 10 * i + j)
        for i, k in enumerate(kernels)
        for j, size in enumerate((1 * MB, 64 * MB))
    ]
    return result_set(groups, machine)


def make_store(folder):
    """Two machines, two result sets each a day apart, one of them in a report
    folder beside its report.html."""
    files = []
    for n, (host, rate) in enumerate(
        [("alpha", 10e9), ("beta", 12e9), ("alpha", 11e9), ("beta", 12.5e9)]
    ):
        sub = folder / f"r{n}"
        sub.mkdir()
        path = sub / "extents.json"
        _set(host, rate, seed=100 * n).save(str(path))
        os.utime(path, (1.7e9 + n * DAY, 1.7e9 + n * DAY))
        files.append(str(path))
    (folder / "r0" / "report.html").write_text("<!DOCTYPE html><title>r</title>")
    store_path = str(folder / "store.sqlite")
    with Store(store_path, create=True) as store:
        store.add(files)
    return store_path
