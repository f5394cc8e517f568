"""Predict the fault path: replay the running kernel's clearing, explain the measured fault
rate, project what a policy change would gain.

Modules: replays (the kernel's clearing policies as folio replays, with their sources),
running (the policy the running kernel uses), warmup (the leading runs still warming up),
model (the fit and the projections), prediction (the Prediction, as JSON and as text), study
(predict(): the faults, the replays, the fit).
"""

from pagezero.studies.predict.prediction import Prediction
from pagezero.studies.predict.study import PAGES, predict

__all__ = ["predict", "Prediction", "PAGES"]
