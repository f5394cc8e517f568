"""The machine a result was measured on, each fact with its source; `root`: a fixture tree."""

from __future__ import annotations

import contextlib
import copy
import functools
import gzip
import os
import platform
import re
import subprocess
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

from pagezero import _core
from pagezero.files import entries, read_text
from pagezero.system import hugepages
from pagezero.system.backing import sysfs_choice
from pagezero.system.kernels import kernels
from pagezero.system.memory import base_page, listed_nodes, thp_pmd_size

_CACHE_DIR = "sys/devices/system/cpu/cpu0/cache"
_HUGEPAGE_DIR = "sys/kernel/mm/hugepages"

# getconf names of the cache sizes sysconf() reports, by (level, type).
_SYSCONF_CACHES = {
    (1, "Data"): "LEVEL1_DCACHE_SIZE",
    (1, "Instruction"): "LEVEL1_ICACHE_SIZE",
    (2, "Unified"): "LEVEL2_CACHE_SIZE",
    (3, "Unified"): "LEVEL3_CACHE_SIZE",
}
_CACHE_FIELDS = ("level", "type", "size_bytes", "shared_cpu_list", "source")
_MEMINFO = (("MemTotal", "total_bytes"), ("MemAvailable", "available_bytes"))


def _read(root: str, path: str) -> str | None:
    return read_text(os.path.join(root, path))


