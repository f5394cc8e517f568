"""The models of docs/predict.rst, projecting with intervals from the runs' spread: observed
(sampled share's clear + remainder) and subtraction (replayed clear + remainder, the check);
what sampling saw inside the fault (Inside), the observed model's share."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagezero.measure import profile
from pagezero.results.result import Result
from pagezero.studies.predict.replays import Replay

FIT_LOW = 0.60
FIT_HIGH = 1.10

ASSUMPTIONS = (
    "the remainder (the fault path's own cost) does not change with the clearing policy",
    "user space clears as fast as the kernel's direct map would, hence its pages for the replays",
)
# The observed model's: the replays give only the ratios between policies.
OBSERVED_ASSUMPTIONS = (
    ASSUMPTIONS[0],
    "the kernel's clear changes between policies as the replays' clears do (on the pages of "
    "the kernel's direct map)",
)


@dataclass(frozen=True)
class Fit:
    """Fault against replayed clear (s per folio); the remainder's bounds may be below zero."""

    folio_bytes: int
    fault_s: float
    clear_s: float
    remainder_low: float
    remainder_high: float

    @property
    def explained(self) -> float:
        """The share of the fault time the replayed clear accounts for."""
        return self.clear_s / self.fault_s

    @property
    def remainder_s(self) -> float:
        """The fault path's own cost per fault, in seconds."""
        return self.fault_s - self.clear_s

    @property
    def fits(self) -> bool:
        """FIT_LOW <= explained <= FIT_HIGH, and the remainder not below zero across the runs."""
        return FIT_LOW <= self.explained <= FIT_HIGH and self.remainder_high >= 0

    def verdict(self) -> str:
        """Why the model fits or not, in words, with the figures."""
        share = f"the replay explains {self.explained:.0%} of the fault time"
        lo, mid, hi = (x * 1e6 for x in (self.remainder_low, self.remainder_s, self.remainder_high))
        remainder = f"remainder {mid:.1f} us per fault ({lo:.1f}..{hi:.1f} across the runs)"
        unfit, within = "the model does not fit this machine", f"{FIT_LOW:.0%}..{FIT_HIGH:.0%}"
        if self.explained < FIT_LOW:
            why = f"under {FIT_LOW:.0%}: {unfit} (the fault path spends most of its time elsewhere)"
        elif self.explained > FIT_HIGH:
            why = f"over {FIT_HIGH:.0%}: {unfit} (user space clears slower than the kernel faults)"
        elif self.remainder_high < 0:
            why = (
                f"{remainder}: below zero across the runs, the replay clears "
                f"slower than the kernel faults, so {unfit}"
            )
        elif self.remainder_s < 0:
            return (
                f"{share}, within {within}, {remainder}: zero within the runs' "
                f"spread, so projected with none; the model fits"
            )
        else:
            return f"{share}, within {within}: the model fits"
        return f"{share}, {why}; nothing projected"


def _check_times(name: str, times: Sequence[float]) -> None:
    if not times or any(not t > 0 for t in times):
        raise ValueError(f"{name} needs positive times, one per run, not {list(times)!r}")


def fit(folio_bytes: int, fault_s: Sequence[float], clear_s: Sequence[float]) -> Fit:
    """The fit from per-run seconds per fault and per clear: medians, the remainder's bounds."""
    _check_times("the fault", fault_s)
    _check_times("the replay", clear_s)
    return Fit(
        folio_bytes,
        statistics.median(fault_s),
        statistics.median(clear_s),
        min(fault_s) - max(clear_s),
        max(fault_s) - min(clear_s),
    )


@dataclass(frozen=True)
class ProjectedPolicy:
    """One policy's projected fault rate (bytes/sec), low and high, and its replay's rate."""

    replay: Replay
    bytes_per_sec: float
    low: float
    high: float
    replay_bytes_per_sec: float

    def to_json(self) -> dict[str, Any]:
        """policy, preempt, kernel, stores, bytes_per_sec, low, high, then the replay's details."""
        r = self.replay
        return {
            **{k: getattr(r, k) for k in ("policy", "preempt", "kernel", "stores")},
            **{"bytes_per_sec": self.bytes_per_sec, "low": self.low, "high": self.high},
            **{k: getattr(r, k) for k in ("strategy", "batch", "source")},
            "replay_bytes_per_sec": self.replay_bytes_per_sec,
        }


def project(f: Fit, replay: Replay, clear_s: Sequence[float]) -> ProjectedPolicy:
    """The fault rate under `replay`, whose clear took `clear_s`: folio / (remainder + clear)."""
    # low from the largest remainder and the slowest run, high from the smallest and fastest;
    # a remainder below zero (within the noise, or fit() refused it) counts as none.
    _check_times("a projection", clear_s)
    b, median = f.folio_bytes, statistics.median(clear_s)
    return ProjectedPolicy(
        replay,
        b / (max(f.remainder_s, 0.0) + median),
        b / (max(f.remainder_high, 0.0) + max(clear_s)),
        b / (max(f.remainder_low, 0.0) + min(clear_s)),
        b / median,
    )


