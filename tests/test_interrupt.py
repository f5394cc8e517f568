"""SIGINT, SIGTERM and SIGHUP: Interrupted and its exit status, the CLI's one
line and the -o file kept and marked interrupted, and a reserved hugepage
pool given back even when a second signal comes during the give-back.

The CLI is driven with a benchmark function replaced by one that raises
Interrupted with a partial Result, with sweeps stopped between points and
inside one (mmap points, whose C loops take the signal: csrc/stop.h), also
through a worker process, and with a pool held in a Python-level wait. The
pools are a fake sysfs (conftest's FakeKernel); nothing here needs root
(tests/test_signals_fault.py drives the real pool).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import TESTS_DIR, FakeKernel
from helpers.fake_bench import GRID6, key, point_key, registered_fake

import pagezero
from pagezero import hugepages
from pagezero.cli import main
from pagezero.cli import mem as mem_cli
from pagezero.cli import policy as policy_cli
from pagezero.interrupt import Interrupted, deferred, signals_interrupt

STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


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
    # Sent to the main thread: blocking holds a signal for the blocking thread
    # only, and a signal sent to the process goes to any thread that does not
    # block it (numpy's OpenBLAS starts native threads on import, so in this
    # pytest process it may not reach the main thread's mask at all).
    steps = []
    with pytest.raises(Interrupted):
        with signals_interrupt():
            with deferred():
                signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
                steps.append("the write finished")
            steps.append("never")
    assert steps == ["the write finished"]


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


def check_one_line(err, pattern):
    """One line about the signal; besides it, only the "# ... skipped" notes."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("# ")]
    assert len(lines) == 1, err
    assert re.fullmatch(pattern, lines[0]), err


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
        rf"pagezero: interrupted by {sig.name} after 13 of {10 * runs} loops; "
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


# Sweeps in this process --------------------------------------------------------------


@pytest.fixture
def fake_bench():
    """test_resultset's Fake benchmark, registered as "fake"."""
    with registered_fake() as f:
        yield f


@pytest.mark.parametrize("interrupt_at, warmup, kept", [(5, 0, 5), (8, 1, 2), (3, 1, 0)])
def test_a_stop_signal_keeps_the_loops_of_the_point_it_cut_short(
    fake_bench, interrupt_at, warmup, kept
):
    fake_bench.interrupt_at, fake_bench.signum = interrupt_at, signal.SIGTERM
    rs = pagezero.sweep("fake", GRID6, repeat=3, warmup=warmup)
    assert rs.interrupted == "SIGTERM"  # the signal, not "SIGINT"
    assert len(rs) == len(rs.runs) == kept
    if kept:
        # The cut point's completed loop, in the repetition it belongs to.
        cut = rs.results[-1]
        assert cut.samples == (7,) and cut.interrupted == "SIGTERM"
        assert point_key(cut) == key(fake_bench.calls[-1])
        assert rs.runs[-1] == {"repetition": 0, "process": 0, "pid": os.getpid()}
        assert all(r.interrupted is None for r in rs.results[:-1])
    # A warm-up cut short keeps nothing: its loops were to be thrown away.


def test_a_sweep_leaves_no_thread_to_take_a_held_signal(fake_bench):
    # A process-directed signal goes to any thread that does not block it:
    # a thread left behind (tqdm's monitor) would take the signals that
    # interrupt.deferred() holds in the main thread while a file is written.
    from tqdm import tqdm

    if tqdm.monitor is not None:  # one that tqdm used elsewhere started
        tqdm.monitor.exit()
        tqdm.monitor = None
    before = set(threading.enumerate())
    pagezero.sweep("fake", GRID6, repeat=1, warmup=0, progress=False)
    assert set(threading.enumerate()) <= before


# Real signals, in a subprocess ----------------------------------------------------

SWEEP = """
import sys
from pagezero.cli import main
print("ready", flush=True)
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig", STATUS)
def test_a_signal_stops_a_sweep_between_points(sig, tmp_path):
    out = tmp_path / "sweep.json"
    # Far more runs than can finish: the signal always comes in the middle.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SWEEP,
            "sweep",
            "memset",
            "-g",
            "function=default",
            "-g",
            "size=64KB,128KB",
            "-g",
            "loops=1",
            "--warmup",
            "0",
            "-r",
            "1000000",
            "-o",
            str(out),
        ],
        cwd=TESTS_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1)  # into the sweep's loop
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == STATUS[sig], err
    check_one_line(
        err,
        rf"pagezero: interrupted by {sig.name} after \d+ of 2000000 runs; "
        rf"saved to {re.escape(str(out))}",
    )
    rs = pagezero.ResultSet.load(str(out))
    assert rs.interrupted in (True, sig.name)
    assert len(rs) == int(err.split(" after ")[1].split()[0])


# mmap points of 100000 loops of 4MB (minutes each): a signal always lands
# inside a point, where the C loops take it (csrc/stop.h).
LONG_POINTS = [
    "sweep",
    "mmap",
    "-g",
    "function=demand",
    "-g",
    "size=4MB",
    "-g",
    "loops=100000",
    "--warmup",
    "0",
    "-r",
    "2",
]


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]


def first_worker(proc):
    """The pid of the sweep's worker, once it has started."""
    deadline = time.monotonic() + 30
    while not children(proc.pid):
        assert time.monotonic() < deadline and proc.poll() is None, "no worker started"
        time.sleep(0.01)
    return children(proc.pid)[0]


