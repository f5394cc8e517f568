"""Clearing policies: clear_pages() batches and folio_zero_user() orders.

The kernel's clearing policy chooses how much to clear per call (the preemption
batch: 8MB in "mm: folio_zero_user: clear contiguous pages" (2025), 32MB as
merged in Linux 7.0), in which order to clear a huge page's subpages
(mm/memory.c folio_zero_user()), and with which stores: batch() weighs
throughput against the worst batch, folio() times the fault neighbourhood's
touch right after a clear, clear_order() gives a strategy's steps.
"""

from __future__ import annotations

from pagezero.measure.policy.batches import batch, plan_batch, run_batch
from pagezero.measure.policy.folios import FolioMemory, folio, plan_folio, run_folio
from pagezero.measure.policy.orders import (
    NEIGHBOURHOOD_RADIUS,
    PAGE_SIZE,
    PRESETS,
    STRATEGIES,
    Step,
    clear_folio,
    clear_order,
    default_kernel,
    default_nt_kernel,
    needs_nontemporal,
)
from pagezero.measure.policy.results import BatchResult, FolioResult

__all__ = [
    "STRATEGIES",
    "PRESETS",
    "PAGE_SIZE",
    "NEIGHBOURHOOD_RADIUS",
    "Step",
    "BatchResult",
    "FolioResult",
    "FolioMemory",
    "batch",
    "plan_batch",
    "run_batch",
    "folio",
    "plan_folio",
    "run_folio",
    "clear_order",
    "clear_folio",
    "default_kernel",
    "default_nt_kernel",
    "needs_nontemporal",
]
