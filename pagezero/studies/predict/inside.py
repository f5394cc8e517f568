"""Inside the fault: what sampling the fault loops saw over the runs of one workload."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagezero.measure import profile
from pagezero.results.result import Result

# faults()' keywords to sample its loops: the one place predict and the report switch it on.
SAMPLED: dict[str, Any] = {"profile": True}


@dataclass(frozen=True)
class Inside:
    """The clearing share (median, low, high), the routines seen, groups' shares, samples."""

    share: float
    low: float
    high: float
    routines: tuple[str, ...]
    groups: dict[str, float]
    samples: int
    runs: int

    @property
    def spread_of(self) -> str:
        """What the interval spans: "runs", or "samples" for one run."""
        return "runs" if self.runs > 1 else "samples"

    def share_text(self) -> str:
        """The share with its interval: "96% (95..97%, 3 runs)"."""
        spread = f"{self.runs} runs" if self.runs > 1 else f"{self.samples} samples, 1 run"
        return f"{self.share:.0%} ({self.low * 100:.0f}..{self.high:.0%}, {spread})"

    def routines_text(self) -> str:
        """The routines with their instructions ("clear_page_erms, rep stosb"), "; "-separated."""
        return "; ".join(self.routines) or "none seen"

    def to_json(self) -> dict[str, Any]:
        """clearing_share, low, high, spread_of, clearing_routines, groups, samples, runs."""
        return {
            "clearing_share": self.share,
            "low": self.low,
            "high": self.high,
            "spread_of": self.spread_of,
            "clearing_routines": list(self.routines),
            "groups": dict(self.groups),
            "samples": self.samples,
            "runs": self.runs,
        }


def inside(results: Sequence[Result]) -> Inside | str:
    """The runs' profiles as one Inside, or the one line why there is none."""
    profiles: list[Mapping[str, Any]] = [r.details.get("profile") or {} for r in results]
    if not profiles or any(not p for p in profiles):
        return "the faults were not sampled"
    refused = next((p["refused"] for p in profiles if "refused" in p), None)
    if refused:
        return f"sampling refused: {refused}"
    if any(not p.get("samples") for p in profiles):
        return "sampling took no samples in the faults"
    share, low, high = profile.clearing_share(results) or (0.0, 0.0, 0.0)
    if not share:
        return "sampling saw no clearing routine in the faults"
    samples = sum(int(p["samples"]) for p in profiles)
    # The clearing group is the share itself: the groups are the rest of the fault.
    names = dict.fromkeys(
        g for p in profiles for g in p.get("groups", {}) if g != profile.CLEARING_GROUP
    )
    groups = {
        g: statistics.median(p.get("groups", {}).get(g, 0.0) for p in profiles) for g in names
    }
    # The routines seen, the one seen most first (the answer names it).
    seen = sorted(
        (r for p in profiles for r in p.get("clearing_routines", ())), key=lambda r: -r["share"]
    )
    routines = dict.fromkeys(f"{r['symbol']}, {r['instruction']}" for r in seen)
    return Inside(share, low, high, tuple(routines), groups, samples, len(profiles))
