"""Results folders: every results file under a folder, as one ResultSet.

`pagezero fleet run` writes one folder per machine (DIR/<machine>/), with one file per run, or
one report folder per run for `pagezero report`; `pagezero compare DIR/a DIR/b` and `pagezero
store add DIR` read such folders. Other JSON files there (fleet.json, advice) are passed over.
"""

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
        found += [
            os.path.join(root, name)
            for name in sorted(files)
            if name.endswith(".json") and not name.startswith(".")
        ]
    found = [p for p in found if is_results_file(p)]
    if not found:
        raise ValueError(f"{folder}: no pagezero results files under it")
    return found


def _study(path):
    """The study a file holds, by its name: "extents" for .../run-2/extents.json."""
    return os.path.splitext(os.path.basename(path))[0]


def _merged(folder):
    """(load_folder(folder), the study of each result)."""
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
    """Every results file under one machine's `folder` as one ResultSet, each file's runs side
    by side (numbered anew), interrupted if any file was; ValueError: none, or several machines."""
    return _merged(folder)[0]


def load_sources(path):
    """(load_path(path), each result's study: its file's name, "extents" in a report folder;
    a fleet's "run-1", "run-2" are runs of one study, as compare sees by their points)."""
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
