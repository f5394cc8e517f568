"""Clearing policies replayed in user space: batches, folio orders. See docs/policies.rst."""

from pagezero.measure.policy.batches import BatchResult, batch, plan_batch, run_batch
from pagezero.measure.policy.folios import FolioMemory, FolioResult, folio, plan_folio, run_folio
from pagezero.measure.policy.orders import (
    PAGE_SIZE,
    PRESETS,
    STRATEGIES,
    Step,
    clear_folio,
    clear_order,
    default_kernel,
    default_nt_kernel,
)

__all__ = ["BatchResult", "batch", "plan_batch", "run_batch", "FolioMemory", "FolioResult"]
__all__ += ["folio", "plan_folio", "run_folio", "PAGE_SIZE", "PRESETS", "STRATEGIES", "Step"]
__all__ += ["clear_folio", "clear_order", "default_kernel", "default_nt_kernel"]
