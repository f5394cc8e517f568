"""What machine a result was measured on.

Read once per process and attached to every Result, so a saved result says
where it came from. Each cache size records its source, because on these
VMs sysconf() and sysfs disagree (sysconf says 320 MiB of L3, sysfs 32 MiB).
"""
import copy
import functools
import os
import platform

from . import _core, hugepages

__all__ = ["machine"]

_SYSFS_CPU0_CACHE = "/sys/devices/system/cpu/cpu0/cache"


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _cpu_model():
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model"):
            return value.strip()
    return platform.processor() or "unknown"


def _size_kib(text):
    # sysfs writes cache sizes as "32K", "1024K", "32768K".
    if text and text[-1] in "KMG":
        return int(text[:-1]) << {"K": 0, "M": 10, "G": 20}[text[-1]]
    return int(text) if text and text.isdigit() else None


def _caches():
    caches = []
    try:
        entries = sorted(e for e in os.listdir(_SYSFS_CPU0_CACHE) if e.startswith("index"))
    except OSError:
        return caches
    for entry in entries:
        base = os.path.join(_SYSFS_CPU0_CACHE, entry)
        kib = _size_kib(_read(os.path.join(base, "size")))
        if not kib:
            continue  # never trust a 0 or a missing size
        caches.append({
            "level": int(_read(os.path.join(base, "level")) or 0),
            "type": _read(os.path.join(base, "type")),
            "size_bytes": kib * 1024,
            "shared_cpu_list": _read(os.path.join(base, "shared_cpu_list")),
            "source": base + "/size",
        })
    return caches


def _hugepages():
    # Keyed as sysfs names the pools ("2048kB"); hugepages.pools() has the detail.
    return {f"{p.page_bytes // 1024}kB": {"total": p.total, "free": p.free,
                                          "reserved": p.reserved, "surplus": p.surplus}
            for p in hugepages.pools().values()}


@functools.lru_cache(maxsize=None)
def _static():
    uname = os.uname()
    return {
        "cpu_model": _cpu_model(),
        "arch": uname.machine,
        "cpu_features": list(_core.cpu_features()),
        "cpus_online": os.cpu_count(),
        "kernel_release": uname.release,
        "kernel_version": uname.version,
        "hostname": uname.nodename,
        "python": platform.python_version(),
        "caches": _caches(),
        "thp_enabled": _read("/sys/kernel/mm/transparent_hugepage/enabled"),
    }


def machine():
    """A dict describing this machine; hugepage pools are read afresh each call."""
    info = copy.deepcopy(_static())
    info["hugepages"] = _hugepages()
    return info