def sysconf_caches() -> dict[str, int]:
    """Cache sizes in bytes by getconf name, as glibc's sysconf() reports them (`getconf -a`)."""
    try:
        out = subprocess.run(["getconf", "-a"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    rows = [line.split() for line in out.splitlines()]
    names = _SYSCONF_CACHES.values()
    return {r[0]: int(r[1]) for r in rows if len(r) == 2 and r[0] in names and r[1].isdigit()}


def caches(root: str = "/", sysconf: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """cpu0's caches from sysfs, with sysconf's size and any disagreement; else sysconf's."""
    if sysconf is None:
        sysconf = sysconf_caches() if root == "/" else {}
    found: list[dict[str, Any]] = []
    for entry in entries(os.path.join(root, _CACHE_DIR), r"index\d+"):
        d = os.path.join(_CACHE_DIR, entry[0])
        level = int(_read(root, f"{d}/level") or 0)
        kind = _read(root, f"{d}/type") or "Unknown"
        m = re.fullmatch(r"(\d+)([KMG]?)", _read(root, f"{d}/size") or "")  # "48K", "32768K"
        size = int(m[1]) << {"": 0, "K": 10, "M": 20, "G": 30}[m[2]] if m else 0
        if not level or not size:
            continue  # never trust a 0 or a missing size
        shared = _read(root, f"{d}/shared_cpu_list")
        found.append(dict(zip(_CACHE_FIELDS, (level, kind, size, shared, f"/{d}/size"))))
        name = _SYSCONF_CACHES.get((level, kind))
        other = sysconf.get(name) if name else None
        if other:  # sysconf's 0 means "unknown", not "no cache"
            found[-1]["sysconf_bytes"] = other
            if other != size:
                found[-1]["disagreement"] = (
                    f"sysconf {name} says {other} bytes, sysfs says {size}; using sysfs"
                )
    # No sysfs (some containers): sysconf's, saying so.
    return found or [
        dict(zip(_CACHE_FIELDS, (level, kind, sysconf[name], None, f"sysconf {name}")))
        for (level, kind), name in _SYSCONF_CACHES.items()
        if sysconf.get(name)
    ]


def cache_bytes(info: Mapping[str, Any], level: int, kind: str = "Unified") -> int | None:
    """The size of one cache level of a machine() dict ("Data" for L1d), or None."""
    found = [c for c in info.get("caches", ()) if c["level"] == level]
    return next((int(c["size_bytes"]) for c in found if c["type"] in (kind, "Unified")), None)


def llc_bytes(info: Mapping[str, Any] | None = None) -> int | None:
    """The highest data or unified cache level's size in a machine() dict (this one's), or None."""
    found = llc(info if info is not None else machine())
    return int(found["size_bytes"]) if found else None


def llc(info: Mapping[str, Any]) -> dict[str, Any] | None:
    """The highest data or unified cache level of a machine() dict, or None."""
    levels = [c for c in info.get("caches", ()) if c["type"] != "Instruction"]
    return max(levels, key=lambda c: c["level"]) if levels else None


# The cache a study measured (analysis.cache), for the processes it starts after: measure's
# eviction and scrub buffers exceed it (measure may not import analysis; workers are fresh).
MEASURED_CACHE_ENV = "PAGEZERO_MEASURED_CACHE_BYTES"


def set_measured_cache(nbytes: int | None) -> None:
    """Make `nbytes` (None: none) the measured cache of this process and those it starts."""
    if nbytes:
        os.environ[MEASURED_CACHE_ENV] = str(int(nbytes))
    else:
        os.environ.pop(MEASURED_CACHE_ENV, None)


@contextlib.contextmanager
def measured_cache_scope() -> Iterator[None]:
    """Whatever set_measured_cache() sets inside, undone on leaving."""
    before = os.environ.get(MEASURED_CACHE_ENV)
    try:
        yield
    finally:
        set_measured_cache(int(before) if before and before.isdigit() else None)


def eviction_cache(info: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The cache an eviction buffer must exceed: the measured one, else sysfs's LLC (or None)."""
    measured = os.environ.get(MEASURED_CACHE_ENV, "")
    if measured.isdigit() and int(measured) > 0:
        return {"bytes": int(measured), "source": f"measured ({MEASURED_CACHE_ENV})"}
    found = llc(info if info is not None else _static("/"))
    if found is None:
        return {"bytes": None, "source": None}
    return {"bytes": found["size_bytes"], "source": f"sysfs's LLC ({found['source']})"}


def _hugepages(root: str) -> dict[str, dict[str, Any]]:
    """The pools keyed as sysfs names them ("2048kB"), each with its nr_hugepages as source."""
    facts = ("total", "free", "reserved", "surplus", "available", "page_bytes")
    return {
        f"{p.page_bytes // 1024}kB": dict(
            {n: getattr(p, n) for n in facts}, source="/" + os.path.relpath(p.path, root)
        )
        for p in hugepages.pools(os.path.join(root, _HUGEPAGE_DIR)).values()
    }


# "mm: avoid zeroing user movable page twice with init_on_alloc=1" (6.13): from it a THP fault
# leaves the clear to the allocator (user_alloc_needs_zeroing()).
INIT_ON_ALLOC_SKIPS_FROM = (6, 13)


def release_tuple(release: str) -> tuple[int, int] | None:
    """(major, minor) of a kernel release such as "6.18.44-fc", or None without two numbers."""
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(m[1]), int(m[2])) if m else None


def boot_params(cmdline: str | None) -> dict[str, str]:
    """A /proc/cmdline's kernel parameters (not init's, after " -- "), a name's last winning."""
    words = (cmdline or "").split(" -- ")[0].split()
    return {name: value for name, _, value in (w.partition("=") for w in words)}


def kernel_config(root: str = "/", release: str | None = None) -> tuple[str, str | None]:
    """The kernel's config and where it was read (/proc/config.gz, /boot/config-<release>)."""
    gz = os.path.join(root, "proc/config.gz")
    with contextlib.suppress(OSError, EOFError, zlib.error), gzip.open(gz, "rt") as f:
        return f.read(), "/proc/config.gz"
    release = release if release is not None else os.uname().release
    text = _read(root, f"boot/config-{release}")
    return (text, f"/boot/config-{release}") if text else ("", None)


def _config_set(config: str, option: str) -> bool:
    return re.search(rf"^{option}=y$", config, re.M) is not None


def preemption(
    root: str = "/", uname_version: str | None = None, release: str | None = None
) -> dict[str, str | None]:
    """The kernel's preemption model and its source, in docs/measuring.rst's order of sources."""
    live = _read(root, "sys/kernel/debug/sched/preempt")
    if m := re.search(r"\((\w+)\)", live or ""):
        return {"model": m.group(1), "source": "/sys/kernel/debug/sched/preempt"}
    version = uname_version if uname_version is not None else os.uname().version
    config, where = kernel_config(root, release)
    # preempt= is a PREEMPT_DYNAMIC kernel's (setup_preempt_mode()); others ignore it.
    dynamic = "PREEMPT_DYNAMIC" in version or _config_set(config, "CONFIG_PREEMPT_DYNAMIC")
    boot = boot_params(_read(root, "proc/cmdline")).get("preempt")
    # sched_dynamic_mode() knows these four; any other value leaves the config's choice.
    if boot in ("none", "voluntary", "full", "lazy") and (dynamic or not where):
        return {"model": boot, "source": "/proc/cmdline preempt="}
    # PREEMPT_RT stands beside the choice (it needs PREEMPT or PREEMPT_LAZY since 6.12).
    for option, model in (
        ("CONFIG_PREEMPT_RT", "rt"),
        ("CONFIG_PREEMPT_LAZY", "lazy"),
        ("CONFIG_PREEMPT", "full"),
        ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
        ("CONFIG_PREEMPT_NONE", "none"),
    ):
        if _config_set(config, option):
            how = " (PREEMPT_DYNAMIC boots with it: preempt_dynamic_init())" if dynamic else ""
            return {"model": model, "source": f"{where} {option}=y{how}"}
    tags = {"PREEMPT_RT": "rt", "PREEMPT_DYNAMIC": "dynamic", "PREEMPT_LAZY": "lazy"}
    for tag, model in (tags | {"PREEMPT": "full"}).items():
        if re.search(rf"\b{tag}\b", version):
            note = " (the live mode needs debugfs sched/preempt or the kernel config)"
            return {"model": model, "source": "uname -v" + (note if model == "dynamic" else "")}
    return {"model": "unknown", "source": None}


def _boot_bool(value: str | None) -> bool | None:
    """A boolean boot parameter as the kernel's kstrtobool() reads it: its first character
    (y Y t T 1 true, n N f F 0 false), or "o" then n/N (on) or f/F (off); else None (refused)."""
    v = (value or "").lower()
    if v[:1] in ("y", "t", "1") or v[:2] == "on":
        return True
    return False if v[:1] in ("n", "f", "0") or v[:2] == "of" else None


def init_on(which: str, root: str = "/", release: str | None = None) -> dict[str, Any]:
    """Whether the page allocator zeroes pages on "alloc" or "free", from the boot parameter, else
    the config's CONFIG_INIT_ON_<WHICH>_DEFAULT_ON (value None without either), and where."""
    params = boot_params(_read(root, "proc/cmdline"))
    config, where = kernel_config(root, release)
    # mm/mm_init.c mem_debugging_and_hardening_init(): page poisoning, if built in, goes first.
    poison = where is None or _config_set(config, "CONFIG_PAGE_POISONING")
    if poison and _boot_bool(params.get("page_poison")):
        return {"value": False, "source": "/proc/cmdline page_poison= (takes precedence)"}
    name = f"init_on_{which}"
    value = _boot_bool(params.get(name))
    if value is not None:
        return {"value": value, "source": f"/proc/cmdline {name}="}
    # kstrtobool() refused the word: the kernel keeps its config's default, and so do we.
    refused = f" ({name}={params[name]} refused by kstrtobool())" if name in params else ""
    if where is None:
        return {"value": None, "source": None}
    option = f"CONFIG_INIT_ON_{which.upper()}_DEFAULT_ON"
    on = _config_set(config, option)
    return {"value": on, "source": f"{where} {option}{'=y' if on else ' not set'}{refused}"}


# Architectures with their own clear_pages(), whose 7.0 batch is 32MB (docs/glossary.rst).
_OWN_CLEAR_PAGES = {"x86-64": "arch/x86/include/asm/page_64.h"}


def non_preempt_batch(arch: str | None = None) -> dict[str, str]:
    """The batch preset a 7.0 kernel on `arch` clears between resched points, and its source."""
    arch = arch if arch is not None else _core.ARCH
    where = _OWN_CLEAR_PAGES.get(arch)
    # 7.0's include/linux/mm.h tests `#ifdef clear_pages`: the architecture defines the macro.
    why = f"#ifdef clear_pages, {where}" if where else f"no clear_pages() of {arch}'s own"
    source = f"include/linux/mm.h PROCESS_PAGES_NON_PREEMPT_BATCH ({why})"
    return {"preset": "32MB" if where else "page", "source": source}


_DIRECT_MAP = re.compile(r"^DirectMap(4k|2M|4M|1G):\s+(\d+)\s+kB", re.M)


def linear_map(root: str = "/", arch: str | None = None) -> dict[str, Any]:
    """The pages of the kernel's linear map, which the kernel clears through: {"pages": "4KB",
    "huge" or None (not known), "source"}; x86 from /proc/meminfo, arm64 from boot and config."""
    arch = arch if arch is not None else os.uname().machine
    mapped = {k: int(n) for k, n in _DIRECT_MAP.findall(_read(root, "proc/meminfo") or "")}
    if mapped:  # x86 counts the direct map's pages of each size: it says so directly
        small = 2 * mapped.get("4k", 0) > sum(mapped.values())
        sizes = ", ".join(f"DirectMap{k} {_mib(n * 1024)}" for k, n in mapped.items())
        return {"pages": "4KB" if small else "huge", "source": f"/proc/meminfo {sizes}"}
    if arch not in ("aarch64", "arm64"):
        return {"pages": None, "source": f"not read on {arch} (no DirectMap in /proc/meminfo)"}
    params = boot_params(_read(root, "proc/cmdline"))
    config, where = kernel_config(root)
    # arch/arm64/mm/mmu.c can_set_direct_map(): each forces the linear map to 4KB pages.
    if _boot_bool(params.get("debug_pagealloc")):
        return {"pages": "4KB", "source": "/proc/cmdline debug_pagealloc="}
    kfence = where and _config_set(config, "CONFIG_KFENCE")
    if kfence and params.get("kfence.sample_interval", "") != "0":
        return {"pages": "4KB", "source": f"{where} CONFIG_KFENCE=y (kfence enabled)"}
    rodata = params.get("rodata")
    bbml2 = "assumed: the CPU lacks BBML2, which would keep block mappings"
    if rodata == "noalias" or _boot_bool(rodata) is False:
        return {"pages": "huge", "source": f"/proc/cmdline rodata={rodata}"}
    if rodata is not None or not where or _config_set(config, "CONFIG_RODATA_FULL_DEFAULT_ENABLED"):
        why = f"/proc/cmdline rodata={rodata}" if rodata else "rodata=full, arm64's default"
        return {"pages": "4KB", "source": f"{why} ({bbml2})"}
    return {"pages": "huge", "source": f"{where} CONFIG_RODATA_FULL_DEFAULT_ENABLED not set"}


@functools.cache
def _static(root: str) -> dict[str, Any]:
    cpuinfo = _read(root, "proc/cpuinfo") or ""
    cpu = re.search(r"^(model name|Model|cpu model)\s*:(.*)$", cpuinfo, re.M)
    # arm64's DC ZVA block (DCZID_EL0): the unit of the registry's kernel that needs dczva.
    dczva = next((k.unit for k in kernels("clear") if "dczva" in k.features), None)
    uname = os.uname()
    thp = os.path.join(root, "sys/kernel/mm/transparent_hugepage")
    nodes = os.path.join(root, "sys/devices/system/node")
    return {
        "cpu_model": cpu[2].strip() if cpu else platform.processor() or "unknown",
        "arch": uname.machine,
        "cpu_features": list(_core.cpu_features()),
        "cpus_online": os.cpu_count(),
        "kernel_release": uname.release,
        "kernel_version": uname.version,
        # Boot parameters (preempt=, mitigations=, ...) can make two boots measure differently.
        "kernel_cmdline": _read(root, "proc/cmdline"),
        "hostname": uname.nodename,
        "python": platform.python_version(),
        "pagezero_arch": _core.ARCH,
        "dczva_block_bytes": dczva,
        "caches": caches(root),
        "page_sizes": {
            "base_bytes": base_page(),
            "base_source": "sysconf(_SC_PAGESIZE)",
            "thp_bytes": thp_pmd_size(thp + "/hpage_pmd_size"),
            "thp_source": "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
        },
        "thp": {
            "enabled": sysfs_choice(thp + "/enabled"),
            "defrag": sysfs_choice(thp + "/defrag"),
            "source": "/sys/kernel/mm/transparent_hugepage",
        },
        "preemption": preemption(root),
        # init_on_alloc: the allocator zeroes THP folios (post_alloc_hook()), so faults do not.
        "init_on_alloc": init_on("alloc", root),
        "init_on_free": init_on("free", root),
        "non_preempt_batch": non_preempt_batch(),
        "numa_nodes": [
            {"node": n, "cpus": read_text(f"{nodes}/node{n}/cpulist")} for n in listed_nodes(nodes)
        ],
    }


def machine(root: str = "/") -> dict[str, Any]:
    """This machine, as every saved result records it; pools and memory read afresh each call.

    Parameters
    ----------
    root : str
        The root ``/sys`` and ``/proc`` are read under; tests point it at a fixture tree.

    Returns
    -------
    dict
        A fresh copy of the facts docs/measuring.rst ("Machine metadata") lists.
    """
    info = copy.deepcopy(_static(root))
    info["hugepages"] = _hugepages(root)
    meminfo = _read(root, "proc/meminfo") or ""
    found = {name: re.search(rf"^{key}:\s+(\d+) kB", meminfo, re.M) for key, name in _MEMINFO}
    info["memory"] = {name: int(m[1]) * 1024 for name, m in found.items() if m}
    info["eviction_cache"] = eviction_cache(info)
    info["linear_map"] = linear_map(root)
    if switches := _core.switches():  # a test build's PAGEZERO_* in effect: what was faked
        info["test_switches"] = switches
    return info


def thp_clear(release: str, init_on_free: bool | None) -> str:
    """Who clears a THP folio with init_on_alloc on, by the release (before 6.13 where it cannot
    be read): "both" (the allocator, then the fault), "fault" (init_on_free zeroed it, only the
    fault clears), "allocator" (6.13: not the fault) or "freed" (6.13, init_on_free: no one)."""
    # mm/page_alloc.c post_alloc_hook(): with init_on_free the pages were zeroed when freed.
    if (release_tuple(release) or (0, 0)) >= INIT_ON_ALLOC_SKIPS_FROM:
        return "freed" if init_on_free else "allocator"
    return "fault" if init_on_free else "both"


_THP_CLEAR_WORDS = {
    "both": "THP faults clear them again: twice (folio_zero_user(), before 6.13)",
    "fault": "THP faults clear them again (folio_zero_user(), before 6.13)",
    "allocator": "THP faults do not clear (user_alloc_needs_zeroing(), 6.13 and later)",
}
_THP_CLEAR_WORDS["freed"] = _THP_CLEAR_WORDS["allocator"]


def thp_fault_clearing(info: Mapping[str, Any]) -> str:
    """Who clears a THP folio with init_on_alloc on, for a machine() dict's release, in words."""
    free = (info.get("init_on_free") or {}).get("value")
    who = (
        "pages are zeroed when freed"
        if free
        else "the page allocator zeroes THP folios front to back (post_alloc_hook())"
    )
    return f"{who}; {_THP_CLEAR_WORDS[thp_clear(str(info.get('kernel_release') or ''), free)]}"


def _mib(n: float) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n / 2**10:g} KiB"


def summary(info: Mapping[str, Any]) -> list[str]:
    """A machine() dict as lines of plain text, for ``pagezero info`` and reports."""
    dczva = info.get("dczva_block_bytes")
    pre = info["preemption"]
    lines = [
        f"cpu:         {info['cpu_model']} ({info['arch']}, {info['cpus_online']} CPUs online)",
        f"features:    {', '.join(info['cpu_features']) or '-'}"
        + (f" (DC ZVA block {dczva} bytes)" if dczva else ""),
        f"kernel:      {info['kernel_release']}",
        f"preemption:  {pre['model']} (from {pre['source'] or 'nowhere'})",
    ]
    for name in ("init_on_alloc", "init_on_free"):
        if fact := info.get(name):  # results saved before these facts were read lack them
            value = {True: "on", False: "off", None: "unknown"}[fact["value"]]
            lines.append(f"{name}: {value} (from {fact['source'] or 'nowhere'})")
    if (info.get("init_on_alloc") or {}).get("value"):
        lines.append(f"             {thp_fault_clearing(info)}")
    if batch := info.get("non_preempt_batch"):
        lines.append(
            f"7.0 batch:   {batch['preset']} under preempt=none|voluntary ({batch['source']})"
        )
    if (ev := info.get("eviction_cache")) and ev["bytes"]:
        lines.append(f"evictions:   twice {_mib(ev['bytes'])} read, the cache: {ev['source']}")
    lines.append(f"thp:         enabled={info['thp']['enabled']} defrag={info['thp']['defrag']}")
    if (linear := info.get("linear_map")) and linear["pages"]:
        lines.append(f"linear map:  {linear['pages']} pages ({linear['source']})")
    if mem := info.get("memory", {}):
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
    if measured := info.get("measured_cache"):  # set by `info --measure` and the report
        lines.append(f"measured:    {_measured_words(measured)}")
    for size, pool in info.get("hugepages", {}).items():
        lines.append(f"hugepages {size}: {pool['free']} free of {pool['total']} ({pool['source']})")
    return lines


def _measured_words(m: Mapping[str, Any]) -> str:
    """The measured cache of a machine() dict (analysis.cache.MeasuredCache.to_json()) in words."""
    sysfs = _mib(m["llc_bytes"]) if m.get("llc_bytes") else "unknown"
    if m.get("cache_bytes") is None:
        return (
            "fewer than half the temporal kernels fall to a memory plateau over the extents "
            f"measured; the studies use sysfs's LLC ({sysfs})"
        )
    fall = (
        f"cache {_mib(m['cache_bytes'])} (temporal kernels at cache speed up to it, "
        f"memory plateau from {_mib(m['plateau_bytes'])})"
    )
    if m.get("source") == "measured":
        return f"{fall}; sysfs's LLC: {sysfs}; the studies use the measured cache"
    return f"{fall}; sysfs's LLC: {sysfs}, which it agrees with"


def build_info() -> dict[str, Any]:
    """What made this pagezero: its version and the extension's build (_core.BUILD)."""
    from pagezero import __version__ as pz  # importlib.metadata, read once in __init__

    build = getattr(_core, "BUILD", None)
    return {"pagezero": pz, "build": dict(build) if build else None}
