"""Predict the fault path: replay the kernel's clearing policies, fit, project (predict())."""

from pagezero.studies.predict.prediction import Prediction
from pagezero.studies.predict.study import PAGES, predict

__all__ = ["predict", "Prediction", "PAGES"]
