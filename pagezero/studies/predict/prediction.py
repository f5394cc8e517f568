"""A prediction: what was measured, what the fit says, what each policy would give."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from pagezero.studies.predict.model import ASSUMPTIONS, ProjectedPolicy
from pagezero.studies.predict.replays import Replay


def _gbs(rate: float | None) -> str:
    """GB/sec as perf bench prints it: 2^30 bytes per second."""
    return "-" if rate is None else f"{rate / 2**30:.2f}"


@dataclass
class Prediction:
    """What pagezero.predict() found; None for what was not measured (yet).

    Attributes
    ----------
    page : str
        "2MB" or "1GB".
    kernel_release, preempt : str
        The running kernel and the preemption model its policy was chosen by.
    preempt_note : str or None
        Why that model was assumed, when it was not read.
    fault_pages : str
        What backed the faults ("2MB hugetlb", "2MB THP", "1GB hugetlb").
    fault_size, fault_loops : int
        Bytes per fault loop and loops per run.
    run_rates : list of float
        Each fault run's median rate, in the order run, discarded ones too.
    discarded_runs : int
        Leading runs discarded as still warming up (warmup.warming_runs).
    lost_runs : int
        Runs whose worker process died, not among the runs.
    fault_bytes_per_sec : float or None
        The folio over the median fault's time (the median of the kept runs'
        median faults): what the fit uses.
    loop_bytes_per_sec : float or None
        The kept runs' loops as `pagezero mem mmap` rates them (bytes over the
        time of mmap and every fault), scheduler pauses included.
    warm_up : str
        How the pool was warmed before the runs.
    replay : Replay or None
        The running kernel's policy.
    replay_backing : str or None
        What the replays' folios were on.
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
    replay: Replay | None = None
    replay_backing: str | None = None
    replay_bytes_per_sec: float | None = None
    explained: float | None = None
    remainder_us: float | None = None
    verdict: str | None = None
    projections: list[ProjectedPolicy] = field(default_factory=list)
    interrupted: str | None = None

    @property
    def runs(self) -> int:
        """The fault runs measured, the discarded ones included."""
        return len(self.run_rates)

    @property
    def fits(self) -> bool:
        """True when the model fit and projections were made."""
        return bool(self.projections)

    def to_json(self) -> dict[str, Any]:
        """The prediction as a JSON document: its key figures first, then the details.

        Returns
        -------
        dict
        """
        doc: dict[str, Any] = {
            "page": self.page,
            "kernel_release": self.kernel_release,
            "preempt": self.preempt,
            "fault_bytes_per_sec": self.fault_bytes_per_sec,
            "replay_policy": self.replay.policy if self.replay else None,
            "replay_bytes_per_sec": self.replay_bytes_per_sec,
            "explained": self.explained,
            "remainder_us": self.remainder_us,
            "runs": self.runs,
            "discarded_runs": self.discarded_runs,
            "projections": [p.to_json() for p in self.projections],
        }
        doc.update(
            preempt_note=self.preempt_note,
            fault_pages=self.fault_pages,
            fault_size=self.fault_size,
            fault_loops=self.fault_loops,
            run_bytes_per_sec=list(self.run_rates),
            lost_runs=self.lost_runs,
            loop_bytes_per_sec=self.loop_bytes_per_sec,
            warm_up=self.warm_up,
            replay=asdict(self.replay) if self.replay else None,
            replay_backing=self.replay_backing,
            verdict=self.verdict,
            assumptions=list(ASSUMPTIONS),
            interrupted=self.interrupted,
        )
        return doc

    def describe(self) -> list[str]:
        """The prediction in words, one line each (GB/sec = 2^30 bytes/s, as perf).

        Returns
        -------
        list of str
        """
        lines = [
            f"# kernel {self.kernel_release}, preempt={self.preempt}"
            + (f" ({self.preempt_note})" if self.preempt_note else ""),
            f"# {self.warm_up}",
        ]
        if self.run_rates:
            kept = self.runs - self.discarded_runs
            head = f"# demand faults on {self.fault_pages}: {kept} of {self.runs} runs kept"
            if self.discarded_runs:
                slow = ", ".join(_gbs(r) for r in self.run_rates[: self.discarded_runs])
                head += f", {self.discarded_runs} discarded as still warming up ({slow} GB/sec)"
            lines.append(
                head + (f"; {self.lost_runs} lost (worker died)" if self.lost_runs else "")
            )
            lines.append(
                f"  fault rate          {_gbs(self.fault_bytes_per_sec):>8} GB/sec (the median "
                f"fault; whole loops as mem mmap: {_gbs(self.loop_bytes_per_sec)})"
            )
        r = self.replay
        if r is not None and self.replay_bytes_per_sec is not None:
            lines.append(
                f"  replay {r.policy} ({r.strategy}, {r.kernel}; {r.source}, {r.release}), "
                f"cold folio on {self.replay_backing}: {_gbs(self.replay_bytes_per_sec)} GB/sec"
            )
        if self.explained is not None and self.remainder_us is not None:
            lines.append(f"  explained           {self.explained:>8.0%} of the fault time")
            lines.append(f"  remainder           {self.remainder_us:>8.1f} us per fault")
        if self.verdict:
            lines.append(f"# {self.verdict}")
        if self.projections:
            lines.append("# projected fault rate, GB/sec (low..high from the runs' spread):")
            for p in self.projections:
                rp = p.replay
                lines.append(
                    f"  {rp.policy:<24} preempt={rp.preempt:<9} {_gbs(p.bytes_per_sec):>8} "
                    f"({_gbs(p.low)}..{_gbs(p.high)})  {rp.strategy}, batch {rp.batch}"
                )
        lines += [f"# assumed: {a}" for a in ASSUMPTIONS]
        if self.interrupted:
            lines.append(f"# interrupted by {self.interrupted}: only what was measured is shown")
        return lines

    def simple(self) -> list[str]:
        """Only the numbers: fault rate, replay rate, explained, remainder (us), projections."""
        values = (self.fault_bytes_per_sec, self.replay_bytes_per_sec, self.explained)
        lines = ["-" if v is None else f"{v:.6g}" for v in (*values, self.remainder_us)]
        return lines + [f"{p.bytes_per_sec:.6g}" for p in self.projections]
