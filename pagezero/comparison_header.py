"""The header of a comparison: what each side booted, and whether the sides
were one machine.

Comparing two kernels is boot the base, measure, boot the patched one,
measure, compare. What can differ between the two boots besides the patch
is the kernel's release, its command line (preempt=, transparent_hugepage=,
mitigations=), its preemption mode and the THP settings: each side's are
shown. What must not differ is the machine: a CPU model, caches or memory
that differ mean the change measured is not the patch's alone.
"""

from .units import format_size

__all__ = ["side_facts", "machine_differences", "header_lines", "header_json"]

# MemTotal moves by a few MB between kernels of one machine (what each
# reserves for itself); more than this is another machine, or mem=.
_MEMORY_TOLERANCE = 0.02


def side_facts(machine):
    """The kernel facts of one side, as short strings ("unknown" where its file
    does not record them, e.g. files saved before they were)."""
    thp = machine.get("thp") or {}
    preemption = machine.get("preemption") or {}
    return {
        "kernel_release": machine.get("kernel_release") or machine.get("kernel") or "unknown",
        "kernel_cmdline": machine.get("kernel_cmdline") or "unknown",
        "preemption": preemption.get("model") or "unknown",
        "thp": (f"enabled={thp.get('enabled')} defrag={thp.get('defrag')}" if thp else "unknown"),
    }


def _caches(machine):
    caches = machine.get("caches")
    if not caches:
        return None
    return sorted(
        (c.get("level") or 0, c.get("type") or "", c.get("size_bytes") or 0) for c in caches
    )


def _cache_text(caches):
    return ", ".join(
        f"L{level} {str(kind).lower()} {format_size(size)}" for level, kind, size in caches
    )


def _memory(machine):
    return (machine.get("memory") or {}).get("total_bytes")


def machine_differences(a, b):
    """What says two machine() dicts are not one machine: CPU model, caches,
    memory (beyond _MEMORY_TOLERANCE), each as "what (a vs b)". Facts only one
    side records are passed over."""
    found = []
    if a.get("cpu_model") and b.get("cpu_model") and a["cpu_model"] != b["cpu_model"]:
        found.append(f"CPU model ({a['cpu_model']} vs {b['cpu_model']})")
    ca, cb = _caches(a), _caches(b)
    if ca and cb and ca != cb:
        found.append(f"caches ({_cache_text(ca)} vs {_cache_text(cb)})")
    ma, mb = _memory(a), _memory(b)
    if ma and mb and abs(ma - mb) > _MEMORY_TOLERANCE * max(ma, mb):
        found.append(f"memory ({ma / 2**30:.1f} GiB vs {mb / 2**30:.1f} GiB)")
    return found


def header_lines(machines, names, runs, method):
    """Lines above the table: one per side (name, kernel release, preemption,
    THP, runs per point, and the kernel command line where the sides' differ;
    one line for it where they agree), a warning per side measured on another
    machine than the base, and the method (a line of text)."""
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


def header_json(machines, names, runs):
    """The header's facts for --format json: one entry per side, and the warnings."""
    sides = [dict(side_facts(m), name=n, runs=r) for m, n, r in zip(machines, names, runs)]
    warnings = [
        {"side": n, "differences": machine_differences(machines[0], m)}
        for n, m in zip(names[1:], machines[1:])
        if machine_differences(machines[0], m)
    ]
    return sides, warnings
