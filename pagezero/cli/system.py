"""pagezero info | kernels: what this machine is, and which kernels it can run."""

from pagezero.analysis.cache import INFO_KEY
from pagezero.cli.render import print_json
from pagezero.studies.cache import measure_cache
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine, summary


def cmd_info(args):
    """pagezero info: CPU, caches, hugepages, THP, preemption; --measure: the cache a run has."""
    info = machine()
    if args.measure:
        info[INFO_KEY] = measure_cache(info).to_json()
    if args.format == "json":
        print_json(info)
    else:
        print("\n".join(summary(info)))
    return 0


def cmd_kernels(args):
    """pagezero kernels: each kernel's availability on this CPU, stores and features."""
    kinds = ("clear", "copy") if args.kind == "all" else (args.kind,)
    found = [k for kind in kinds for k in kernels(kind)]
    if args.format == "json":
        fields = "kind name available reason temporal zero_only features description".split()
        # The features as a list, in their place.
        print_json(
            [{f: getattr(k, f) for f in fields} | {"features": list(k.features)} for k in found]
        )
    elif args.format == "simple":  # what -f and --kernel accept here, one name a line
        print("\n".join(k.name for k in found if k.available))
    else:
        rows = [("KIND", "NAME", "AVAILABLE", "STORES", "NEEDS", "DESCRIPTION")]
        for k in found:
            available = "yes" if k.available else f"no: {k.reason}"
            stores = "temporal" if k.temporal else "non-temporal"
            rows.append(
                (k.kind, k.name, available, stores, ",".join(k.features) or "-", k.description)
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0
