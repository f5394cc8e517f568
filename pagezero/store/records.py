"""What the store records of a results document: its identity (the SHA-256 of its canonical
JSON: keys sorted, no whitespace, so a copy is recorded once), its metadata, its points.
"""

import datetime
import hashlib
import json
import os
import tempfile

from pagezero.results.points import summarize_points
from pagezero.results.resultset import ResultSet
from pagezero.units import parse_size

__all__ = ["Record", "read_record", "point_rows", "stored_result_set", "machine_name"]

# What a point's row keeps of its summary (results.points.point_summary).
SUMMARY = ("unit", "median", "spread_pct", "runs", "spread_of")


def machine_name(machine):
    """The name a store files a machine under: its fleet name (the Dask worker's), else
    its hostname, else ``"unknown"``."""
    return machine.get("fleet_name") or machine.get("hostname") or "unknown"


class Record:
    """One results file, read and checked: its `path`, `document` (text), `doc` (parsed),
    `result_set`, `measured_at` (ISO 8601, UTC) and `content_hash`."""

    def __init__(self, path, text, doc, result_set, measured_at):
        self.path, self.document, self.doc = path, text, doc
        self.result_set, self.measured_at = result_set, measured_at
        canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        self.content_hash = hashlib.sha256(canonical.encode()).hexdigest()

    def set_row(self, added_at):
        """The store's ``result_sets`` row for this file, column name to value."""
        m, doc = self.result_set.machine, self.doc
        version = doc.get("pagezero")  # results schema 3 records it; older files did not
        stop = doc.get("interrupted")  # the signal's name, or true for an unknown one
        row = {key: m.get(key) for key in ("hostname", "cpu_model", "kernel_release")}
        row.update(content_hash=self.content_hash, machine_name=machine_name(m))
        row.update(benchmarks=",".join(self.result_set.benchmarks), measured_at=self.measured_at)
        row.update(source=os.path.abspath(self.path), added_at=added_at, document=self.document)
        row["pagezero_version"] = version if isinstance(version, str) else None
        row["interrupted"] = (stop if isinstance(stop, str) else "yes") if stop else None
        return row


def read_record(path):
    """Read and check a results file for the store (ValueError when it is not one, or
    holds no results). Its time is the file's modification time: results files carry no
    date of their own, and ``pagezero fleet run`` sets it to the run's end."""
    result_set = ResultSet.load(path)  # validates; ValueError with the path otherwise
    if not len(result_set):
        raise ValueError(f"{path}: holds no results")
    with open(path) as f:
        text = f.read()
    mtime = datetime.datetime.fromtimestamp(os.stat(path).st_mtime, datetime.timezone.utc)
    return Record(path, text, json.loads(text), result_set, mtime.isoformat(timespec="seconds"))


def _size(params):
    size = params.get("size")
    if isinstance(size, str):
        try:
            return parse_size(size)
        except ValueError:
            return None
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def point_rows(result_set):
    """The store's ``points`` rows of a result set, one dict a point (its
    :func:`pagezero.results.points.summarize_points` summary)."""
    rows = []
    for first, summary in summarize_points(result_set).values():
        page = first.params.get("page")
        row = dict(benchmark=first.benchmark, function=first.function, size=_size(first.params))
        row.update(page=None if page is None else str(page), label=first.label())
        row["params"] = json.dumps(dict(first.params), sort_keys=True)
        rows.append(row | {key: summary[key] for key in SUMMARY})
    return rows


def stored_result_set(document_text):
    """The ResultSet of a stored document (ValueError when it is not a valid one)."""
    # ResultSet.load reads files, so the document goes through a temporary one.
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(document_text)
        f.flush()
        return ResultSet.load(f.name)