@dataclass(frozen=True)
class Observed:
    """The sampled fault (s per folio): fault time and clearing share, medians and bounds."""

    folio_bytes: int
    fault_s: float
    fault_low: float
    fault_high: float
    share: float
    share_low: float
    share_high: float

    @property
    def clear_s(self) -> float:
        """The kernel's clear per fault: share x fault time."""
        return self.share * self.fault_s

    @property
    def remainder_s(self) -> float:
        """The rest of the fault: (1 - share) x fault time."""
        return self.fault_s - self.clear_s

    def bounds_us(self) -> tuple[float, ...]:
        """The clear's low and high per fault in us over the bounds, then the remainder's."""
        low, high = self.fault_low * 1e6, self.fault_high * 1e6
        s, t = self.share_low, self.share_high
        return s * low, t * high, (1 - t) * low, (1 - s) * high

    def project(
        self, replay: Replay, ratios: Sequence[float], clear_s: Sequence[float]
    ) -> ProjectedPolicy:
        """The fault rate under `replay` (per run `ratios` x the running replay, `clear_s`)."""
        _check_times("a projection's ratio", ratios)
        _check_times("a projection", clear_s)
        # t = fault (1 - share + share ratio) rises with the fault time and the ratio, and
        # with the share where the ratio is over 1: its ends lie at the bounds' corners.
        ends = [
            f * (1 - s + s * q)
            for f in (self.fault_low, self.fault_high)
            for s in (self.share_low, self.share_high)
            for q in (min(ratios), max(ratios))
        ]
        mid = self.fault_s * (1 - self.share + self.share * statistics.median(ratios))
        b = self.folio_bytes
        return ProjectedPolicy(
            replay, b / mid, b / max(ends), b / min(ends), b / statistics.median(clear_s)
        )


def observed(
    folio_bytes: int, fault_s: Sequence[float], share: float, low: float, high: float
) -> Observed:
    """The observed model from per-run seconds per fault and the clearing share's bounds."""
    _check_times("the fault", fault_s)
    if not 0 <= low <= share <= high <= 1:
        raise ValueError(f"a share needs 0 <= low <= share <= high <= 1, not {low, share, high}")
    f = statistics.median(fault_s)
    return Observed(folio_bytes, f, min(fault_s), max(fault_s), share, low, high)


# faults()' keywords to sample its loops: the one place predict and the report switch it on.
SAMPLED: dict[str, Any] = {"profile": True}


@dataclass(frozen=True)
class Inside:
    """The clearing share (median, low, high; the interval's level), the routines seen, groups'
    shares, samples, runs, and each run's share."""

    share: float
    low: float
    high: float
    routines: tuple[str, ...]
    groups: dict[str, float]
    samples: int
    runs: int
    per_run: tuple[float, ...] = ()
    # The interval's real level (profile.clearing_estimate()): 75% for min..max of 3 runs.
    level: float = 0.95

    @property
    def spread_of(self) -> str:
        """What the interval spans: "runs", or "samples" for one run."""
        return "runs" if self.runs > 1 else "samples"

    @property
    def interval_words(self) -> str:
        """The interval's real level and what it spans: "75% interval, 3 runs"."""
        spread = f"{self.runs} runs" if self.runs > 1 else f"{self.samples} samples, 1 run"
        return f"{self.level:.0%} interval, {spread}"

    def share_text(self) -> str:
        """The share with its interval: "96% (95..97%, 75% interval, 3 runs)"."""
        return f"{self.share:.0%} ({self.low * 100:.0f}..{self.high:.0%}, {self.interval_words})"

    def routines_text(self) -> str:
        """The routines with their instructions ("clear_page_erms, rep stosb"), "; "-separated."""
        return "; ".join(self.routines) or "none seen"

    def to_json(self) -> dict[str, Any]:
        """clearing_share, low, high, level, spread_of, clearing_routines, groups, samples,
        runs, per_run."""
        return {
            "clearing_share": self.share,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "spread_of": self.spread_of,
            "clearing_routines": list(self.routines),
            "groups": dict(self.groups),
            "samples": self.samples,
            "runs": self.runs,
            "per_run": list(self.per_run),
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
    share, low, high, level = profile.clearing_estimate(results) or (0.0, 0.0, 0.0, 0.0)
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
    per_run = tuple(float(p["clearing_share"]) for p in profiles)
    runs = len(profiles)
    return Inside(share, low, high, tuple(routines), groups, samples, runs, per_run, level)
