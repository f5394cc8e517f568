"""The header of a comparison: what each side booted, and whether the sides
were one machine.

Comparing two kernels is boot the base, measure, boot the patched one,
measure, compare. What can differ between the two boots besides the patch
is the kernel's release, its command line (preempt=, transparent_hugepage=,
mitigations=), its preemption mode and the THP settings: each side's are
shown. What must not differ is the machine: a CPU model, caches or memory
that differ mean the change measured is not the patch's alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pagezero.units import format_size

__all__ = ["side_facts", "machine_differences", "header_lines", "header_json"]

# MemTotal moves by a few MB between kernels of one machine (what each
# reserves for itself); more than this is another machine, or mem=.
_MEMORY_TOLERANCE = 0.02


def side_facts(machine: Mapping[str, Any]) -> dict[str, str]:
    """The kernel facts of one side, as short strings.

    Parameters
    ----------
    machine : Mapping
        The side's machine, as sysinfo.machine() recorded it.

    Returns
    -------
    dict of str
        kernel_release, kernel_cmdline, preemption and thp; "unknown" where
        its file does not record them (e.g. files saved before they were).
    """
    thp = machine.get("thp") or {}
    preemption = machine.get("preemption") or {}
    return {
        "kernel_release": machine.get("kernel_release") or machine.get("kernel") or "unknown",
        "kernel_cmdline": machine.get("kernel_cmdline") or "unknown",
        "preemption": preemption.get("model") or "unknown",
        "thp": (f"enabled={thp.get('enabled')} defrag={thp.get('defrag')}" if thp else "unknown"),
    }


def _caches(machine: Mapping[str, Any]) -> list[tuple[Any, Any, Any]] | None:
    caches = machine.get("caches")
    if not caches:
        return None
    return sorted(
        (c.get("level") or 0, c.get("type") or "", c.get("size_bytes") or 0) for c in caches
    )


def _cache_text(caches: Sequence[tuple[Any, Any, Any]]) -> str:
    return ", ".join(
        f"L{level} {str(kind).lower()} {format_size(size)}" for level, kind, size in caches
    )


def _memory(machine: Mapping[str, Any]) -> Any:
    return (machine.get("memory") or {}).get("total_bytes")


def machine_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What says two machine() dicts are not one machine.

    Parameters
    ----------
    a, b : Mapping
        The two machines, as sysinfo.machine() recorded them.

    Returns
    -------
    list of str
        CPU model, caches, memory (beyond _MEMORY_TOLERANCE, 2%), each as
        "what (a vs b)"; empty when nothing differs. Facts only one side
        records are passed over.
    """
    found: list[str] = []
    if a.get("cpu_model") and b.get("cpu_model") and a["cpu_model"] != b["cpu_model"]:
        found.append(f"CPU model ({a['cpu_model']} vs {b['cpu_model']})")
    ca, cb = _caches(a), _caches(b)
    if ca and cb and ca != cb:
        found.append(f"caches ({_cache_text(ca)} vs {_cache_text(cb)})")
    ma, mb = _memory(a), _memory(b)
    if ma and mb and abs(ma - mb) > _MEMORY_TOLERANCE * max(ma, mb):
        found.append(f"memory ({ma / 2**30:.1f} GiB vs {mb / 2**30:.1f} GiB)")
    return found


def header_lines(
    machines: Sequence[Mapping[str, Any]], names: Sequence[str], runs: Sequence[str], method: str
) -> list[str]:
    """The lines above a comparison's table.

    Parameters
    ----------
    machines : sequence of Mapping
        Each side's machine, the base first.
    names : sequence of str
        Each side's name.
    runs : sequence of str
        Each side's runs per point, as comparison.runs_per_side() gives them.
    method : str
        The test done (comparison.METHOD).

    Returns
    -------
    list of str
        One line per side (name, kernel release, preemption, THP, runs per
        point, and the kernel command line where the sides' differ; one line
        for it where they agree), a warning per side measured on another
        machine than the base, and the method.
    """
    facts = [side_facts(m) for m in machines]
    cmdlines = {f["kernel_cmdline"] for f in facts}
    rows = [["side", "kernel", "preemption", "THP", "runs", "command line"]]
    rows += [
        [name, f["kernel_release"], f["preemption"], f["thp"], r, f["kernel_cmdline"]]
        for name, f, r in zip(names, facts, runs)
    ]
    if len(cmdlines) == 1:
        rows = [r[:-1] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]).rstrip() for r in rows]
    if len(cmdlines) == 1:
        lines.append(f"command line (every side): {cmdlines.pop()}")
    for name, m in zip(names[1:], machines[1:]):
        diff = machine_differences(machines[0], m)
        if diff:
            lines.append(
                f"warning: {names[0]} and {name} were not measured on the same machine: "
                f"{'; '.join(diff)}"
            )
    lines.append(f"method: {method}")
    return lines


def header_json(
    machines: Sequence[Mapping[str, Any]], names: Sequence[str], runs: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The header's facts for --format json.

    Parameters
    ----------
    machines, names, runs : sequence
        As header_lines() takes them.

    Returns
    -------
    tuple of (list of dict, list of dict)
        One entry per side (side_facts() with name and runs), and one warning
        per side measured on another machine than the base: {"side",
        "differences"}.
    """
    sides = [dict(side_facts(m), name=n, runs=r) for m, n, r in zip(machines, names, runs)]
    warnings = [
        {"side": n, "differences": machine_differences(machines[0], m)}
        for n, m in zip(names[1:], machines[1:])
        if machine_differences(machines[0], m)
    ]
    return sides, warnings
