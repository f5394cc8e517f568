"""runs.progress: a line per step with the time left, plain where the stream is not a
terminal, notes at most one per interval, the ambient Progress the runs speak to. The
clock is a fake one: nothing here waits."""

import io

import pytest

from pagezero.runs import progress as progress_mod
from pagezero.runs.progress import Progress, current, format_duration, run_finished


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(progress_mod.time, "monotonic", c)
    return c


@pytest.mark.parametrize(
    "seconds, text",
    [(0, "0 s"), (8.4, "8 s"), (59.6, "1 min 00 s"), (125, "2 min 05 s"), (3840, "1 h 04 min")],
)
def test_durations_for_people(seconds, text):
    assert format_duration(seconds) == text


def test_a_line_per_step_with_the_time_left_from_the_pace(clock):
    out = io.StringIO()
    p = Progress("pagezero x", 4, out)
    clock.now += 10
    p.step("run 1 of 4 done")
    clock.now += 10
    p.step("run 2 of 4 done")
    clock.now += 25  # a slower run: the pace is the mean so far
    p.step("run 3 of 4 done")
    clock.now += 15
    p.step("run 4 of 4 done")
    assert out.getvalue().splitlines() == [
        "pagezero x: run 1 of 4 done; 10 s so far, about 30 s left",
        "pagezero x: run 2 of 4 done; 20 s so far, about 20 s left",
        "pagezero x: run 3 of 4 done; 45 s so far, about 15 s left",
        "pagezero x: run 4 of 4 done; 1 min 00 s so far, finishing",
    ]
    assert p.lines == out.getvalue().splitlines()


def test_the_step_under_way_counts_the_time_it_has_had(clock):
    out = io.StringIO()
    p = Progress("r", 30, out, seconds_per_unit=1.0)  # a prior: known before any step
    p.begin("[1/2] a", 10)
    clock.now += 4
    p.note("point 1")
    assert out.getvalue().splitlines()[-1] == "r: [1/2] a: point 1; 4 s so far, about 26 s left"
    clock.now += 16  # 20 s for a step of 10 units: the pace is 2 s a unit
    p.step("[1/2] a done", 10)
    assert out.getvalue().splitlines()[-1].endswith("20 s so far, about 40 s left")
    p.begin("[2/2] b", 20)
    clock.now += 50  # past its 40 s: only the rest is known, and there is none
    p.note("point 2")
    assert out.getvalue().splitlines()[-1] == (
        "r: [2/2] b: point 2; 1 min 10 s so far, this step is past its estimate"
    )


def test_no_pace_no_estimate(clock):
    out = io.StringIO()
    p = Progress("r", 3, out)
    p.begin("first", 1)
    clock.now += 11
    p.note("half way")
    assert out.getvalue().strip().endswith("11 s so far, time left unknown yet")


def test_notes_are_at_most_one_line_per_interval(clock):
    out = io.StringIO()
    p = Progress("r", 100, out)
    for _ in range(50):  # 50 points a second for 20 s: 1000 ticks
        for _ in range(20):
            clock.now += 0.05
            p.tick("a point", 0.1)
    lines = out.getvalue().splitlines()
    assert 2 <= len(lines) <= 1 + 50 * 1.0 / progress_mod.NOTE_INTERVAL_S + 1, lines
    p.step("the last", 0)
    assert len(out.getvalue().splitlines()) == len(lines) + 1  # a step is always a line


def test_the_ambient_progress_counts_runs_or_takes_them_as_notes(clock):
    runs, steps = io.StringIO(), io.StringIO()
    run_finished("nobody listens")  # no ambient Progress: nothing, nowhere
    with Progress("by runs", 2, runs, counts_runs=True) as p:
        assert current() is p
        clock.now += 3
        run_finished("memset run 1 of 2 done")
        with Progress("by steps", 5, steps) as inner:
            inner.begin("[1/5] extents", 1)
            clock.now += 20
            run_finished("memset run 1 of 3 done")
        assert current() is p
    assert current() is None
    assert runs.getvalue() == "by runs: memset run 1 of 2 done; 3 s so far, about 3 s left\n"
    assert steps.getvalue().startswith("by steps: [1/5] extents: memset run 1 of 3 done; 20 s")
    assert p.done == 1 and inner.done == 0


def test_a_terminal_gets_a_bar_and_the_lines_above_it(clock):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    with Progress("pagezero t", 2, tty) as p:
        clock.now += 5
        p.step("one done")
        p.note("half of two")
    text = tty.getvalue()
    assert "pagezero t: one done; 5 s so far, about 5 s left" in text
    assert "half of two" in text and "|" in text  # tqdm's bar, its postfix the note
    assert p._bar is None  # closed with the block
