"""Output the commands share: tables in the --format asked for, the lines that
describe measured conditions, and the -o file, saved whatever happens."""

import contextlib
import dataclasses
import json
import sys

from pagezero.interrupt import as_interrupted, deferred
from pagezero.measure.mem import thread_rates, thread_spread
from pagezero.results.resultset import Result, ResultSet
from pagezero.units import gbps

__all__ = [
    "emit",
    "gbs",
    "format_ns",
    "condition_row",
    "condition_lines",
    "Measured",
    "interrupted_line",
]


def emit(args, rows, text_lines, simple_keys):
    """Print rows as --format asks: the text table, one line of numbers per row, or JSON.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (its ``format``).
    rows : list of dict
        The rows, as JSON prints them.
    text_lines : list of str
        The text table.
    simple_keys : sequence of str
        The keys of a row that ``--format simple`` prints, in order.
    """
    if args.format == "json":
        print(json.dumps(rows, indent=1))
    elif args.format == "simple":
        for row in rows:
            print(" ".join(f"{row[k]:f}" for k in simple_keys))
    else:
        print("\n".join(text_lines))


def gbs(rate):
    """A rate in GB/s, 10^9 bytes per second (pagezero.units says which GB).

    Parameters
    ----------
    rate : float
        The rate, in bytes/sec.

    Returns
    -------
    str
        Two decimals.
    """
    return f"{gbps(rate):.2f}"


def format_ns(ns):
    """A duration in the largest unit that keeps it at 1 or more: "1.50 ms".

    Parameters
    ----------
    ns : float
        The duration in nanoseconds.

    Returns
    -------
    str
        Two decimals in s, ms or us, or whole ns.
    """
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def condition_row(result):
    """The measured conditions of a policy result, for --format json rows.

    Parameters
    ----------
    result : pagezero.Result
        A batch or folio result.

    Returns
    -------
    dict
    """
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
    """Comment lines below a policy table: cold mode, threads, counters (first result's
    conditions; every row ran under the same).

    Parameters
    ----------
    results : sequence of pagezero.Result
        The table's results.
    what : str
        What is flushed before each clear in cold mode ("folio", "batch's range").

    Returns
    -------
    list of str
    """
    r0, lines = results[0], []
    d = r0.details
    if "cold_method" in d:
        lines.append(
            f"# cache cold: each {what} flushed with {d['cold_method']} before its "
            f"timed clear (the flushes are not timed)"
        )
    if "node" in r0.params:
        lines.append(f"# memory bound to NUMA node {r0.params['node']}")
    for r in results:
        if len(r.details.get("thread_samples", ())) > 1:
            mean, spread = thread_spread(r)
            lines.append(
                f"# {r.params.get('batch', '')}: {len(r.details['thread_samples'])} "
                f"threads on CPUs {', '.join(map(str, r.details['cpus']))}, each "
                f"clearing its own region: {gbs(r.bytes_per_sec)} GB/s aggregate, "
                f"{gbs(mean)} GB/s/thread ( +- {spread:.2f}% )"
            )
        if "counters" in r.details:
            loops = len(r.samples)
            label = r.params.get("strategy", r.params.get("batch"))
            lines.append(
                f"# {label} counters per loop: "
                + ", ".join(
                    f"{name} {sum(v) / loops:.0f}" for name, v in r.details["counters"].items()
                )
            )
    return lines


def _marked(result, signame):
    """The partial result marked interrupted, where Result has the field for it."""
    if any(f.name == "interrupted" for f in dataclasses.fields(result)):
        return dataclasses.replace(result, interrupted=signame)
    return result


def interrupted_line(stop, what):
    """The one line on stderr after a signal: `what` says what was kept.

    Parameters
    ----------
    stop : pagezero.Interrupted
        The stop signal.
    what : str
        What was kept, appended as is ("; saved to x.json").

    Returns
    -------
    str
    """
    return f"pagezero: interrupted by {stop.signame}{what}"


class Measured:
    """The results a command has measured, saved to -o on the way out whatever
    happens: complete, after an error (what ran), or after a signal (what ran,
    with the partial run the signal cut short, the file marked interrupted).

    `planned`: the loops the command means to run, for "after N of M loops".
    """

    def __init__(self, output, planned, unit="loops"):
        self.output, self.planned, self.unit = output, planned, unit
        self.results = []  # counted in "N of M"
        self.extra = []  # saved too (headroom's clears), not counted
        # With --runs: each result's run description (its process), and the
        # worker processes lost (pagezero.runs.processes); saved with the results.
        self.runs, self.lost = [], []

    def _save(self, interrupted=None):
        results = self.results + self.extra
        if not (self.output and results):
            return False
        # Held signals: a second Ctrl-C cannot leave the file half written.
        with deferred():
            # ResultSet.interrupted is a flag today; the signal's name says more
            # once it keeps one.
            runs = self.runs + [{}] * (len(results) - len(self.runs))
            ResultSet(results, runs, interrupted=interrupted, lost=self.lost).save(self.output)
        return True

    @contextlib.contextmanager
    def saving(self):
        """A context in which results are measured into ``self.results``: on leaving
        it, and on a stop signal inside it, they are saved to the output file with
        the signal that stopped them; the signal is then raised again, marked as
        reported.
        """
        try:
            yield self
        except KeyboardInterrupt as e:
            stop = as_interrupted(e)
            # Held to the end: a second signal cannot cut the save from its line.
            with deferred():
                partial = stop.partial
                if isinstance(partial, Result):
                    self.results.append(_marked(partial, stop.signame))
                elif isinstance(partial, ResultSet):
                    self.results += [_marked(r, stop.signame) for r in partial.results]
                done = sum(r.loops for r in self.results)
                saved = self._save(interrupted=stop.signame)
                kept = (
                    f"; saved to {self.output}"
                    if saved
                    else "; nothing measured"
                    if not done
                    else "; not saved (no -o)"
                )
                print(
                    interrupted_line(stop, f" after {done} of {self.planned} {self.unit}{kept}"),
                    file=sys.stderr,
                )
                stop.reported = True
            raise stop from None
        except BaseException:
            self._save()  # a failure part-way still keeps what was measured
            raise
        else:
            self._save()
