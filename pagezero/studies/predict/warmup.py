"""Runs still warming up: the rule lives with the fault runs, which apply it to their loops
(pagezero.measure.warmup); predict applies it to its runs."""

from pagezero.measure.warmup import MIN_KEPT, WARM_FRACTION, warming_runs

__all__ = ["MIN_KEPT", "WARM_FRACTION", "warming_runs"]
