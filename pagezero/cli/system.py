"""pagezero info | kernels: what this machine is, and which kernels it can run."""

import json

from pagezero.cli.options import add_format
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine, summary

__all__ = ["COMMANDS", "add_parsers"]


def cmd_info(args):
    """`pagezero info`: what this machine is (CPU, caches, hugepages, THP,
    preemption), as text or with ``--format json`` as a document.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. Errors are raised for :func:`pagezero.cli.main` to turn
        into one line and exit status 2 (usage) or 1 (the machine cannot do it).
    """
    info = machine()
    if args.format == "json":
        print(json.dumps(info, indent=1))
    else:
        print("\n".join(summary(info)))
    return 0


def cmd_kernels(args):
    """`pagezero kernels`: the clearing and copying kernels (``--kind``), a table
    of each one's availability on this CPU (with the reason when not), its stores
    and the CPU features it needs; ``--format json`` as a document, ``--format
    simple`` only the names this machine can run, one a line.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. Errors are raised for :func:`pagezero.cli.main` to turn
        into one line and exit status 2 (usage) or 1 (the machine cannot do it).
    """
    kinds = ("clear", "copy") if args.kind == "all" else (args.kind,)
    found = [k for kind in kinds for k in kernels(kind)]
    if args.format == "json":
        print(
            json.dumps(
                [
                    {
                        "kind": k.kind,
                        "name": k.name,
                        "available": k.available,
                        "reason": k.reason,
                        "temporal": k.temporal,
                        "zero_only": k.zero_only,
                        "features": list(k.features),
                        "description": k.description,
                    }
                    for k in found
                ],
                indent=1,
            )
        )
        return 0
    if args.format == "simple":
        # What -f/--function and --kernel accept here, one name a line.
        print("\n".join(k.name for k in found if k.available))
        return 0
    rows = [("KIND", "NAME", "AVAILABLE", "STORES", "NEEDS", "DESCRIPTION")]
    for k in found:
        rows.append(
            (
                k.kind,
                k.name,
                "yes" if k.available else f"no: {k.reason}",
                "temporal" if k.temporal else "non-temporal",
                ",".join(k.features) or "-",
                k.description,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0


COMMANDS = {"info": cmd_info, "kernels": cmd_kernels}


def add_parsers(sub):
    """Add the ``info`` and ``kernels`` commands.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``pagezero`` parser (:func:`pagezero.cli.build_parser`).
    """
    p = sub.add_parser("info", help="what this machine is: CPU, caches, hugepages, THP, preemption")
    add_format(p, ("default", "json"))

    k = sub.add_parser("kernels", help="list the clearing and copying kernels")
    k.add_argument("--kind", default="all", choices=["clear", "copy", "all"])
    add_format(
        k,
        ("default", "simple", "json"),
        help="simple: the names of the kernels this machine can run, one a line",
    )
