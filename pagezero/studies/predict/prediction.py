"""A prediction: what was measured, what the fit says, what each policy would give."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pagezero.studies.predict.model import (
    ASSUMPTIONS,
    OBSERVED_ASSUMPTIONS,
    Inside,
    Observed,
    ProjectedPolicy,
)
from pagezero.studies.predict.replays import PREEMPT_MODES, Replay
from pagezero.units import parse_size


def _gbs(rate: float | None) -> str:
    """A rate in GB/s, 10^9 bytes per second, as pagezero speaks everywhere."""
    return "-" if rate is None else f"{rate / 1e9:.2f}"


@dataclass(frozen=True)
class ProjectionGroup:
    """Projections that are one walk, hence one figure: a policy, its stores, its models."""

    projected: ProjectedPolicy
    modes: tuple[str, ...]

    @property
    def preempt_words(self) -> str:
        """The preemption models in words: none for pre-7.0, "all four alike" when so."""
        if self.modes == ("any",):
            return ""
        if set(self.modes) == set(PREEMPT_MODES):
            return "all four preemption models project the same"
        return "preempt=" + "|".join(self.modes)

    @property
    def kernel_words(self) -> str:
        """The kernel and whose it is: clear_pages()'s, or the fastest non-temporal one."""
        r = self.projected.replay
        if not r.nontemporal:
            return f"{r.kernel} (clear_pages()'s)"
        proposal = "; the 2012 proposal" if r.policy == "pre-7.0" else ""
        return f"{r.kernel} (fastest non-temporal{proposal})"


def group_projections(projections: list[ProjectedPolicy]) -> list[ProjectionGroup]:
    """One group per figure (models alike): pre-7.0 first, clear_pages()'s stores first."""
    order = ("any", *PREEMPT_MODES)
    groups: dict[tuple[Any, ...], list[ProjectedPolicy]] = {}
    for x in sorted(projections, key=lambda x: order.index(x.replay.preempt)):
        r = x.replay
        key = (r.policy, r.nontemporal, r.kernel, x.bytes_per_sec, x.low, x.high)
        groups.setdefault(key, []).append(x)
    shown = sorted(
        groups.values(), key=lambda xs: (xs[0].replay.policy != "pre-7.0", xs[0].replay.nontemporal)
    )
    return [ProjectionGroup(xs[0], tuple(x.replay.preempt for x in xs)) for xs in shown]


