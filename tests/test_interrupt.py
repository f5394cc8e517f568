"""SIGINT, SIGTERM and SIGHUP in this process: Interrupted and its exit status, the
handlers, the CLI's one line and the -o file kept and marked interrupted.

The CLI is driven with a benchmark function replaced by one that raises
Interrupted with a partial Result. The sweeps stopped by a signal are
tests/test_interrupt_sweeps.py's, a hugepage pool given back under signals
tests/test_interrupt_pool.py's.
"""

import json
import os
import re
import shutil
import signal
import sys
import threading
import time
import types

import pytest
from conftest import run_python
from helpers.children import run
from helpers.signals import STATUS, check_one_line

import pagezero
from pagezero.cli import main
from pagezero.cli import mem as mem_cli
from pagezero.cli import policy as policy_cli
from pagezero.interrupt import Interrupted, deferred, signals_interrupt

# The tests signal this process: its stop signals as a shell's Python has them, whatever
# started the suite (helpers/children.py).
pytestmark = pytest.mark.usefixtures("stop_signals_as_usual")

# Interrupted and the handlers ------------------------------------------------------


@pytest.mark.parametrize("sig, status", STATUS.items())
def test_interrupted_knows_its_signal_and_exit_status(sig, status):
    e = Interrupted(sig, partial="what ran")
    assert isinstance(e, KeyboardInterrupt)  # every `except KeyboardInterrupt` still works
    assert (e.signum, e.partial, e.exit_status) == (sig, "what ran", status)
    assert e.signame == sig.name and str(e) == f"interrupted by {sig.name}"
    assert pagezero.Interrupted is Interrupted


@pytest.mark.parametrize("sig", STATUS)
def test_each_stop_signal_raises_interrupted_and_the_handlers_come_back(sig):
    before = {s: signal.getsignal(s) for s in STATUS}
    with pytest.raises(Interrupted) as caught:
        with signals_interrupt():
            os.kill(os.getpid(), sig)
            time.sleep(5)  # the handler runs as soon as the signal arrives
    assert caught.value.signum == sig
    assert {s: signal.getsignal(s) for s in STATUS} == before


def test_an_ignored_signal_stays_ignored():
    # nohup's SIGHUP: whoever started us chose to ignore it.
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals_interrupt() as taken:
            assert signal.SIGHUP not in taken
            os.kill(os.getpid(), signal.SIGHUP)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, old)


def test_deferred_signals_arrive_when_the_block_ends():
    # Sent to the main thread itself: its mask holds it (the test below sends one to
    # the process, which another thread takes).
    steps = []
    with pytest.raises(Interrupted):
        with signals_interrupt():
            with deferred():
                signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
                steps.append("the write finished")
            steps.append("never")
    assert steps == ["the write finished"]


def delivered_to_a_thread(sig, timeout=30):
    """Wait until `sig`, sent to this process, is no longer pending for it (ShdPnd of
    /proc/self/status, proc(5)): a thread has taken it. The timeout ends a wait for a
    signal no thread can take."""
    deadline = time.monotonic() + timeout
    while True:
        with open("/proc/self/status") as f:
            pending = next(int(x.split()[1], 16) for x in f if x.startswith("ShdPnd:"))
        if not pending >> (sig - 1) & 1:
            return
        assert time.monotonic() < deadline, f"no thread took {sig.name}"


def test_a_held_signal_that_another_thread_takes_still_waits_for_the_block():
    # Sent to the process, as a terminal's Ctrl-C is: with the main thread blocking it,
    # the kernel gives it to a thread that does not (here one of the test's own; numpy's
    # OpenBLAS starts one in every pagezero process), and Python then runs the handler
    # in the main thread at once, mask or not.
    other_may_take_it = threading.Event()
    other = threading.Thread(target=other_may_take_it.wait, args=(30,))
    other.start()
    steps = []
    try:
        with pytest.raises(Interrupted) as caught:
            with signals_interrupt():
                with deferred():
                    os.kill(os.getpid(), signal.SIGTERM)
                    # Until the other thread has taken it (no longer pending for the
                    # process): a handler that were to run would run now, at the main
                    # thread's next check, which the reads of /proc give it many of.
                    delivered_to_a_thread(signal.SIGTERM)
                    steps.append("the write finished")
                steps.append("never")
    finally:
        other_may_take_it.set()
        other.join()
    assert steps == ["the write finished"] and caught.value.signum == signal.SIGTERM


def test_a_signal_between_the_block_and_its_handlers_return_goes_to_them():
    # deferred() puts the program's handlers back one by one: a signal that comes
    # after the block has ended, to a stand-in not yet replaced, is the program's.
    from pagezero.interrupt import _Holder

    got = []
    holder = _Holder()
    holder.replaced[signal.SIGHUP] = lambda signum, frame: got.append(signum)
    holder(signal.SIGHUP, None)
    assert (holder.held, got) == ([signal.SIGHUP], [])  # while the block runs: noted
    holder.holding = False
    holder(signal.SIGHUP, None)
    assert (holder.held, got) == ([signal.SIGHUP], [signal.SIGHUP])


def test_a_held_signal_left_at_its_default_action_still_ends_the_process():
    # SIGTERM at SIG_DFL, sent to the process while a write is held: the process dies of
    # it once the write is done, not before and not never.
    code = (
        "import os, signal, threading\n"
        "from pagezero.interrupt import deferred\n"
        "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
        "with deferred():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    print('written', flush=True)\n"
        "print('after', flush=True)\n"
    )
    proc = run_python("-c", code)
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert proc.stdout == "written\n"


