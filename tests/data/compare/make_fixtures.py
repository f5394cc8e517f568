"""Writes the report folders the comparison tests read: python make_fixtures.py

base/ and patched/ stand for `pagezero report --runs 3 -o DIR` on one machine
booted into two kernels: two studies (extents.json, chunks.json) of 3 runs
(processes) of 5 loops, plus files that are not results (advice.json,
report.md). patched/ clears 256MB 10% slower and is otherwise the same
within noise. other/ is base's study on another machine (CPU, caches,
memory). Deterministic: the same files every time.
"""

import json
import os
import random

from pagezero.results.resultset import Result, ResultSet

HERE = os.path.dirname(os.path.abspath(__file__))
KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
RUNS, LOOPS = 3, 5
BUILD = {"pagezero": "fixture", "build": {"compiler": "fixture", "flags": ""}}

EPYC = {
    "cpu_model": "AMD EPYC 9R14 96-Core Processor",
    "arch": "x86_64",
    "cpus_online": 2,
    "hostname": "lab1",
    "caches": [
        {"level": 1, "type": "Data", "size_bytes": 32 * KB},
        {"level": 2, "type": "Unified", "size_bytes": 1 * MB},
        {"level": 3, "type": "Unified", "size_bytes": 32 * MB},
    ],
    "memory": {"total_bytes": 16 * GB, "available_bytes": 12 * GB},
    "thp": {"enabled": "madvise", "defrag": "madvise"},
    "preemption": {"model": "voluntary", "source": "/sys/kernel/debug/sched/preempt"},
}

MACHINES = {
    "base": dict(
        EPYC,
        kernel_release="6.18.0-base",
        kernel_cmdline="root=/dev/vda1 console=ttyS0 preempt=voluntary",
    ),
    # Another kernel reserves a little more for itself: MemTotal moves by MBs.
    "patched": dict(
        EPYC,
        kernel_release="6.18.0-patched+",
        kernel_cmdline="root=/dev/vda1 console=ttyS0 preempt=voluntary",
        memory={"total_bytes": 16 * GB - 24 * MB, "available_bytes": 12 * GB},
    ),
    "other": dict(
        EPYC,
        cpu_model="Intel(R) Xeon(R) Platinum 8488C",
        hostname="lab2",
        kernel_release="6.18.0-base",
        kernel_cmdline="root=/dev/nvme0n1p1 preempt=voluntary",
        caches=[
            {"level": 1, "type": "Data", "size_bytes": 48 * KB},
            {"level": 2, "type": "Unified", "size_bytes": 2 * MB},
            {"level": 3, "type": "Unified", "size_bytes": 105 * MB},
        ],
        memory={"total_bytes": 64 * GB, "available_bytes": 60 * GB},
    ),
}

# study -> [(params, bytes/sec)]
STUDIES = {
    "extents": [
        ({"size": 4 * KB, "chunk": 0}, 110e9),
        ({"size": 1 * MB, "chunk": 0}, 95e9),
        ({"size": 256 * MB, "chunk": 0}, 60e9),
    ],
    "chunks": [
        ({"size": 64 * MB, "chunk": 8 * MB}, 29e9),
        ({"size": 64 * MB, "chunk": 32 * MB}, 58e9),
    ],
}
# (side, study, size, chunk) -> factor on the rate
CHANGES = {("patched", "extents", 256 * MB, 0): 0.90}


def study(side, name, rng):
    machine = MACHINES[side]
    results, runs = [], []
    for process in range(RUNS):
        for params, rate in STUDIES[name]:
            factor = CHANGES.get((side, name, params["size"], params["chunk"]), 1.0)
            run_rate = rate * factor * (1 + rng.gauss(0, 0.01))  # the run's placement
            size = params["size"]
            ticks = [
                max(1, int(1e9 * size / (run_rate * (1 + rng.gauss(0, 0.005)))))
                for _ in range(LOOPS)
            ]
            results.append(
                Result(
                    benchmark="memset",
                    function="x86-64-stosb",
                    params=dict(params, loops=LOOPS, page="2MB"),
                    bytes_per_loop=size,
                    clock="ns",
                    samples=ticks,
                    machine=machine,
                )
            )
            runs.append({"repetition": 0, "process": process})
    return ResultSet(results, runs, machine, build=BUILD)


def main():
    for i, side in enumerate(MACHINES):
        folder = os.path.join(HERE, side)
        os.makedirs(folder, exist_ok=True)
        for j, name in enumerate(STUDIES):
            study(side, name, random.Random(100 * i + j)).save(os.path.join(folder, f"{name}.json"))
        with open(os.path.join(folder, "advice.json"), "w") as f:
            json.dump({"knee_bytes": 32 * MB, "note": "not a results file"}, f)
            f.write("\n")
        with open(os.path.join(folder, "report.md"), "w") as f:
            f.write(f"# pagezero report ({side}, fixture)\n")


if __name__ == "__main__":
    main()
