"""Predict the fault path: replay the running kernel's clearing, explain the measured fault
rate, project what a policy change would gain. Modules: replays (the kernel's policies),
running (the running kernel's), warmup, model (the fit), prediction, study (predict())."""

from pagezero.studies.predict.prediction import Prediction
from pagezero.studies.predict.study import PAGES, predict

__all__ = ["predict", "Prediction", "PAGES"]
