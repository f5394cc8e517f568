"""Which policy the running kernel clears with, from pagezero.machine(): its release,
preemption model (kernel/Kconfig.preempt's default where none is found, said) and
init_on_alloc/init_on_free.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pagezero._core import PagezeroError
from pagezero.studies.predict.replays import (
    FIRST_RELEASE,
    INIT_ON_ALLOC_SKIPS_FROM,
    PREEMPT_MODES,
    Replay,
    allocator_zeroing,
    from_7_0,
    pre_7_0,
)

# kernel/Kconfig.preempt: `choice "Preemption Model" default PREEMPT_NONE`.
KERNEL_DEFAULT_PREEMPT = "none"


def release_tuple(release: str) -> tuple[int, int] | None:
    """(major, minor) of a release such as "6.18.44-fc-v595", or None without two numbers."""
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True)
class RunningKernel:
    """The running kernel's release and preemption model (assumed, read, why they differ)."""

    release: str
    preempt: str
    preempt_read: str
    preempt_note: str | None = None
    init_on_alloc: bool | None = None
    init_on_free: bool | None = None

    def since(self, version: tuple[int, int]) -> bool:
        """True when the release is `version` or later (False when it cannot be read)."""
        release = release_tuple(self.release)
        return release is not None and release >= version

    @property
    def from_7_0(self) -> bool:
        """True when the release clears with the 7.0 policy."""
        return self.since(FIRST_RELEASE)


def running_kernel(info: Mapping[str, Any]) -> RunningKernel:
    """The running kernel's release and preemption model, from a machine() dict."""
    release = str(info.get("kernel_release") or "")
    zeroing = {
        f"init_on_{w}": (info.get(f"init_on_{w}") or {}).get("value") for w in ("alloc", "free")
    }
    pre = info.get("preemption") or {}
    read = str(pre.get("model") or "unknown")
    source = pre.get("source")
    if read in PREEMPT_MODES:
        return RunningKernel(release, read, read, **zeroing)
    if read == "rt":
        return RunningKernel(release, "full", read, "PREEMPT_RT clears as preempt=full", **zeroing)
    why = (
        "the model of this PREEMPT_DYNAMIC kernel needs debugfs "
        "(/sys/kernel/debug/sched/preempt), a preempt= boot parameter or the kernel config "
        "(/proc/config.gz, /boot/config-<release>)"
        if read == "dynamic"
        else f"no preemption model found ({source or 'debugfs, cmdline, uname -v, config'})"
    )
    note = f"assumed: {why}; none is kernel/Kconfig.preempt's default"
    return RunningKernel(release, KERNEL_DEFAULT_PREEMPT, read, note, **zeroing)


def replay_for(kernel: RunningKernel, folio_bytes: int, thp: bool = False) -> Replay:
    """The policy `kernel` clears a folio with (a THP one with `thp`): 7.0's from 7.0 on, else
    pre-7.0's; with init_on_alloc on THP, the page allocator's."""
    if thp and kernel.init_on_alloc and kernel.since(INIT_ON_ALLOC_SKIPS_FROM):
        if kernel.init_on_free:
            # mm/page_alloc.c post_alloc_hook(): init_on_free cleared the pages when they were
            # freed, so the allocator does not, and the fault does not either.
            raise PagezeroError(
                "with init_on_alloc=1 and init_on_free=1 a THP fault clears nothing (its "
                "pages were zeroed when freed): no clear to predict; reserve 2MB hugetlb pages "
                "(pagezero predict --reserve), whose faults clear with folio_zero_user()"
            )
        return allocator_zeroing()
    # A release that cannot be read is taken as pre-7.0: every one before 2026.
    replay = from_7_0(folio_bytes, kernel.preempt) if kernel.from_7_0 else pre_7_0(folio_bytes)
    if thp and kernel.init_on_alloc:
        # Before 6.13 the allocator zeroed the THP folio and the fault cleared it again.
        note = "; init_on_alloc=1: the page allocator also cleared it before (not replayed)"
        return dataclasses.replace(replay, source=replay.source + note)
    return replay