def test_a_signal_cpython_drops_as_its_handler_goes_back_is_raised_again(monkeypatch):
    # bpo-43406: another thread catches SIGTERM just as deferred() puts SIG_DFL back, and
    # CPython, finding SIG_DFL, drops it as an unraisable "ignored due to race condition".
    # That drop is played here at the moment it happens; the signal must be raised again.
    real_signal = signal.signal
    raised = []

    def signal_as_cpython_drops_it(signum, handler):
        old = real_signal(signum, handler)
        if signum == signal.SIGTERM and handler == signal.SIG_DFL and not raised:
            why = OSError(f"Signal {signum} ignored due to race condition")
            sys.unraisablehook(types.SimpleNamespace(exc_value=why, exc_type=OSError))
        return old

    monkeypatch.setattr(signal, "signal", signal_as_cpython_drops_it)
    monkeypatch.setattr(signal, "raise_signal", raised.append)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    with deferred([signal.SIGTERM]):
        pass
    assert raised == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_other_unraisables_still_reach_the_hook(monkeypatch):
    real_signal = signal.signal
    seen = []

    def signal_with_another_unraisable(signum, handler):
        sys.unraisablehook(types.SimpleNamespace(exc_value=ValueError("not a signal")))
        return real_signal(signum, handler)

    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    monkeypatch.setattr(signal, "signal", signal_with_another_unraisable)
    with deferred([signal.SIGTERM]):
        pass
    assert seen and all(isinstance(u.exc_value, ValueError) for u in seen)


# The CLI: a partial result saved, one line, the signal's exit status ----------------


def result(loops, function="default"):
    return pagezero.Result(
        benchmark="memset",
        function=function,
        params={"size": 1 << 20, "loops": loops},
        bytes_per_loop=1 << 20,
        clock="ns",
        samples=[1000] * loops,
    )


class StopsOnCall:
    """A benchmark run that returns full results, then on call `at` raises
    Interrupted(sig) carrying `partial`."""

    def __init__(self, at, sig, partial, full):
        self.at, self.sig, self.partial, self.full, self.calls = at, sig, partial, full, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.at:
            raise Interrupted(self.sig, partial=self.partial)
        return self.full()


@pytest.mark.parametrize("sig", STATUS)
def test_memset_saves_what_ran_and_the_partial_run_marked(sig, tmp_path, monkeypatch, capsys):
    out = tmp_path / "run.json"
    monkeypatch.setattr(
        mem_cli, "run", StopsOnCall(2, sig, result(3, "generic"), lambda: result(10))
    )
    status = main(["mem", "memset", "-s", "1MB", "-l", "10", "-f", "all", "-o", str(out)])
    assert status == STATUS[sig]
    runs = len([k for k in pagezero.kernels("clear") if k.available])
    check_one_line(
        capsys.readouterr().err,
        rf"pagezero: interrupted by {sig.name} after 1 of {runs} functions, 10 loops each, "
        rf"and 3 loops of generic; "
        rf"saved to {re.escape(str(out))}",
    )
    doc = json.loads(out.read_text())
    assert doc["interrupted"] in (True, sig.name)
    assert [len(r["samples"]) for r in doc["results"]] == [10, 3]
    if "interrupted" in doc["results"][1]:  # once Result keeps the mark itself
        assert doc["results"][1]["interrupted"] == sig.name
    assert [r.loops for r in pagezero.load_results(str(out))] == [10, 3]


def test_nothing_measured_writes_no_file(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run.json"
    monkeypatch.setattr(mem_cli, "run", StopsOnCall(1, signal.SIGHUP, None, None))
    assert main(["mem", "memset", "-s", "1MB", "-l", "4", "-f", "default", "-o", str(out)]) == 129
    check_one_line(
        capsys.readouterr().err,
        r"pagezero: interrupted by SIGHUP after 0 of 4 loops; nothing measured",
    )
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_without_output_says_nothing_was_saved(monkeypatch, capsys):
    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt  # Python's own SIGINT: no Interrupted, no partial

    monkeypatch.setattr(mem_cli, "run", ctrl_c)
    assert main(["mem", "memset", "-s", "1MB", "-l", "4", "-f", "default"]) == 130
    check_one_line(
        capsys.readouterr().err,
        r"pagezero: interrupted by SIGINT after 0 of 4 loops; nothing measured",
    )


def test_batch_keeps_a_partial_result_set(tmp_path, monkeypatch, capsys):
    out = tmp_path / "batch.json"
    partial = pagezero.ResultSet([result(2)])
    monkeypatch.setattr(policy_cli, "run_batch", StopsOnCall(1, signal.SIGTERM, partial, None))
    assert main(["batch", "-s", "1MB", "-l", "5", "-b", "page", "-o", str(out)]) == 143
    check_one_line(
        capsys.readouterr().err,
        r"pagezero: interrupted by SIGTERM after 2 of 5 loops; saved to .*batch\.json",
    )
    assert [r.loops for r in pagezero.load_results(str(out))] == [2]


# Importing without the built extension ----------------------------------------------


def test_importing_the_source_tree_without_the_extension_says_how_to_build(tmp_path):
    # The sources as a fresh clone has them: no built _core.
    shutil.copytree(
        os.path.dirname(pagezero.__file__),
        tmp_path / "pagezero",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"),
    )
    for args in (["-c", "import pagezero"], ["-m", "pagezero", "kernels"]):
        # -S: no site-packages, where an installed pagezero would answer instead.
        proc = run([sys.executable, "-S", *args], cwd=tmp_path, timeout=60)
        assert proc.returncode == 1
        # python -m wraps it: "...: Error while finding module specification (ImportError: ...)".
        assert (
            "ImportError: pagezero's C extension (pagezero._core) is not built: install "
            "with `pip install .` or build it in place with `python setup.py build_ext "
            "--inplace`"
        ) in proc.stderr.splitlines()[-1]
        assert "circular" not in proc.stderr
