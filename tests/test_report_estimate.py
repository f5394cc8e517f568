"""The report's time left: each study's estimate comes from what it will measure here (its
points, extents, loops and bytes at this machine's rates), so the extents study, whose size
follows sysfs's LLC, estimates more with a bigger LLC, and its overrun moves no other study's
estimate. A fake clock and fake studies; nothing is measured."""

import io
import re
import types

import pytest

from pagezero.runs import progress as progress_mod
from pagezero.studies import report as report_pkg
from pagezero.studies.report import estimate
from pagezero.studies.report.cells import Section
from pagezero.studies.report.scales import SCALES

MB, GB = 1 << 20, 1 << 30
# A slow machine, so that every estimate is minutes and rounding to seconds does not count.
PACE = estimate.Pace(clear=1e8, map_small=5e7, map_huge=1e8, fault=3e7, huge_fault=1e8, start=0.5)
INFO = {"caches": [{"level": 3, "type": "Unified", "size_bytes": 32 * MB}]}


def _seconds(text):
    """A format_duration() text in seconds ("1 h 04 min", "2 min 05 s", "8 s")."""
    units = {"h": 3600, "min": 60, "s": 1}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+) (h|min|s)\b", text))


def test_the_extents_estimate_grows_with_the_llc():
    # The ladder reaches 8 x the LLC: an Intel VM's 480 MiB makes it gigabytes.
    cfg, functions = SCALES["full"], ["generic", "default"]
    amd = estimate.study_seconds("extents", cfg, INFO, functions, PACE, False)
    intel_info = {"caches": [{"level": 3, "type": "Unified", "size_bytes": 480 * MB}]}
    intel = estimate.study_seconds("extents", cfg, intel_info, functions, PACE, False)
    assert intel > 4 * amd
    # And with the extents a scale gives, and the kernels swept.
    quick = dict(SCALES["quick"], extend_extents=False)
    fewer = estimate.study_seconds(
        "extents", dict(quick, extents=quick["extents"][:-1]), INFO, functions, PACE, True
    )
    assert fewer < estimate.study_seconds("extents", quick, INFO, functions, PACE, True)
    assert estimate.study_seconds("extents", quick, INFO, functions[:1], PACE, True) < (
        estimate.study_seconds("extents", quick, INFO, functions, PACE, True)
    )


@pytest.mark.parametrize("overrun", [1, 10])
def test_an_extents_study_that_overruns_moves_no_other_estimate(monkeypatch, tmp_path, overrun):
    # Before: the time left after the extents study was every other study's share scaled by
    # the extents study's overrun (54 min left of a report that ended 8 minutes later).
    now = [1000.0]
    clock = types.SimpleNamespace(monotonic=lambda: now[0])
    monkeypatch.setattr(progress_mod, "time", clock)
    monkeypatch.setattr(report_pkg, "time", clock)
    monkeypatch.setattr(report_pkg, "measure_pace", lambda nbytes: PACE)
    monkeypatch.setattr(report_pkg, "machine", lambda: INFO)
    functions = ["generic"]
    cfg = dict(SCALES["tiny"], runs=1)
    names = [name for name, _, _ in report_pkg.STUDIES]
    expected = {n: estimate.study_seconds(n, cfg, INFO, functions, PACE, True) for n in names}

    def study(name):
        def run(out_dir, cfg, info, functions, progress, **kwargs):
            now[0] += expected[name] * (overrun if name == "extents" else 1)
            return Section(name, ["| a |", "|---|", "| 1 |"])

        return (name, name, run)

    monkeypatch.setattr(report_pkg, "STUDIES", tuple(study(n) for n in names))
    monkeypatch.setattr(report_pkg, "write_markdown", lambda *args: None)
    out = io.StringIO()
    report_pkg.run_report(str(tmp_path / "r"), "tiny", functions, out, reserve=False)
    lines = out.getvalue().splitlines()
    opening = _seconds(lines[0].split("; about ")[1])
    assert abs(opening - sum(expected.values())) <= 1
    after_extents = next(x for x in lines if "extents done" in x)
    left = _seconds(after_extents.split(", about ")[1])
    assert abs(left - sum(v for n, v in expected.items() if n != "extents")) <= 1
    for i, name in enumerate(names[:-1]):
        line = next(x for x in lines if f"] {name} done" in x)
        rest = sum(expected[n] for n in names[i + 1 :])
        assert abs(_seconds(line.split(", about ")[1]) - rest) <= 1, line
