"""The values of a command a fleet is asked to run, checked on the client as a local run
checks them, so that a value every machine would refuse (``-l -5``, a chunk larger than
the size) is one line and exit 2 before anything is sent.

The checks are the command's own: the plans that ``mem memset|memcpy|mmap``, ``batch``
and ``folio`` make of their arguments before measuring anything (cli/mem.py,
cli/policy.py), given the arguments with this machine's facts taken out. What depends on
the machine that runs the command is left to it: whether it has the CPUs for that many
threads (checked here up to the CPUs this machine has), the NUMA nodes asked for, the
kernels named (an arm64 machine has others than an x86-64 one), the memory and the
hugepages; a machine that lacks them refuses its runs itself (they fail, with its reason).
A check that this machine cannot make (its own memory too small, a kernel it lacks) stops
the checks here, and the machines check what follows it. ``sweep`` and ``report`` are
checked as far as pagezero's parser goes (and ``report``'s ``--runs``): a sweep's grid
points are checked by each machine (their kernels, threads and nodes are its own).
"""

import argparse
import os

from pagezero._core import PagezeroError
from pagezero.cli.mem import plan_mem, plan_mmap
from pagezero.cli.options import UsageError
from pagezero.cli.policy import plan_batches, plan_folios
from pagezero.measure import fault as faults
from pagezero.runs.processes import check_runs

__all__ = ["check_values"]


def _mmap(args):
    _, job = plan_mmap(args)
    if args.function not in ("all", "help"):
        faults.check_latency(job, faults.check_workload(args.function))


def _report(args):
    if args.runs is not None:
        check_runs(args.runs)  # as the report checks it first (studies/report)


_CHECKS = {
    "memset": plan_mem,
    "memcpy": plan_mem,
    "mmap": _mmap,
    "batch": plan_batches,
    "folio": plan_folios,
    "report": _report,
}


def _any_machine(args):
    """A copy of `args` with what only the running machine can judge taken out."""
    args = argparse.Namespace(**vars(args))
    threads, cpus = getattr(args, "threads", None), len(os.sched_getaffinity(0))
    if isinstance(threads, int) and threads > cpus:
        # As many as this machine has CPUs for: more is the running machine's to judge.
        args.threads = cpus
    for name in ("node", "cpu_node"):
        node = getattr(args, name, None)
        if node is not None:
            if node < 0:
                raise ValueError(f"{name} must be a NUMA node's number (0 or more), not {node}")
            setattr(args, name, None)
    for name in ("kernel", "nt_kernel"):
        if hasattr(args, name):
            setattr(args, name, None)  # this machine's default kernel stands in
    return args


def check_values(args):
    """Check the values of `args` (the command a fleet runs, as pagezero parsed it) as a
    local run would, this machine's facts taken out (see the module's note); ValueError
    for one that every machine would refuse."""
    check = _CHECKS.get(args.command)
    if check is None:
        return
    try:
        check(_any_machine(args))
    except UsageError as e:
        raise ValueError(str(e)) from None
    except (PagezeroError, OSError):
        pass  # this machine's memory, hugepages or kernels: each machine checks its own
