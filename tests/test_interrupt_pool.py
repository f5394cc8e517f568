"""A reserved hugepage pool is given back when a stop signal ends the run, even
when a second signal comes during the give-back, and the first signal still
decides the exit status.

The pools are a fake sysfs (tests/helpers/fake_sysfs.py), held in a Python-level
wait in a subprocess that gets real signals; nothing here needs root
(tests/test_signals_fault.py drives the real pool).
"""

import os
import signal

import pytest
from conftest import start_python
from helpers.children import finish, read_line
from helpers.fake_sysfs import FakeKernel
from helpers.signals import STATUS

from pagezero.interrupt import Interrupted, signals_interrupt
from pagezero.system import hugepages

HOLD_POOL = """
import os, signal, sys, time
from helpers.fake_sysfs import FakeKernel
from pagezero.system import hugepages
from pagezero.interrupt import Interrupted, signals_interrupt

kernel = FakeKernel(sys.argv[1], create=False)

def slow_write(path, value):
    if value < kernel.get("total"):       # the give-back: a sysfs write that lasts
        print("giving back", flush=True)
        # until the test has sent its second signal (it creates the file after
        # kill() returns). Not sigpending(): the stop signals are held here, and
        # another thread (OpenBLAS's) may take a process-directed one.
        while not os.path.exists(sys.argv[3]):
            time.sleep(0.01)
    kernel.write(path, value)

hugepages.SYSFS, hugepages._write, hugepages.os.geteuid = sys.argv[1], slow_write, lambda: 0

def hold():
    with hugepages.reserve("2MB", 3):
        print("reserved", flush=True)
        # Until the test's signal ends it, however late. Not signal.pause(): a signal
        # landing after the last check and before pause() would leave it waiting for
        # another; a short sleep ends, and the handler runs. Gives up after 5 minutes.
        for _ in range(3000):
            time.sleep(0.1)
        print("never signalled", flush=True)

if sys.argv[2] == "cli":        # as the CLI's main() runs a command
    try:
        with signals_interrupt():
            hold()
    except Interrupted as e:
        print(f"stopped by {e.signame}", flush=True)
        sys.exit(e.exit_status)
else:                           # the Python API, no handlers of its own
    hold()
"""


@pytest.mark.parametrize("mode", ["cli", "api"])
@pytest.mark.parametrize(
    "first, second",
    [
        (signal.SIGTERM, signal.SIGINT),
        (signal.SIGINT, signal.SIGTERM),
        (signal.SIGHUP, signal.SIGHUP),
    ],
)
def test_a_second_signal_during_the_give_back_still_restores_the_pool(
    first, second, mode, tmp_path
):
    kernel = FakeKernel(tmp_path / "sysfs", total=1, free=1)
    sent = tmp_path / "second signal sent"
    with start_python("-c", HOLD_POOL, str(tmp_path / "sysfs"), mode, str(sent)) as proc:
        assert read_line(proc).strip() == "reserved"
        assert kernel.get("total") == 3
        proc.send_signal(first)
        assert read_line(proc).strip() == "giving back"
        proc.send_signal(second)
        sent.touch()  # the give-back goes on now: the second signal came during it
        out, err = finish(proc)
    assert kernel.get("total") == 1  # what was there before, no more, no less
    if mode == "cli":
        # The first signal decides; the second neither skips the give-back nor
        # changes the status.
        assert proc.returncode == STATUS[first], err
        assert out.strip() == f"stopped by {first.name}"
        assert "Traceback" not in err
    else:
        # Dies of the first signal, as without a reservation (Python re-raises an
        # uncaught KeyboardInterrupt as SIGINT).
        assert proc.returncode == -first, err


def test_a_signal_before_the_give_back_holds_signals_does_not_skip_it(fake, monkeypatch):
    # A second signal landing after the block's exception but before the
    # give-back blocks signals: the first attempt is cut short, the next one
    # writes, and the block's own exception goes on.
    attempts = []

    def write(path, value):
        if value < fake.get("total") and not attempts:
            attempts.append("cut short")
            raise Interrupted(signal.SIGTERM)
        fake.write(path, value)

    monkeypatch.setattr(hugepages, "_write", write)
    with pytest.raises(RuntimeError):
        with hugepages.reserve("2MB", 3):
            raise RuntimeError("the run failed")
    assert attempts == ["cut short"] and fake.get("total") == 0


def test_a_signal_during_the_give_back_after_a_clean_block_still_stops(
    fake, monkeypatch, stop_signals_as_usual
):
    def write(path, value):
        fake.write(path, value)
        if value < 3:
            os.kill(os.getpid(), signal.SIGTERM)  # held until the give-back is done

    monkeypatch.setattr(hugepages, "_write", write)
    with pytest.raises(Interrupted) as caught:
        with signals_interrupt():
            with hugepages.reserve("2MB", 3):
                pass
    assert caught.value.signum == signal.SIGTERM and fake.get("total") == 0
