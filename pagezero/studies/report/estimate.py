"""The report's time left: each study's seconds from its sizes at rates measured here (Pace)."""

import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from pagezero.measure import fault, mem
from pagezero.measure.mem import SETTLE_MIN_LOOPS
from pagezero.runs.sweeps import default_sizes
from pagezero.studies.advise.study import SWEEPS
from pagezero.studies.cache import extent_points
from pagezero.studies.predict.replays import every_policy, nontemporal_policies
from pagezero.studies.predict.study import REPLAY_LOOPS
from pagezero.studies.report.chunks import chunk_points
from pagezero.studies.report.cold import cold_points
from pagezero.studies.report.pages import page_points
from pagezero.studies.report.pools import study_needs
from pagezero.studies.report.predict import QUICK_REPLAY_LOOPS, fault_size
from pagezero.system.backing import Backing
from pagezero.system.kernels import kernels
from pagezero.system.machine import llc_bytes
from pagezero.units import parse_size

# Seconds each study spends around its measuring, each batch advise records and each visit
# of its cells beyond its bytes (a batch() call reads smaps twice): on an AMD EPYC VM.
STUDY_S = 1.0
BATCH_S = 2e-7
VISIT_S = 0.03


@dataclass(frozen=True)
class Pace:
    """This machine's rates (bytes/s): clear, mapping and faults; a process's start (s)."""

    clear: float
    map_small: float
    map_huge: float
    fault: float
    huge_fault: float
    start: float

    def mapping(self, nbytes, huge):
        """Seconds to map a buffer of `nbytes` on 2MB pages (`huge`) or 4KB ones, and unmap it."""
        return nbytes / (self.map_huge if huge else self.map_small)