@dataclass
class Prediction:
    """What pagezero.predict() found; None for what was not measured (yet).

    Attributes
    ----------
    page, kernel_release, preempt : str
        "2MB" or "1GB"; the running kernel; the preemption model its policy was chosen by.
    preempt_note, fault_pages, warm_up : str or None, str, str
        Why that model was assumed (None when read); what backed the faults ("2MB THP");
        how the pool was warmed before the runs.
    fault_size, fault_loops, discarded_runs, lost_runs : int
        Bytes per fault loop; loops per run; leading runs dropped as still warming up; runs
        whose worker process died.
    run_rates : list of float
        Each unsampled fault run's rate (the folio over its fault time), in run order,
        discarded ones too.
    fault_bytes_per_sec, loop_bytes_per_sec : float or None
        The folio over the kept runs' median fault time (what the models use); mem mmap's
        loop rate.
    fault_estimator : str
        How a run's fault time was estimated (without sampling; the share from runs with it).
    policy_era : str
        Which policy (7.0 or pre-7.0) the kernel runs, and whether its symbols or its release
        said so.
    replay, replay_backing, replay_bytes_per_sec : Replay, str, float or None
        The running kernel's policy, the pages its replays were on, its replay's rate.
    replay_pages : str
        Which pages the replays were asked for, and why (the kernel's linear map).
    explained, remainder_us, remainder_interval_us, verdict
        The subtraction model: the share the replay explains, the remainder, its bounds, fit.
    inside, observed, sampling : Inside, Observed, str or None
        What sampling saw inside the kept runs' faults, the observed model from it; why it
        was not used, one line (None when it was).
    projections, cross_check : list of ProjectedPolicy
        The answering model's projections; the subtraction's beside them, where it fits.
    nontemporal_kernels : list of str
        The non-temporal kernels each policy was replayed with (the fastest projected).
    interrupted : str or None
        The signal that stopped predict(), if one did.
    """

    page: str
    kernel_release: str
    preempt: str
    preempt_note: str | None
    fault_pages: str
    fault_size: int
    fault_loops: int
    warm_up: str
    run_rates: list[float] = field(default_factory=list)
    discarded_runs: int = 0
    lost_runs: int = 0
    fault_bytes_per_sec: float | None = None
    loop_bytes_per_sec: float | None = None
    fault_estimator: str = ""
    policy_era: str = ""
    replay: Replay | None = None
    replay_pages: str = ""
    replay_backing: str | None = None
    replay_bytes_per_sec: float | None = None
    explained: float | None = None
    remainder_us: float | None = None
    remainder_interval_us: tuple[float, float] | None = None
    nontemporal_kernels: list[str] = field(default_factory=list)
    verdict: str | None = None
    projections: list[ProjectedPolicy] = field(default_factory=list)
    inside: Inside | None = None
    sampling: str | None = None
    observed: Observed | None = None
    cross_check: list[ProjectedPolicy] = field(default_factory=list)
    interrupted: str | None = None

    @property
    def runs(self) -> int:
        """The fault runs measured, the discarded ones included."""
        return len(self.run_rates)

    @property
    def model(self) -> str:
        """The model the projections are from: "observed" or "subtraction"."""
        return "observed" if self.observed else "subtraction"

    @property
    def assumptions(self) -> tuple[str, ...]:
        """What the model the projections are from assumes."""
        return OBSERVED_ASSUMPTIONS if self.observed else ASSUMPTIONS

    def _observed_json(self) -> dict[str, Any] | None:
        o, seen = self.observed, self.inside
        if o is None or seen is None:
            return None
        us = list(o.bounds_us())
        return dict(
            seen.to_json(),
            kernel_clear_us=o.clear_s * 1e6,
            kernel_clear_interval_us=us[:2],
            remainder_us=o.remainder_s * 1e6,
            remainder_interval_us=us[2:],
        )

    def to_json(self) -> dict[str, Any]:
        """The prediction as a JSON document (dict): its key figures first, then the details."""
        o, r, interval = self.observed, self.replay, self.remainder_interval_us
        return {
            **self._fields("page", "kernel_release", "preempt", "fault_bytes_per_sec", "model"),
            "clearing_share": self.inside.share if o and self.inside else None,
            "kernel_clear_us": o.clear_s * 1e6 if o else None,
            "observed_remainder_us": o.remainder_s * 1e6 if o else None,
            "replay_policy": r.policy if r else None,
            **self._fields("replay_bytes_per_sec", "explained", "remainder_us", "runs"),
            "discarded_runs": self.discarded_runs,
            "projections": [p.to_json() for p in self.projections],
            **self._fields("preempt_note", "fault_pages", "fault_size", "fault_loops"),
            "run_bytes_per_sec": list(self.run_rates),
            **self._fields("lost_runs", "loop_bytes_per_sec", "warm_up"),
            "estimators": self.estimators(),
            "policy_era": self.policy_era,
            "replay": asdict(r) if r else None,
            "replay_backing": self.replay_backing,
            "replay_pages": self.replay_pages,
            "remainder_interval_us": list(interval) if interval else None,
            "nontemporal_kernels": list(self.nontemporal_kernels),
            "observed": self._observed_json(),
            **self._fields("sampling", "verdict"),
            "cross_check": [p.to_json() for p in self.cross_check],
            "answers": self.answers(),
            "assumptions": list(self.assumptions),
            "interrupted": self.interrupted,
        }

    def estimators(self) -> dict[str, Any]:
        """The observed model's two figures, each with its estimator and the runs it is from."""
        kept = self.run_rates[self.discarded_runs :]
        folio = parse_size(self.page)
        fault = {
            "estimator": self.fault_estimator,
            "us": folio / self.fault_bytes_per_sec * 1e6 if self.fault_bytes_per_sec else None,
            "per_run_us": [folio / r * 1e6 for r in kept],
            "runs": len(kept),
        }
        seen = self.inside
        share = {
            "estimator": "the period-weighted share of the samples in the kernel's clearing "
            "routines over a run's kept loops, in separate runs with sampling; the median of "
            "the runs",
            **{k: getattr(seen, k) if seen else None for k in ("share", "low", "high", "level")},
            "per_run": list(seen.per_run) if seen else [],
            "runs": seen.runs if seen else 0,
        }
        return {"fault_time": fault, "clearing_share": share}

    def _fields(self, *names: str) -> dict[str, Any]:
        """The named attributes as JSON keys of the same names."""
        return {n: getattr(self, n) for n in names}

    def answers(self) -> list[str]:
        """Today's fault rate, then each policy's projected rate against it (or why none)."""
        if self.fault_bytes_per_sec is None:
            return []
        today = _gbs(self.fault_bytes_per_sec)
        policy = f", {self.replay.policy} policy" if self.replay else ""
        lines = [
            f"{self.page} demand faults today: {today} GB/s (kernel {self.kernel_release}"
            f"{policy}, preempt={self.preempt})"
        ]
        o, seen = self.observed, self.inside
        if o and seen:
            lines.append(
                f"{self.page}: the kernel clears for {seen.share_text()} of the fault "
                f"({seen.routines_text()}): {o.clear_s * 1e6:.1f} of {o.fault_s * 1e6:.1f} us, "
                f"the rest {o.remainder_s * 1e6:.1f} us"
            )
        elif self.sampling and self.verdict:
            lines.append(f"{self.page}: {self.sampling}: today's subtraction model answers")
        if self.verdict and not self.projections:
            return lines + [f"{self.page}: nothing projected: {self.verdict}"]
        for g in group_projections(self.projections):
            x, r = g.projected, g.projected.replay
            gain = f"{x.bytes_per_sec / self.fault_bytes_per_sec - 1:+.0%}"
            modes = f", {g.preempt_words}" if g.preempt_words else ""
            lines.append(
                f"{r.policy} with {g.kernel_words}: {today} -> {_gbs(x.bytes_per_sec)} GB/s "
                f"({gain}; {_gbs(x.low)}..{_gbs(x.high)}){modes}"
            )
        if self.projections and not self.nontemporal_kernels:
            lines.append("no non-temporal clear kernel runs on this CPU: none projected with one")
        check = self.cross_check_line()
        return lines + [check] if check else lines

    def cross_check_line(self) -> str | None:
        """Today's subtraction beside the observed model, in one line; None without both."""
        if not (self.inside and self.observed) or self.explained is None:
            return None
        fits = (
            "fits too: its projections are the cross-check" if self.cross_check else "does not fit"
        )
        return (
            f"cross-check: the replay alone would explain {self.explained:.0%} of the fault "
            f"time, against {self.inside.share:.0%} sampled (subtraction {fits})"
        )

    def describe(self) -> list[str]:
        """The answers first, then how they were found, one line each (GB/s = 10^9 bytes/s)."""
        lines = self.answers()
        how = (
            "demand faults measured without sampling (the fault time) and, in other runs, "
            "sampled (the clearing share), the kernel's clear = clearing share x fault "
            "time, the rest the remainder; a policy's fault = remainder + that clear x its "
            "replay / the running policy's (replays on a cold folio)"
            if self.observed
            else "demand faults measured, the running kernel's clearing replayed on a cold "
            "folio, fault = clear + remainder; a policy's fault = remainder + its clear"
        )
        lines += [
            f"# how: {how}",
            f"# kernel {self.kernel_release}, preempt={self.preempt}"
            + (f" ({self.preempt_note})" if self.preempt_note else "")
            + (f"; {self.policy_era}" if self.policy_era else ""),
            f"# {self.warm_up}",
        ]
        if self.fault_estimator:
            lines.append(f"# fault time: {self.fault_estimator}")
        if self.replay_pages:
            lines.append(f"# replays on {self.replay_pages}")
        if self.run_rates:
            kept = self.runs - self.discarded_runs
            head = f"# demand faults on {self.fault_pages}: {kept} of {self.runs} runs kept"
            if self.discarded_runs:
                slow = ", ".join(_gbs(r) for r in self.run_rates[: self.discarded_runs])
                head += f", {self.discarded_runs} discarded as still warming up ({slow} GB/s)"
            lost = f"; {self.lost_runs} lost (worker died)" if self.lost_runs else ""
            lines += [
                head + lost,
                f"  fault rate          {_gbs(self.fault_bytes_per_sec):>8} GB/s (the folio over "
                f"the median run's fault time; whole loops as mem mmap: "
                f"{_gbs(self.loop_bytes_per_sec)})",
            ]
        r = self.replay
        if r is not None and self.replay_bytes_per_sec is not None:
            lines.append(
                f"  replay {r.policy} ({r.strategy}, {r.kernel}; {r.source}, {r.release}), "
                f"cold folio on {self.replay_backing}: {_gbs(self.replay_bytes_per_sec)} GB/s"
            )
        o, seen = self.observed, self.inside
        if o and seen:
            us = o.bounds_us()
            clear, rest = f"{us[0]:.1f}..{us[1]:.1f}", f"{us[2]:.1f}..{us[3]:.1f}"
            groups = ", ".join(f"{g} {x:.0%}" for g, x in seen.groups.items())
            lines += [
                f"  clearing share      {seen.share:>8.0%} of the fault, sampled "
                f"({seen.low:.0%}..{seen.high:.0%}, {seen.interval_words}; "
                f"{seen.routines_text()}; {seen.samples} samples)",
                f"  kernel clear        {o.clear_s * 1e6:>8.1f} us per fault ({clear})",
                f"  remainder           {o.remainder_s * 1e6:>8.1f} us per fault ({rest})",
                f"  by group            {groups}",
            ]
        if self.explained is not None and self.remainder_us is not None:
            check = " (subtraction, the cross-check)" if self.observed else ""
            lines.append(f"  explained           {self.explained:>8.0%} of the fault time{check}")
            interval = self.remainder_interval_us
            spread = " ({:.1f}..{:.1f} across the runs)".format(*interval) if interval else ""
            name = "remainder by subtr." if self.observed else "remainder"
            lines.append(f"  {name:<19} {self.remainder_us:>8.1f} us per fault{spread}")
        if self.verdict:
            lines.append(f"# {'subtraction: ' * bool(self.observed)}{self.verdict}")
        if self.nontemporal_kernels:
            lines.append(
                "# with non-temporal stores: each policy replayed with "
                f"{', '.join(self.nontemporal_kernels)}; the fastest projected"
            )
        for head, projected in (
            (f"every projection, {self.model} model", self.projections),
            ("every projection by subtraction, the cross-check", self.cross_check),
        ):
            if projected:
                lines.append(f"# {head}, GB/s (low..high from the runs' spread):")
            for p in projected:
                rp = p.replay
                lines.append(
                    f"  {rp.policy:<8} preempt={rp.preempt:<9} {rp.kernel:<20} "
                    f"{_gbs(p.bytes_per_sec):>8} ({_gbs(p.low)}..{_gbs(p.high)})  "
                    f"{rp.strategy}, batch {rp.batch}"
                )
        lines += [f"# assumed: {a}" for a in self.assumptions]
        if self.interrupted:
            lines.append(f"# interrupted by {self.interrupted}: only what was measured is shown")
        return lines

    def simple(self) -> list[str]:
        """Only the numbers: fault rate, replay rate, explained, remainder (us), projections."""
        values = (self.fault_bytes_per_sec, self.replay_bytes_per_sec, self.explained)
        lines = ["-" if v is None else f"{v:.6g}" for v in (*values, self.remainder_us)]
        return lines + [f"{p.bytes_per_sec:.6g}" for p in self.projections]
