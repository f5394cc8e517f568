"""pagezero: a laboratory for clearing memory pages. The C core (pagezero._core) holds the kernels,
clocks, regions and timed loops; this package parses arguments, wraps results, drives the CLI."""

import importlib.metadata
import importlib.util

try:
    __version__ = importlib.metadata.version(__name__)  # pyproject.toml's, as installed
except importlib.metadata.PackageNotFoundError:
    __version__ = "0+unknown"  # built in place, no metadata: no guessed number (PEP 440 label)

if importlib.util.find_spec(__name__ + "._core") is None:
    # Nothing built: say so, rather than let `from . import _core` fail as a circular import.
    raise ImportError(
        "pagezero's C extension (pagezero._core) is not built: install with `pip install .` "
        "or build it in place with `python setup.py build_ext --inplace`"
    )

from pagezero import _core as _core  # noqa: E402 (after the check above; re-exported)
from pagezero._core import MappingError, PagezeroError, UnavailableError
from pagezero.analysis.compare import compare
from pagezero.interrupt import Interrupted
from pagezero.measure.fault import Headroom, headroom
from pagezero.measure.policy import BatchResult, FolioResult, clear_folio, clear_order
from pagezero.results.resultset import Result, ResultSet, load_results, save_results
from pagezero.runs.processes import batch, faults, folio, memcpy, memset
from pagezero.runs.sweeps import sweep
from pagezero.studies.advise.study import Advice, advise
from pagezero.studies.predict import Prediction, predict
from pagezero.system.hugepages import pools as hugepage_pools
from pagezero.system.hugepages import reserve as reserve_hugepages
from pagezero.system.kernels import Kernel, clear, copy, fill, find_kernel, kernels
from pagezero.system.machine import machine
from pagezero.system.memory import region
from pagezero.units import format_size, parse_size

__all__ = ["MappingError", "PagezeroError", "UnavailableError", "Interrupted", "memset", "memcpy"]
__all__ += ["faults", "headroom", "Headroom", "hugepage_pools", "reserve_hugepages", "Kernel"]
__all__ += ["kernels", "find_kernel", "clear", "fill", "copy", "machine", "region", "Result"]
__all__ += ["ResultSet", "load_results", "save_results", "sweep", "compare", "batch", "folio"]
__all__ += ["clear_order", "clear_folio", "BatchResult", "FolioResult", "advise", "Advice"]
__all__ += ["predict", "Prediction", "parse_size", "format_size"]
