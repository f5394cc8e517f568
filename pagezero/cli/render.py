"""What the measuring commands share: figures, the lines on conditions and pages, JSON,
--runs N's fresh processes pooled, and what a stop signal keeps."""

import contextlib
import dataclasses
import json
import math
import signal
import statistics
import sys
from collections import Counter
from itertools import chain

from pagezero.files import atomic_write
from pagezero.interrupt import Interrupted, as_interrupted, deferred, received
from pagezero.measure.mem import thread_rates, thread_spread
from pagezero.results.points import point_summary
from pagezero.results.resultset import Result, ResultSet
from pagezero.runs.processes import across_processes
from pagezero.runs.sweeps import lost_lines
from pagezero.system.backing import Backing, thp_warning
from pagezero.units import format_gbps


def print_json(doc):
    print(json.dumps(doc, indent=1))


def write_json(path, doc):
    """Write doc to path as results are written: renamed into place, signals held meanwhile."""
    with deferred():
        atomic_write(path, lambda f: f.write(json.dumps(doc, indent=1) + "\n"))


def format_ns(ns):
    """A duration in the largest unit that keeps it at 1 or more: "1.50 ms"."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def counters_per_loop(result):
    """Each counter's mean per loop, by name."""
    return {k: sum(v) / len(result.samples) for k, v in result.details["counters"].items()}


def condition_row(result):
    """The measured conditions of a batch or folio result, for --format json rows."""
    row = {k: result.params[k] for k in ("cache", "threads", "node") if k in result.params}
    d = result.details
    if "cold_method" in d:
        row["cache_flush"] = d["cold_method"]
    if "thread_samples" in d:
        row["thread_bytes_per_sec"] = list(thread_rates(result) or ())
        row["cpus"] = list(d["cpus"])
    if "counters" in d:
        row["counters"] = {name: list(v) for name, v in d["counters"].items()}
    return row


def condition_lines(results, what):
    """Lines below a batch or folio table: cold mode, node, threads, counters."""
    r0, lines = results[0], []  # every row ran under the same conditions
    if "cold_method" in r0.details:
        flushed = f"each {what} flushed with {r0.details['cold_method']} before its timed clear"
        lines.append(f"# cache cold: {flushed} (the flushes are not timed)")
    if "node" in r0.params:
        lines.append(f"# memory bound to NUMA node {r0.params['node']}")
    for r in results:
        d = r.details
        if len(d.get("thread_samples", ())) > 1:
            mean, spread = thread_spread(r)
            lines.append(
                f"# {r.params.get('batch', '')}: {len(d['thread_samples'])} threads on CPUs "
                f"{', '.join(map(str, d['cpus']))}, each clearing its own region: "
                f"{format_gbps(r.bytes_per_sec, 2)} aggregate, {format_gbps(mean, 2)}/thread "
                f"( +- {spread:.2f}% )"
            )
        if "counters" in d:
            label = r.params.get("strategy", r.params.get("batch"))
            counts = ", ".join(f"{k} {v:.0f}" for k, v in counters_per_loop(r).items())
            lines.append(f"# {label} counters per loop: {counts}")
    return lines


def huge_share(result):
    """'90%' of the buffer on huge pages, rounded down as thp_warning (99.9% is not 100%)."""
    return f"{math.floor(result.details['huge_share'] * 100)}%"


def backing_heading(results):
    """The pages the results cleared, e.g. "2MB THP pages, 100% on huge pages per smaps"."""
    parts = []
    for r in results:
        share = f", {huge_share(r)} on huge pages per smaps" if "huge_share" in r.details else ""
        parts.append(f"{Backing(r.params.get('backing', '4KB')).label} pages{share}")
    return "; ".join(dict.fromkeys(parts))  # several when runs got different pages


def backing_row(result):
    """The JSON row's backing and, for THP, huge_share (a fraction)."""
    row = {"backing": result.params.get("backing", "4KB")}
    if "huge_share" in result.details:
        row["huge_share"] = result.details["huge_share"]
    return row


def backing_lines(results, name):
    """For stderr: why the pages are not hugetlb, and a warning per THP buffer short of them."""
    notes = (r.details.get("backing_note") for r in results)
    lines = list(dict.fromkeys(f"# pages: {note}" for note in notes if note))
    for r in results:
        if "huge_share" in r.details:
            warning = thp_warning(r.details["huge_share"], r.details["buffer_bytes"])
            if warning:
                lines.append(f"pagezero: warning: {name(r)}: {warning}")
    return lines


def interrupted_line(stop, what):
    """The one line on stderr after a signal; `what` says what was kept."""
    return f"pagezero: interrupted by {stop.signame}{what}"


def stopped(name=None):
    """The Interrupted of a signal a sweep or the report caught, `name` if results say which."""
    return Interrupted(getattr(signal, name or "", None) or received() or signal.SIGINT)


@contextlib.contextmanager
def on_stop(keep):
    """On a stop signal, keep(stop) keeps what it can and says what in the one line."""
    try:
        yield
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        # Held to the end: a second signal cannot cut the save from its line.
        with deferred():
            print(interrupted_line(stop, keep(stop)), file=sys.stderr)
            stop.reported = True
        raise stop from None


def loops_run(result):
    """The loops `result` measured, those a fault run's warm-up rule left out included."""
    details = getattr(result, "details", None) or {}
    return result.loops + details.get("warmup", {}).get("loops", 0)


def _marked(result, signame):
    if any(f.name == "interrupted" for f in dataclasses.fields(result)):
        return dataclasses.replace(result, interrupted=signame)
    return result