def stopped_sweep(args, sig, to_worker=False):
    """Run the sweep CLI with `args`, send `sig` 1.5 s into its measuring, to
    it or to its worker alone; (exit status, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SWEEP, *args],
        cwd=TESTS_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        worker = first_worker(proc) if "--processes" in args else None
        pid = worker if to_worker else proc.pid
        time.sleep(1.5)  # a worker imports pagezero first; then into the loops
        os.kill(pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    return proc.returncode, err


def check_cut_point(out, sig, err, kept):
    """The sweep's file: `kept` runs, the last the cut point's completed loops, marked."""
    check_one_line(
        err,
        rf"pagezero: interrupted by {sig.name} after {kept} of 2 runs; "
        rf"saved to {re.escape(str(out))}",
    )
    rs = pagezero.ResultSet.load(str(out))
    assert rs.interrupted == sig.name and len(rs) == kept
    cut = rs.results[-1]
    assert cut.interrupted == sig.name and 0 < cut.loops < 100000
    assert len(cut.details["pages"]) == cut.loops


@pytest.mark.parametrize("sig", STATUS)
def test_a_signal_inside_a_sweep_point_keeps_its_completed_loops(sig, tmp_path):
    out = tmp_path / "sweep.json"
    status, err = stopped_sweep([*LONG_POINTS, "-o", str(out)], sig)
    assert status == STATUS[sig], err
    check_cut_point(out, sig, err, kept=1)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_a_sweep_worker_alone_stops_the_sweep(sig, tmp_path):
    # A supervisor or a user who kills the busy process, the worker: the sweep
    # keeps what the worker measured and stops, with the worker's signal.
    out = tmp_path / "sweep.json"
    status, err = stopped_sweep(
        [*LONG_POINTS, "--processes", "2", "-o", str(out)], sig, to_worker=True
    )
    assert status == STATUS[sig], err
    check_cut_point(out, sig, err, kept=1)


def test_a_signal_to_the_sweep_reaches_its_worker_once(tmp_path):
    # The sweep passes the signal on to the worker (a session of its own, out of
    # reach of the terminal's Ctrl-C) and waits until it has saved.
    out = tmp_path / "sweep.json"
    status, err = stopped_sweep([*LONG_POINTS, "--processes", "2", "-o", str(out)], signal.SIGINT)
    assert status == 130, err
    check_cut_point(out, signal.SIGINT, err, kept=1)


HOLD_POOL = """
import os, sys, time
from conftest import FakeKernel
from pagezero import hugepages
from pagezero.interrupt import Interrupted, signals_interrupt

kernel = FakeKernel(sys.argv[1], create=False)

def slow_write(path, value):
    if value < kernel.get("total"):       # the give-back: a slow sysfs write
        print("giving back", flush=True)
        time.sleep(1)                     # the second signal lands now
    kernel.write(path, value)

hugepages.SYSFS, hugepages._write, hugepages.os.geteuid = sys.argv[1], slow_write, lambda: 0

def hold():
    with hugepages.reserve("2MB", 3):
        print("reserved", flush=True)
        time.sleep(60)

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
    kernel = FakeKernel(tmp_path, total=1, free=1)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_POOL, str(tmp_path), mode],
        cwd=TESTS_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "reserved"
        assert kernel.get("total") == 3
        proc.send_signal(first)
        assert proc.stdout.readline().strip() == "giving back"
        proc.send_signal(second)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
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


def test_a_signal_during_the_give_back_after_a_clean_block_still_stops(fake, monkeypatch):
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
        proc = subprocess.run(
            [sys.executable, "-S", *args], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 1
        # python -m wraps it: "...: Error while finding module specification (ImportError: ...)".
        assert (
            "ImportError: pagezero's C extension (pagezero._core) is not built: install "
            "with `pip install .` or build it in place with `python setup.py build_ext "
            "--inplace`"
        ) in proc.stderr.splitlines()[-1]
        assert "circular" not in proc.stderr
