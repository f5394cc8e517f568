"""What machine a result was measured on.

Read once per process and attached to every Result, so a saved result says
where it came from. Every fact records its source. Cache sizes come from
sysfs first and are cross-checked against sysconf, because the two can
disagree (on the AMD EPYC VMs here sysfs says 32 MiB of L3 and sysconf
several hundred): a disagreement is reported, and a size of 0 is never
trusted.

Every reader takes a `root` (default "/") so that tests can point it at a
tree of fixture files instead of the live /sys and /proc.
"""

from __future__ import annotations

import copy
import functools
import os
import platform
import re
import subprocess
from collections.abc import Mapping
from typing import Any

from pagezero import _core
from pagezero.system import hugepages

__all__ = ["machine", "caches", "llc_bytes", "cache_bytes", "preemption", "summary"]

_CACHE_DIR = "sys/devices/system/cpu/cpu0/cache"
_HUGEPAGE_DIR = "sys/kernel/mm/hugepages"
_NODE_DIR = "sys/devices/system/node"

# getconf names of the cache sizes sysconf() reports, by (level, type).
_SYSCONF_CACHES = {
    (1, "Data"): "LEVEL1_DCACHE_SIZE",
    (1, "Instruction"): "LEVEL1_ICACHE_SIZE",
    (2, "Unified"): "LEVEL2_CACHE_SIZE",
    (3, "Unified"): "LEVEL3_CACHE_SIZE",
}


def _path(root: str, rel: str) -> str:
    return os.path.join(root, rel)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _cpu_model(root: str) -> str:
    text = _read(_path(root, "proc/cpuinfo")) or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model"):
            return value.strip()
    return platform.processor() or "unknown"


def _size_bytes(text: str | None) -> int | None:
    """sysfs cache sizes read "48K", "1024K", "32768K"; None for anything else or 0."""
    m = re.fullmatch(r"(\d+)([KMG]?)", text or "")
    if not m:
        return None
    n = int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]
    return n or None


