"""A fault run cut short as a stop signal cuts it: for the headroom tests of the API
and of the command line; one pass of a workload left mapped, to inspect."""

import dataclasses
import signal

from pagezero import _core
from pagezero.interrupt import Interrupted
from pagezero.measure import fault
from pagezero.system.memory import thp_mode


def cut_short_memset(monkeypatch, at):
    """Make headroom's clear number `at` stop as a signal stops it: Interrupted(SIGTERM)
    carrying one completed loop."""
    real, calls = fault.memset, []

    def memset(**kwargs):
        calls.append(kwargs["function"])
        if len(calls) == at:
            cut = real(**dict(kwargs, loops=1))
            raise Interrupted(
                signal.SIGTERM, partial=dataclasses.replace(cut, interrupted="SIGTERM")
            )
        return real(**kwargs)

    monkeypatch.setattr(fault, "memset", memset)


def loops_run(result):
    """The loops a fault run measured: those its rate counts plus the leading ones the
    warm-up rule left out (measure/mem.py, warming_runs; details["warmup"]). A freshly booted VM's
    first loop is often left out, so a test that counts loops counts these."""
    return result.loops + result.details.get("warmup", {}).get("loops", 0)


def fault_pass(
    size, page="4KB", function="demand", thp=False, seed=0, latency=False, touch="write"
):
    """One untimed pass of a workload, its region left mapped: (Region, its smaps counters)."""
    p = fault.plan(size, page, 1, 1, seed, thp, "ns", latency, touch)
    fault.check_latency(p, function)
    return _core.fault_pass(
        function, p.nbytes, p.shift, thp_mode(thp, p.shift), seed, p.lat_unit, touch
    )