class Measured:
    """A command's results, saved to -o on the way out (marked interrupted after a signal)."""

    def __init__(self, output, planned, names=None, runs=1):
        # planned: the loops meant in all; names: -f all's functions, each planned/runs/n a run.
        self.output, self.planned = output, planned
        self.names, self.runs_meant = list(names or ()), runs
        self.results = []  # counted in "N of M"
        self.extra = []  # saved too (headroom's clears), not counted
        self.runs, self.lost = [], []  # with --runs: each result's run, the workers lost

    def _save(self, interrupted=None):
        results = self.results + self.extra
        if not (self.output and results):
            return False
        with deferred():  # a second Ctrl-C cannot leave the file half written
            runs = self.runs + [{}] * (len(results) - len(self.runs))
            ResultSet(results, runs, interrupted=interrupted, lost=self.lost).save(self.output)
        return True

    def _keep(self, stop):
        partial, signame = stop.partial, stop.signame
        if isinstance(partial, Result):
            self.results.append(_marked(partial, signame))
        elif isinstance(partial, ResultSet):
            self.results += [_marked(r, signame) for r in partial.results]
        done = sum(loops_run(r) for r in self.results)
        if self._save(interrupted=signame):
            kept = f"; saved to {self.output}"
        else:
            kept = "; not saved (no -o)" if done else "; nothing measured"
        return f" after {self._progress(done)}{kept}"

    def _progress(self, done):
        """How far the run came: loops, or with several functions, functions (and runs) too."""
        if len(self.names) < 2:
            return f"{done} of {self.planned} loops"
        n = len(self.names)
        each = self.planned // (n * self.runs_meant)  # one function's loops in one run
        if self.runs_meant > 1:  # a run is whole when its n functions all ran their loops
            runs = zip(self.results, self.runs)
            whole = Counter(run.get("process") for r, run in runs if loops_run(r) == each)
            done_runs = sum(count == n for count in whole.values())
            return f"{done_runs} of {self.runs_meant} runs of {n} functions, {each} loops each"
        cut = [r for r in self.results if loops_run(r) != each]
        line = f"{len(self.results) - len(cut)} of {n} functions, {each} loops each"
        if cut:
            line += f", and {loops_run(cut[-1])} loops of {cut[-1].function}"
        return line

    @contextlib.contextmanager
    def saving(self):
        """Measure into self.results; they are saved on leaving, and on a stop signal."""
        try:
            with on_stop(self._keep):
                yield self
        except BaseException as e:
            if not isinstance(e, KeyboardInterrupt):  # a stop signal: on_stop saved it
                self._save()  # a failure part-way still keeps what was measured
            raise
        self._save()


def each_point(args, measured, common, key, names, here):
    """Per name (a value of `key`), its Results, kept in `measured` as they come."""
    # --runs N: from N fresh processes, all at the end; else as `here` yields them (None: skipped).
    if args.runs == 1:
        for result in here:
            if result is not None:
                measured.results.append(result)
                yield [result]
        return
    points = [dict(common, **{key: n}) for n in names]
    try:
        rs = across_processes(args.command, points, args.runs, progress=not args.quiet)
    except Interrupted as e:
        if e.partial is not None:  # the runs measured, and the cut run's loops, are kept
            _keep(measured, e.partial)
            e.partial = None
        raise
    _keep(measured, rs)
    by_name = {name: [] for name in names}
    for r in rs.results:
        by_name.setdefault(r.function if key == "function" else r.params[key], []).append(r)
    yield from (by_name[name] for name in names)


def _keep(measured, rs):
    measured.results += rs.results
    measured.runs += rs.runs
    measured.lost += rs.lost
    for line in lost_lines(rs):
        print(line, file=sys.stderr)


def pooled(results):
    """One point's Results of several runs as one, holding the loops of every run (docs/cli.rst)."""
    first = results[0]
    if len(results) == 1:
        return first
    per_loop = [n for n in ("samples", "pass_worst_ns", "touch_ns", "cold_ns") if hasattr(first, n)]
    changes = {n: tuple(v for r in results for v in getattr(r, n)) for n in per_loop}
    if getattr(first, "batch_ns", None):
        changes["batch_ns"] = {
            k: (max if k == "max" else statistics.median)(r.batch_ns[k] for r in results)
            for k in first.batch_ns
        }
    details = dict(first.details)
    every = [r.details for r in results]
    if "thread_samples" in details:
        by_thread = zip(*(d["thread_samples"] for d in every))
        details["thread_samples"] = [list(chain(*samples)) for samples in by_thread]
    if "counters" in details:
        counters = details["counters"]
        details["counters"] = {k: list(chain(*(d["counters"][k] for d in every))) for k in counters}
    if "pages" in details:
        details["pages"] = list(chain(*(d["pages"] for d in every)))
    return dataclasses.replace(first, **changes, details=details)


def _summary(results):
    return point_summary([r.values() for r in results], results[0].unit)


def runs_row(results):
    """--format json's runs and between_runs_pct; empty for fewer than 2 results."""
    if len(results) < 2:
        return {}
    s = _summary(results)
    return {"runs": s["runs"], "between_runs_pct": s["spread_pct"]}


def between_runs_line(results, what=""):
    """`# N runs: between runs +- X.X%`, the spread of one point's runs' medians."""
    s = _summary(results)
    if s["runs"] < 2:
        return f"# 1 run{what}: no spread between runs (the others were lost or not run)"
    return f"# {s['runs']} runs{what}: between runs +- {s['spread_pct']:.1f}%"
