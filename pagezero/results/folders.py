"""Results folders (a fleet's DIR/<machine>/, a report's folder): every results file under one,
as one ResultSet; other JSON files there (fleet.json, advice) are passed over."""

import json
import os

from pagezero.results.resultset import SCHEMA, ResultSet, merged

__all__ = ["results_files", "is_results_file", "load_folder", "load_path", "load_sources"]


def is_results_file(path):
    """Whether `path` is JSON with pagezero's results schema (read, not validated)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def results_files(folder):
    """The results files under `folder`, sorted depth first; ValueError for none or no folder."""
    if not os.path.isdir(folder):
        raise ValueError(f"{folder}: no such folder")
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        names = [n for n in sorted(files) if n.endswith(".json") and not n.startswith(".")]
        found += [p for p in (os.path.join(root, n) for n in names) if is_results_file(p)]
    if not found:
        raise ValueError(f"{folder}: no pagezero results files under it")
    return found


def _study(path):
    """The study a file holds, by its name: "extents" for .../run-2/extents.json."""
    return os.path.splitext(os.path.basename(path))[0]


def _merged(folder):
    paths = results_files(folder)
    sets = [ResultSet.load(p) for p in paths]
    names = sorted(
        {s.machine.get("fleet_name") or s.machine.get("hostname") or "unknown" for s in sets}
    )
    if len(names) > 1:
        raise ValueError(
            f"{folder}: holds results of several machines ({', '.join(names)}); "
            f"name one machine's folder, e.g. {os.path.join(folder, names[0])}"
        )
    studies = [_study(p) for p, s in zip(paths, sets) for _ in s.results]
    return merged(sets), studies


def load_folder(folder):
    """Every results file under one machine's `folder` as one ResultSet (merged())."""
    return _merged(folder)[0]


def load_sources(path):
    """(load_path(path), each result's study: its file's name, "extents" in a report folder)."""
    if os.path.isdir(path):
        return _merged(path)
    rs = load_path(path)
    return rs, [_study(path)] * len(rs.results)


def load_path(path):
    """A results file, or a folder of them (load_folder); ValueError for no such file."""
    if os.path.isdir(path):
        return load_folder(path)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    return ResultSet.load(path)
