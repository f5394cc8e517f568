"""Which policy the running kernel clears with: its release and preemption model, read from
pagezero.machine().

The preemption model is sysinfo.preemption()'s: the live model from debugfs sched/preempt, a
preempt= boot parameter, `uname -v` or the kernel config. A PREEMPT_DYNAMIC kernel whose
live model cannot be read (debugfs is root-only and often unmounted), or a model not found
at all, is taken to run the default of kernel/Kconfig.preempt's "Preemption Model" choice,
PREEMPT_NONE, and the prediction says it assumed so. PREEMPT_RT clears as a fully
preemptible kernel does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pagezero.studies.predict.replays import FIRST_RELEASE, PREEMPT_MODES, Replay, from_7_0, pre_7_0

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

    @property
    def from_7_0(self) -> bool:
        """True when the release clears with the 7.0 policy."""
        version = release_tuple(self.release)
        return version is not None and version >= FIRST_RELEASE


def running_kernel(info: Mapping[str, Any]) -> RunningKernel:
    """The running kernel's release and preemption model, from a machine() dict."""
    release = str(info.get("kernel_release") or "")
    pre = info.get("preemption") or {}
    read = str(pre.get("model") or "unknown")
    source = pre.get("source")
    if read in PREEMPT_MODES:
        return RunningKernel(release, read, read)
    if read == "rt":
        return RunningKernel(release, "full", read, "PREEMPT_RT clears as preempt=full")
    why = (
        "the live model of this PREEMPT_DYNAMIC kernel needs debugfs "
        "(/sys/kernel/debug/sched/preempt)"
        if read == "dynamic"
        else f"no preemption model found ({source or 'debugfs, cmdline, uname -v, config'})"
    )
    note = f"assumed: {why}; none is kernel/Kconfig.preempt's default"
    return RunningKernel(release, KERNEL_DEFAULT_PREEMPT, read, note)


def replay_for(kernel: RunningKernel, folio_bytes: int) -> Replay:
    """The policy `kernel` clears a folio with: 7.0's from 7.0 on, else pre-7.0's."""
    # A release that cannot be read is taken as pre-7.0: every one before 2026.
    if kernel.from_7_0:
        return from_7_0(folio_bytes, kernel.preempt)
    return pre_7_0(folio_bytes)
