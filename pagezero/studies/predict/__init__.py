"""Predict the fault path: replay the running kernel's clearing, explain the
measured fault rate, project what a policy change would gain.

Modules, one job each:
  replays  the kernel's clearing policies as folio replays, with their sources;
  choice   the policy the running kernel uses (release, preemption model);
  warmup   the leading runs still warming up, and the rule that finds them;
  model    the fit (explained share, remainder per fault) and the projections;
  result   the Prediction, as JSON and as text;
  measure  predict(): the faults, the replays, the fit.
"""

from __future__ import annotations

from pagezero.studies.predict.choice import (
    KERNEL_DEFAULT_PREEMPT,
    RunningKernel,
    replay_for,
    running_kernel,
)
from pagezero.studies.predict.measure import PAGES, predict
from pagezero.studies.predict.model import (
    ASSUMPTIONS,
    FIT_HIGH,
    FIT_LOW,
    Fit,
    Projection,
    fit,
    project,
)
from pagezero.studies.predict.replays import (
    MAX_ORDER_BYTES,
    PREEMPT_MODES,
    Replay,
    every_policy,
    from_7_0,
    pre_7_0,
)
from pagezero.studies.predict.result import JSON_KEYS, Prediction, ProjectedPolicy
from pagezero.studies.predict.warmup import WARM_FRACTION, warming_runs

__all__ = [
    "predict",
    "Prediction",
    "ProjectedPolicy",
    "JSON_KEYS",
    "PAGES",
    "Replay",
    "pre_7_0",
    "from_7_0",
    "every_policy",
    "MAX_ORDER_BYTES",
    "PREEMPT_MODES",
    "RunningKernel",
    "running_kernel",
    "replay_for",
    "KERNEL_DEFAULT_PREEMPT",
    "Fit",
    "fit",
    "Projection",
    "project",
    "FIT_LOW",
    "FIT_HIGH",
    "ASSUMPTIONS",
    "WARM_FRACTION",
    "warming_runs",
]
