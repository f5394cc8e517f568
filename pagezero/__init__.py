"""pagezero: a laboratory for clearing memory pages.

The C core (pagezero._core) holds the kernels, clocks, regions and timed
loops; this package parses arguments, wraps results and drives the CLI.
"""
from . import _core
from ._core import MappingError, PagezeroError, UnavailableError
from .bench import memcpy, memset
from .fault import Headroom, faults, headroom
from .hugepages import pools as hugepage_pools, reserve as reserve_hugepages
from .kernels import Kernel, clear, copy, fill, find_kernel, kernels
from .machine import machine
from .region import region
from .results import Result, load_results, save_results
from .units import format_size, parse_size

__version__ = "0.1.0"

__all__ = [
    "MappingError", "PagezeroError", "UnavailableError",
    "memset", "memcpy",
    "faults", "headroom", "Headroom", "hugepage_pools", "reserve_hugepages",
    "Kernel", "kernels", "find_kernel", "clear", "fill", "copy",
    "machine", "region",
    "Result", "load_results", "save_results",
    "parse_size", "format_size",
]
