"""A results document's shape, checked before it is read: a wrong one is a ValueError saying why."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from typing import Any, NoReturn, TypeGuard

__all__ = ["read_json", "check_result", "check_run", "check_document", "is_int", "LIMIT"]

# The largest integer a results file may hold (the C core's int64 ticks, Py_ssize_t bytes).
LIMIT = 2**63 - 1

# Top-level machine fields that machine() writes, with their JSON type; the rest is free-form.
_MACHINE_TYPES: dict[str, type] = {
    **dict.fromkeys(("hostname", "fleet_name", "cpu_model", "arch", "kernel_release"), str),
    **{"kernel": str, "cpus_online": int, "cpu_features": list, "caches": list},
    **dict.fromkeys(("preemption", "thp", "memory", "hugepages"), dict),
    "numa_nodes": list,
}


def _bad_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number JSON allows")


def _int(text: str) -> int:
    n = int(text)
    if abs(n) > LIMIT:
        raise ValueError(
            f"the integer {text[:20]}{'...' if len(text) > 20 else ''} "
            f"is larger than any measurement (2**63-1)"
        )
    return n


def _float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"the number {text[:20]} is out of range")
    return x


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON in `path`, strict (no NaN), numbers in a measurement's range; else ValueError."""
    try:
        with open(path) as f:
            return json.load(f, parse_constant=_bad_constant, parse_int=_int, parse_float=_float)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON: {e}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to be a results file") from None
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def is_int(x: object) -> TypeGuard[int]:
    """An int, not a bool."""
    return isinstance(x, int) and not isinstance(x, bool)


def is_count(x: object) -> bool:
    """A non-negative int a results file may hold (at most LIMIT), not a bool."""
    return is_int(x) and 0 <= x <= LIMIT


def _ints(xs: object, ok: Callable[[object], bool] = is_int) -> bool:
    return isinstance(xs, list) and all(ok(x) for x in xs)


def _need(ok: object, what: str) -> None:
    if not ok:
        raise ValueError(what)


def _check_interrupted(d: dict[str, Any]) -> None:
    ok = isinstance(d.get("interrupted"), (str, bool, type(None)))
    _need(ok, "interrupted is neither a signal's name nor true/false")


def _check_machine(machine: Any, where: str = "machine") -> None:
    _need(isinstance(machine, dict), f"{where} is not an object")
    for name, kind in _MACHINE_TYPES.items():
        v = machine.get(name)
        a_kind = "a list" if kind is list else f"a {kind.__name__}"
        ok = v is None or (isinstance(v, kind) and not isinstance(v, bool))
        _need(ok, f"{where}.{name} is not {a_kind}")
    # One level further where reports and comparison headers read fields by name.
    for c in machine.get("caches") or ():
        ok = isinstance(c, dict) and isinstance(c.get("type", ""), str)
        ok = ok and is_int(c.get("level", 0)) and is_int(c.get("size_bytes", 0))
        _need(ok, f"{where}.caches holds a bad cache")
    for name in ("preemption", "thp"):
        ok = all(isinstance(v, (str, type(None))) for v in (machine.get(name) or {}).values())
        _need(ok, f"{where}.{name} is not an object of strings")


def check_result(d: Any) -> None:
    """ValueError naming the first field of one result (any version) missing or mistyped."""
    _need(isinstance(d, dict), "a result is not an object")
    for name in ("benchmark", "function", "params", "bytes_per_loop", "clock", "samples"):
        _need(name in d, f"a result has no {name!r}")
    _need(isinstance(d["benchmark"], str) and d["benchmark"], "benchmark is not a name")
    _need(isinstance(d["function"], str), "function is not a name")
    _need(isinstance(d["clock"], str), "clock is not a name")
    params = d["params"]
    _need(isinstance(params, dict), "params is not an object")
    for name in ("size", "chunk", "batch_bytes", "offset"):
        v = params.get(name)
        _need(v is None or is_count(v), f"params.{name} is not a number of bytes")
    for name in ("page", "batch"):
        v = params.get(name)
        _need(v is None or isinstance(v, str) or is_count(v), f"params.{name} is not a size")
    _need(is_int(params.get("loops", 0)), "params.loops is not an integer")
    _need(is_int(d["bytes_per_loop"]), "bytes_per_loop is not an integer")
    _need(_ints(d["samples"]), "samples is not a list of integers (clock ticks)")
    hz = d.get("clock_hz")
    ok = hz is None or (is_int(hz) or isinstance(hz, float)) and 0 < hz <= LIMIT  # not NaN
    _need(ok, "clock_hz is not a positive number")
    if d.get("machine") is not None:
        _check_machine(d["machine"])
    details = d.get("details", {})
    _need(isinstance(details, dict), "details is not an object")
    threads = details.get("thread_samples", [])
    ok = isinstance(threads, list) and all(_ints(t, is_count) for t in threads)
    _need(ok, "details.thread_samples is not a list of lists of clock ticks")
    ok = _ints(details.get("thread_bytes", []))
    _need(ok, "details.thread_bytes is not a list of byte counts")
    _check_interrupted(d)


def check_run(run: Any) -> None:
    """ValueError unless `run` is ``{"repetition": int >= 0, "process": int >= 0}``."""
    _need(isinstance(run, dict), "a result's run is not an object")
    for name in ("repetition", "process"):
        _need(is_count(run.get(name, 0)), f"run.{name} is not a non-negative integer")


def check_document(doc: dict[str, Any]) -> None:
    """ValueError unless the top of a results document has its shape (not its results)."""
    _need(isinstance(doc.get("results"), list), "no list of results")
    if doc.get("machine") is not None:
        _check_machine(doc["machine"])
    _check_interrupted(doc)
    _need(isinstance(doc.get("pagezero", ""), str), "pagezero (the version) is not a string")
    _need(isinstance(doc.get("build", {}), dict), "build is not an object")
