"""What the store records of a results document: its identity, its metadata, its points.

A result set is identified by its content: the SHA-256 of its document in a
canonical JSON form (keys sorted, no whitespace), so the same file added twice,
or a copy of it, is recorded once, whatever its name or modification time.
"""

import datetime
import hashlib
import json
import os

from pagezero.results.points import summarize_points
from pagezero.results.resultset import ResultSet
from pagezero.units import parse_size

__all__ = ["Record", "read_record", "point_rows", "stored_result_set", "machine_name"]


def machine_name(machine):
    """The name a store files a machine under.

    Parameters
    ----------
    machine : dict
        A results file's machine metadata.

    Returns
    -------
    str
        Its name in a fleet (the Dask worker's name), else its hostname, else
        ``"unknown"``.
    """
    return machine.get("fleet_name") or machine.get("hostname") or "unknown"


def _pagezero_version(doc):
    # Results schema 3 records it at the top as "pagezero"; older files did not.
    version = doc.get("pagezero")
    return version if isinstance(version, str) else None


def _interrupted(doc):
    value = doc.get("interrupted")
    if not value:
        return None
    return value if isinstance(value, str) else "yes"


def _utc(timestamp):
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc).isoformat(
        timespec="seconds"
    )


class Record:
    """One results file, read and checked, ready to be inserted.

    Parameters
    ----------
    path : str
        The file.
    text : str
        Its content.
    doc : dict
        Its content, parsed.
    result_set : ResultSet
        Its results.
    measured_at : str
        When it was measured (ISO 8601, UTC).

    Attributes
    ----------
    content_hash : str
        SHA-256 of the canonical JSON: the same results are stored once, under
        whatever name they are added.
    """

    def __init__(self, path, text, doc, result_set, measured_at):
        self.path = path
        self.document = text
        self.doc = doc
        self.result_set = result_set
        self.measured_at = measured_at
        canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        self.content_hash = hashlib.sha256(canonical.encode()).hexdigest()

    def set_row(self, added_at):
        """The store's ``result_sets`` row for this file.

        Parameters
        ----------
        added_at : str
            When it is added (ISO 8601, UTC).

        Returns
        -------
        dict
            Column name to value.
        """
        m = self.result_set.machine
        return {
            "content_hash": self.content_hash,
            "machine_name": machine_name(m),
            "hostname": m.get("hostname"),
            "cpu_model": m.get("cpu_model"),
            "kernel_release": m.get("kernel_release"),
            "benchmarks": ",".join(self.result_set.benchmarks),
            "measured_at": self.measured_at,
            "source": os.path.abspath(self.path),
            "added_at": added_at,
            "document": self.document,
            "pagezero_version": _pagezero_version(self.doc),
            "interrupted": _interrupted(self.doc),
        }


def read_record(path):
    """Read and check a results file for the store.

    The measurement's time is the file's modification time: results files
    carry no date of their own, and `pagezero fleet run` sets it to the run's end.

    Parameters
    ----------
    path : str
        A results file (any command's ``-o``).

    Returns
    -------
    Record

    Raises
    ------
    ValueError
        When it is not a results file, or holds no results.
    """
    result_set = ResultSet.load(path)  # validates; ValueError with the path otherwise
    if not len(result_set):
        raise ValueError(f"{path}: holds no results")
    with open(path) as f:
        text = f.read()
    return Record(path, text, json.loads(text), result_set, _utc(os.stat(path).st_mtime))


def _size(params):
    size = params.get("size")
    if isinstance(size, int) and not isinstance(size, bool):
        return size
    if isinstance(size, str):
        try:
            return parse_size(size)
        except ValueError:
            return None
    return None


def point_rows(result_set):
    """The store's ``points`` rows of a result set.

    Parameters
    ----------
    result_set : ResultSet
        The results.

    Returns
    -------
    list of dict
        One per point: benchmark, function, size (bytes), page, label, params (JSON),
        unit, and :func:`pagezero.results.points.summarize_points`' median, spread_pct, runs
        and spread_of.
    """
    rows = []
    for first, summary in summarize_points(result_set).values():
        page = first.params.get("page")
        rows.append(
            {
                "benchmark": first.benchmark,
                "function": first.function,
                "size": _size(first.params),
                "page": None if page is None else str(page),
                "label": first.label(),
                "params": json.dumps(dict(first.params), sort_keys=True),
                "unit": summary["unit"],
                "median": summary["median"],
                "spread_pct": summary["spread_pct"],
                "runs": summary["runs"],
                "spread_of": summary["spread_of"],
            }
        )
    return rows


def stored_result_set(document_text):
    """The ResultSet of a stored document (for migrations that recompute points).

    Parameters
    ----------
    document_text : str
        A results file's content, as stored.

    Returns
    -------
    ResultSet

    Raises
    ------
    ValueError
        When it is not a valid results document.
    """
    # ResultSet.load reads files, so the document goes through a temporary one.
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(document_text)
        f.flush()
        return ResultSet.load(f.name)
