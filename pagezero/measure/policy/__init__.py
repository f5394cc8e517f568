"""Clearing policies: clear_pages() batches and folio_zero_user() orders, replayed in user
space. See docs/policies.rst."""

from __future__ import annotations

# Re-exported: the names other layers take from pagezero.measure.policy.
from pagezero.measure.policy.batches import BatchResult as BatchResult
from pagezero.measure.policy.batches import batch as batch
from pagezero.measure.policy.batches import plan_batch as plan_batch
from pagezero.measure.policy.batches import run_batch as run_batch
from pagezero.measure.policy.folios import FolioMemory as FolioMemory
from pagezero.measure.policy.folios import FolioResult as FolioResult
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
