"""Clearing policies: clear_pages() batches and folio_zero_user() orders.

The kernel's clearing policy chooses how much to clear per call (the preemption
batch: 8MB in "mm: folio_zero_user: clear contiguous pages" (2025), 32MB as
merged in Linux 7.0), in which order to clear a huge page's subpages
(mm/memory.c folio_zero_user()), and with which stores: batch() weighs
throughput against the worst batch, folio() times the fault neighbourhood's
touch right after a clear, clear_order() gives a strategy's steps.
"""

from __future__ import annotations

# Re-exported: the names other layers take from pagezero.measure.policy.
from pagezero.measure.policy.batches import batch as batch
from pagezero.measure.policy.batches import plan_batch as plan_batch
from pagezero.measure.policy.batches import run_batch as run_batch
from pagezero.measure.policy.folios import FolioMemory as FolioMemory
from pagezero.measure.policy.folios import folio as folio
from pagezero.measure.policy.folios import plan_folio as plan_folio
from pagezero.measure.policy.folios import run_folio as run_folio
from pagezero.measure.policy.orders import NEIGHBOURHOOD_RADIUS as NEIGHBOURHOOD_RADIUS
from pagezero.measure.policy.orders import PAGE_SIZE as PAGE_SIZE
from pagezero.measure.policy.orders import PRESETS as PRESETS
from pagezero.measure.policy.orders import STRATEGIES as STRATEGIES
from pagezero.measure.policy.orders import Step as Step
from pagezero.measure.policy.orders import clear_folio as clear_folio
from pagezero.measure.policy.orders import clear_order as clear_order
from pagezero.measure.policy.orders import default_kernel as default_kernel
from pagezero.measure.policy.orders import default_nt_kernel as default_nt_kernel
from pagezero.measure.policy.orders import needs_nontemporal as needs_nontemporal
from pagezero.measure.policy.results import BatchResult as BatchResult
from pagezero.measure.policy.results import FolioResult as FolioResult
