"""Results folders: every results file under a folder, as one ResultSet.

`pagezero fleet run` writes one folder per machine (DIR/<machine>/), with one
file per run, or one report folder per run for `pagezero report`; `pagezero
compare DIR/a DIR/b` and `pagezero store add DIR` read such folders. Other JSON
files there (fleet.json, advice) are not results and are passed over.
"""

import json
import os

from pagezero.results.resultset import SCHEMA, ResultSet

__all__ = ["results_files", "is_results_file", "load_folder", "load_path", "load_sources"]


def is_results_file(path):
    """Whether `path` holds a pagezero results document (read, not validated).

    Parameters
    ----------
    path : str
        The file to read.

    Returns
    -------
    bool
        True when the file is JSON with pagezero's results schema; False for any
        other file, or one that cannot be read.
    """
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def results_files(folder):
    """The results files under `folder`, in a stable order (sorted, depth first).

    Parameters
    ----------
    folder : str
        The folder to walk.

    Returns
    -------
    list of str
        The paths of the pagezero results files under it.

    Raises
    ------
    ValueError
        No such folder, or no results file under it.
    """
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


def _machine_name(machine):
    return machine.get("fleet_name") or machine.get("hostname") or "unknown"


def _study(path):
    """The study a file holds, by its name: "extents" for .../run-2/extents.json."""
    return os.path.splitext(os.path.basename(path))[0]


def _merged(folder, paths):
    """(ResultSet of every file in `paths`, each file's runs side by side, and
    the study of each result); see load_folder."""
    sets = [ResultSet.load(p) for p in paths]
    names = sorted({_machine_name(s.machine) for s in sets})
    if len(names) > 1:
        raise ValueError(
            f"{folder}: holds results of several machines ({', '.join(names)}); "
            f"name one machine's folder, e.g. {os.path.join(folder, names[0])}"
        )
    results = [r for s in sets for r in s.results]
    # Each file's processes are other processes than the next file's: number them anew.
    processes = {}
    runs = [
        dict(run, process=processes.setdefault((i, run["process"]), len(processes)))
        for i, s in enumerate(sets)
        for run in s.runs
    ]
    interrupted = next((s.interrupted for s in sets if s.interrupted), False)
    studies = [_study(p) for p, s in zip(paths, sets) for _ in s.results]
    return ResultSet(results, runs, dict(sets[0].machine), interrupted), studies


def load_folder(folder):
    """Every results file under `folder` as one ResultSet: each file's runs side by
    side (numbered anew: one file's processes are not the next's), interrupted if any
    file was.

    Parameters
    ----------
    folder : str
        A report folder, or one machine's folder of a fleet run.

    Returns
    -------
    pagezero.ResultSet

    Raises
    ------
    ValueError
        An empty or foreign folder, or one that mixes machines (a fleet's top folder:
        name one machine's folder instead).
    """
    return _merged(folder, results_files(folder))[0]


def load_sources(path):
    """:func:`load_path` and, per result, the study it came from.

    The study is its file's name without .json ("extents", "chunks" in a report
    folder; a fleet's "run-1", "run-2" name runs of one study, which compare sees by
    their points appearing in several).

    Parameters
    ----------
    path : str
        A results file or a folder of them.

    Returns
    -------
    tuple of (pagezero.ResultSet, list of str)
        The results and, per result, its study.

    Raises
    ------
    ValueError
        As :func:`load_path`.
    """
    if os.path.isdir(path):
        return _merged(path, results_files(path))
    rs = load_path(path)
    return rs, [_study(path)] * len(rs.results)


def load_path(path):
    """A results file, or a folder of them (:func:`load_folder`).

    Parameters
    ----------
    path : str
        The file or folder.

    Returns
    -------
    pagezero.ResultSet

    Raises
    ------
    ValueError
        No such file, a file of the wrong shape, or a folder :func:`load_folder`
        refuses.
    """
    if os.path.isdir(path):
        return load_folder(path)
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    return ResultSet.load(path)