def measure_pace(nbytes, times=3):
    """Pace over `nbytes`, each rate the median of `times` (on a VM one can be twice the next)."""
    # Memory this process has not touched yet may be new to the host as well, which then
    # faults it in first, five to ten times slower (measure.mem.warming_runs): once untimed.
    mem.memset(nbytes, loops=1, thp=True)
    rates = []
    for _ in range(times):
        # A point's mapping on 4KB pages runs at the 4KB demand faults' rate.
        small, huge = (
            fault.faults(nbytes // 2, loops=1, thp=thp).bytes_per_sec for thp in (False, True)
        )
        # A memset point's mapping: its wall time less its loop, for the estimate only.
        began = time.monotonic()
        r = mem.memset(nbytes, loops=1, thp=True)
        mapping = nbytes / max(time.monotonic() - began - nbytes / r.bytes_per_sec, 1e-6)
        rates.append((r.bytes_per_sec, mapping, small, huge))
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", "import pagezero"], check=True, cwd=os.sep)
    clear, map_huge, small, huge = map(statistics.median, zip(*rates))
    return Pace(clear, small, map_huge, small, huge, time.monotonic() - began)


def sweep_seconds(points, runs, warmup, pace):
    """A study's points swept as sweep_points() does: mapped and cleared in each pass."""
    per_pass = 0.0
    for p in points:
        huge = p.get("page") == "2MB" or bool(p.get("thp"))
        # Its timed loops and those settling its buffer (a usual climb).
        loops = p.get("loops", 1) + min(p.get("settle", 0), SETTLE_MIN_LOOPS + 2)
        per_pass += pace.mapping(p["size"], huge) + p["size"] * loops / pace.clear
    shapes = len({tuple(sorted((k, v) for k, v in p.items() if k != "function")) for p in points})
    starts = shapes * runs if runs > 1 else 0
    return runs * (warmup + 1) * per_pass + starts * pace.start


def _extents(cfg, info, functions, pace, quick):
    extents = list(cfg["extents"] or default_sizes(info))
    if cfg.get("extend_extents"):
        # Two doublings, as a VM's fall to its plateau usually needs (studies.cache.extend),
        # within a quarter of the memory available.
        room = (info.get("memory") or {}).get("available_bytes") or 1 << 62
        extents += [e for e in (2 * max(extents), 4 * max(extents)) if e <= room // 4]
    points = extent_points(extents, functions, Backing("hugetlb").region_args())
    return sweep_seconds(points, cfg["runs"], 0, pace)  # no warm-up pass: each point settles


def _threads(cfg, info, functions, pace, quick):
    size, cpus = cfg["thread_size"], len(os.sched_getaffinity(0))
    return cpus * (pace.mapping(size, False) + 3 * size / pace.clear)


def _faults(cfg, info, functions, pace, quick):
    # Each page size's demand and populate runs (one sweep), then its headroom's faults and
    # clears; the hugetlb sizes as reserved (root) or found.
    seconds, runs = 0.0, cfg["runs"]
    hugetlb = ((page, False) for page in study_needs("faults", cfg, True))
    for page, thp in (("4KB", False), ("4KB", True), *hugetlb):
        size = max(cfg["fault_size"], parse_size(page))
        loops = size * cfg["fault_loops"]
        faults = loops / (pace.huge_fault if thp or page != "4KB" else pace.fault)
        seconds += 2 * runs * (cfg["warmup"] + 1) * faults + (runs * pace.start if runs > 1 else 0)
        if page != "4KB" or not thp:
            seconds += faults + loops * len(functions) / pace.clear
    return seconds


def _advice(cfg, info, functions, pace, quick):
    a = SWEEPS["quick" if quick else "default"]
    cells = len([k for k in kernels("clear") if k.available]) * len(a["extents"])
    visits = a["runs"] * a["rounds"] * cells * (a["passes"] + 1)
    batches = sum(a["region"] // e for e in a["extents"]) * visits / len(a["extents"])
    starts = a["runs"] * pace.start if a["runs"] > 1 else 0
    calls = visits / (a["passes"] + 1)
    return visits * a["region"] / pace.clear + batches * BATCH_S + calls * VISIT_S + starts


def _predict(cfg, info, functions, pace, quick):
    # Per page: a warm-up, then fault runs without sampling and as many with, then every walk
    # replayed on a cold folio, the scrub buffer (twice sysfs's LLC, measure.policy.folios)
    # read before each clear.
    scrub = max(2 * (llc_bytes(info) or 32 << 20), 16 << 20)
    seconds = 0.0
    for page in ("2MB",) if quick else ("2MB", "1GB"):
        folio = 2 << 20 if page == "2MB" else 1 << 30
        size = fault_size(page, cfg, info)
        seconds += (2 * cfg["runs"] * cfg["fault_loops"] + 1) * size / pace.huge_fault
        walks = len(every_policy(folio)) + len(nontemporal_policies(folio)) + 1
        loops = (QUICK_REPLAY_LOOPS if quick else REPLAY_LOOPS)[page]
        seconds += walks * cfg["runs"] * loops * (scrub + folio) / pace.clear
        seconds += 3 * cfg["runs"] * pace.start
    return seconds


# The studies estimated from their points (made as the study makes them), and by a function.
SWEPT = dict(chunks=chunk_points, pages=page_points)
OWN_ESTIMATE = dict(
    extents=_extents, threads=_threads, faults=_faults, advice=_advice, predict=_predict
)


def study_seconds(name, cfg, info, functions, pace, quick):
    """The seconds study `name` should take here: its points at `pace`."""
    runs, warmup = cfg["runs"], cfg["warmup"]
    if name in SWEPT:
        points = SWEPT[name](cfg, functions, Backing("hugetlb"))
        return STUDY_S + sweep_seconds(points, runs, warmup, pace)
    if name == "cold":
        # A cold loop flushes its extent first: about a fault's worth of time per byte.
        points = cold_points(cfg, info, functions)
        cold = sum(p["size"] * p["loops"] for p in points if p["cache"] == "cold")
        return STUDY_S + sweep_seconds(points, runs, warmup, pace) + runs * cold / pace.fault
    # A study not there (a program's own): its tables and files only.
    measure = OWN_ESTIMATE.get(name)
    return STUDY_S + (measure(cfg, info, functions, pace, quick) if measure else 0.0)