def sysconf_caches() -> dict[str, int]:
    """Cache sizes as glibc's ``sysconf()`` reports them, through ``getconf -a``.

    Returns
    -------
    dict of str to int
        Bytes by getconf name (``"LEVEL3_CACHE_SIZE"``, ...); empty when getconf is
        unavailable.
    """
    try:
        out = subprocess.run(["getconf", "-a"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    values: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in _SYSCONF_CACHES.values() and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values


def caches(root: str = "/", sysconf: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """cpu0's caches from sysfs, each with its source and sysconf's opinion.

    Parameters
    ----------
    root : str
        The file system root to read ``sys/devices/system/cpu/cpu0/cache`` under;
        tests point it at a fixture tree.
    sysconf : dict of str to int, optional
        getconf names (``LEVEL3_CACHE_SIZE``, ...) to bytes; by default read from this
        machine (:func:`sysconf_caches`) when `root` is ``"/"``, empty otherwise.

    Returns
    -------
    list of dict
        One per cache with a non-zero size: ``level``, ``type`` (``"Data"``,
        ``"Instruction"``, ``"Unified"``), ``size_bytes``, ``shared_cpu_list``,
        ``source`` (the file read), and where sysconf gives a size, ``sysconf_bytes``
        and, if the two differ, ``disagreement`` (sysfs is used). Without sysfs,
        sysconf's sizes, saying so in ``source``.
    """
    if sysconf is None:
        sysconf = sysconf_caches() if root == "/" else {}
    base = _path(root, _CACHE_DIR)
    try:
        entries = sorted(e for e in os.listdir(base) if re.fullmatch(r"index\d+", e))
    except OSError:
        entries = []
    found: list[dict[str, Any]] = []
    for entry in entries:
        d = os.path.join(base, entry)
        level = int(_read(os.path.join(d, "level")) or 0)
        kind = _read(os.path.join(d, "type")) or "Unknown"
        size = _size_bytes(_read(os.path.join(d, "size")))
        if not level or size is None:
            continue  # never trust a 0 or a missing size
        cache: dict[str, Any] = {
            "level": level,
            "type": kind,
            "size_bytes": size,
            "shared_cpu_list": _read(os.path.join(d, "shared_cpu_list")),
            "source": os.path.join("/", _CACHE_DIR, entry, "size"),
        }
        name = _SYSCONF_CACHES.get((level, kind))
        other = sysconf.get(name) if name else None
        if other:  # sysconf's 0 means "unknown", not "no cache"
            cache["sysconf_bytes"] = other
            if other != size:
                cache["disagreement"] = (
                    f"sysconf {name} says {other} bytes, sysfs says {size}; using sysfs"
                )
        found.append(cache)
    if not found:
        # No sysfs (some containers): fall back to sysconf, saying so.
        for (level, kind), name in _SYSCONF_CACHES.items():
            if sysconf.get(name):
                found.append(
                    {
                        "level": level,
                        "type": kind,
                        "size_bytes": sysconf[name],
                        "shared_cpu_list": None,
                        "source": f"sysconf {name}",
                    }
                )
    return found


def cache_bytes(info: Mapping[str, Any], level: int, kind: str = "Unified") -> int | None:
    """The size of one cache level.

    Parameters
    ----------
    info : dict
        A :func:`machine` dict.
    level : int
        1, 2, 3...
    kind : str
        ``"Data"`` for L1's data cache; ``"Unified"`` (the default) for the others.

    Returns
    -------
    int or None
        Bytes, or None when `info` has no such cache.
    """
    for c in info.get("caches", ()):
        if c["level"] == level and c["type"] in (kind, "Unified"):
            size: int = c["size_bytes"]  # caches() writes an int
            return size
    return None


def llc_bytes(info: Mapping[str, Any] | None = None) -> int | None:
    """The last-level cache's size.

    Parameters
    ----------
    info : dict, optional
        A :func:`machine` dict; by default this machine's.

    Returns
    -------
    int or None
        Bytes of the highest data or unified level found, or None when no cache
        size is known.
    """
    info = info if info is not None else machine()
    levels = [c for c in info.get("caches", ()) if c["type"] != "Instruction"]
    if not levels:
        return None
    size: int = max(levels, key=lambda c: c["level"])["size_bytes"]  # an int, as caches() writes
    return size


def _hugepages(root: str) -> dict[str, dict[str, Any]]:
    """The pools keyed as sysfs names them ("2048kB"); hugepages.pools() has the detail."""
    found: dict[str, dict[str, Any]] = {}
    for p in hugepages.pools(_path(root, _HUGEPAGE_DIR)).values():
        key = f"{p.page_bytes // 1024}kB"
        found[key] = {
            "total": p.total,
            "free": p.free,
            "reserved": p.reserved,
            "surplus": p.surplus,
            "available": p.available,
            "page_bytes": p.page_bytes,
            "source": os.path.join("/", _HUGEPAGE_DIR, f"hugepages-{key}", "nr_hugepages"),
        }
    return found


def _bracketed(text: str | None) -> str | None:
    """The selected word of a sysfs choice list: "always [madvise] never" -> "madvise"."""
    m = re.search(r"\[([^\]]+)\]", text or "")
    return m.group(1) if m else None


def preemption(root: str = "/", uname_version: str | None = None) -> dict[str, str | None]:
    """The kernel's preemption model and where it was read.

    debugfs sched/preempt names the live model of a PREEMPT_DYNAMIC kernel
    ("none voluntary (full) lazy"); without it (debugfs is root-only and often
    unmounted), a preempt= boot parameter, then `uname -v` (PREEMPT_RT,
    PREEMPT_DYNAMIC, PREEMPT), then the kernel config, else "unknown".

    Parameters
    ----------
    root : str
        The file system root to read under; tests point it at a fixture tree.
    uname_version : str, optional
        ``uname -v``'s text; by default this kernel's.

    Returns
    -------
    dict
        ``{"model": "none" | "voluntary" | "full" | "lazy" | "rt" | "dynamic" |
        "unknown", "source": the file or command read, or None}``.
    """
    live = _read(_path(root, "sys/kernel/debug/sched/preempt"))
    if live:
        m = re.search(r"\((\w+)\)", live)
        if m:
            return {"model": m.group(1), "source": "/sys/kernel/debug/sched/preempt"}
    cmdline = _read(_path(root, "proc/cmdline")) or ""
    m = re.search(r"(?:^|\s)preempt=(\w+)", cmdline)
    if m:
        return {"model": m.group(1), "source": "/proc/cmdline preempt="}
    version = uname_version if uname_version is not None else os.uname().version
    for tag, model in (
        ("PREEMPT_RT", "rt"),
        ("PREEMPT_DYNAMIC", "dynamic"),
        ("PREEMPT_LAZY", "lazy"),
        ("PREEMPT", "full"),
    ):
        if re.search(rf"\b{tag}\b", version):
            note = " (the live mode needs debugfs sched/preempt)" if model == "dynamic" else ""
            return {"model": model, "source": f"uname -v{note}"}
    release = os.uname().release if root == "/" else ""
    config = _read(_path(root, f"boot/config-{release}")) or ""
    for option, model in (
        ("CONFIG_PREEMPT_RT", "rt"),
        ("CONFIG_PREEMPT", "full"),
        ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
        ("CONFIG_PREEMPT_NONE", "none"),
    ):
        if re.search(rf"^{option}=y$", config, re.M):
            return {"model": model, "source": f"/boot/config-{release}"}
    return {"model": "unknown", "source": None}


def _numa_nodes(root: str) -> list[dict[str, Any]]:
    base = _path(root, _NODE_DIR)
    nodes: list[dict[str, Any]] = []
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return nodes
    for entry in entries:
        m = re.fullmatch(r"node(\d+)", entry)
        if m:
            nodes.append(
                {"node": int(m.group(1)), "cpus": _read(os.path.join(base, entry, "cpulist"))}
            )
    return sorted(nodes, key=lambda n: n["node"])


def _memory(root: str) -> dict[str, int]:
    text = _read(_path(root, "proc/meminfo")) or ""
    mem: dict[str, int] = {}
    for key, name in (("MemTotal", "total_bytes"), ("MemAvailable", "available_bytes")):
        m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
        if m:
            mem[name] = int(m.group(1)) * 1024
    return mem


def _dczva_block() -> int | None:
    """arm64: the DC ZVA block in bytes, as DCZID_EL0 gives it: the unit of
    the registry's kernel that needs the dczva feature."""
    from pagezero.system.kernels import kernels

    for k in kernels("clear"):
        if "dczva" in k.features:
            return k.unit
    return None


@functools.cache
def _static(root: str) -> dict[str, Any]:
    uname = os.uname()
    thp = _path(root, "sys/kernel/mm/transparent_hugepage")
    return {
        "cpu_model": _cpu_model(root),
        "arch": uname.machine,
        "cpu_features": list(_core.cpu_features()),
        "cpus_online": os.cpu_count(),
        "kernel_release": uname.release,
        "kernel_version": uname.version,
        # The boot parameters (preempt=, transparent_hugepage=, mitigations=, ...)
        # that can make two boots of one kernel measure differently.
        "kernel_cmdline": _read(_path(root, "proc/cmdline")),
        "hostname": uname.nodename,
        "python": platform.python_version(),
        "pagezero_arch": _core.ARCH,
        "dczva_block_bytes": _dczva_block(),
        "caches": caches(root),
        "thp": {
            "enabled": _bracketed(_read(thp + "/enabled")),
            "defrag": _bracketed(_read(thp + "/defrag")),
            "source": "/sys/kernel/mm/transparent_hugepage",
        },
        "preemption": preemption(root),
        "numa_nodes": _numa_nodes(root),
    }


def machine(root: str = "/") -> dict[str, Any]:
    """This machine, as every saved result records it.

    Static facts (CPU model and features, caches, kernel, THP, preemption, NUMA
    nodes) are read once per process; hugepage pools and memory, which change,
    afresh on each call. Every fact records its source.

    Parameters
    ----------
    root : str
        The file system root to read ``/sys`` and ``/proc`` under; tests point it at a
        fixture tree.

    Returns
    -------
    dict
        A fresh copy: ``cpu_model``, ``arch``, ``cpu_features``, ``cpus_online``,
        ``kernel_release``, ``kernel_version``, ``hostname``, ``python``,
        ``pagezero_arch``, ``dczva_block_bytes``, ``caches`` (:func:`caches`), ``thp``,
        ``preemption`` (:func:`preemption`), ``numa_nodes``, ``hugepages`` and
        ``memory``; in a test build, ``test_switches`` too ({name: value}), when any
        is in effect.
    """
    info = copy.deepcopy(_static(root))
    info["hugepages"] = _hugepages(root)
    info["memory"] = _memory(root)
    switches = _core.switches()  # a test build's PAGEZERO_* in effect: what was faked
    if switches:
        info["test_switches"] = switches
    return info


def _mib(n: float) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n / 2**10:g} KiB"


def summary(info: Mapping[str, Any]) -> list[str]:
    """The machine as lines of plain text, for ``pagezero info`` and reports.

    Parameters
    ----------
    info : dict
        A :func:`machine` dict.

    Returns
    -------
    list of str
        Lines without newlines.
    """
    lines = [
        f"cpu:         {info['cpu_model']} ({info['arch']}, {info['cpus_online']} CPUs online)",
        f"features:    {', '.join(info['cpu_features']) or '-'}"
        + (
            f" (DC ZVA block {info['dczva_block_bytes']} bytes)"
            if info.get("dczva_block_bytes")
            else ""
        ),
        f"kernel:      {info['kernel_release']}",
        f"preemption:  {info['preemption']['model']} "
        f"(from {info['preemption']['source'] or 'nowhere'})",
        f"thp:         enabled={info['thp']['enabled']} defrag={info['thp']['defrag']}",
    ]
    mem = info.get("memory", {})
    if mem:
        lines.append(
            f"memory:      {_mib(mem.get('total_bytes', 0))} total, "
            f"{_mib(mem.get('available_bytes', 0))} available"
        )
    nodes = info.get("numa_nodes", [])
    described = "; ".join(f"node{n['node']:d}: cpus {n['cpus']}" for n in nodes)
    lines.append(f"numa nodes:  {len(nodes)} ({described})" if nodes else "numa nodes:  unknown")
    for c in info["caches"]:
        line = (
            f"L{c['level']} {c['type'].lower():<11} {_mib(c['size_bytes']):>10}  "
            f"shared by cpus {c['shared_cpu_list']}  ({c['source']})"
        )
        if "disagreement" in c:
            line += f"\n             note: {c['disagreement']}"
        lines.append(line)
    for size, pool in info.get("hugepages", {}).items():
        lines.append(f"hugepages {size}: {pool['free']} free of {pool['total']} ({pool['source']})")
    return lines


def build_info() -> dict[str, Any]:
    """What made this pagezero, as every results file records it.

    Returns
    -------
    dict
        ``{"pagezero": pagezero.__version__ (from the installed metadata),
        "build": {"compiler": ..., "flags": ..., "test_switches": bool}}``, the compiler
        and flags the extension was built with, and whether it is a test build
        (``pagezero._core.BUILD``; None where it does not say).
    """
    from pagezero import __version__ as pz  # importlib.metadata, read once in __init__

    build = getattr(_core, "BUILD", None)
    return {"pagezero": pz, "build": dict(build) if build else None}
