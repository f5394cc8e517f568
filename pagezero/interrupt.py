"""Signals as exceptions: SIGINT, SIGTERM and SIGHUP stop a run the way Ctrl-C does.

Python turns SIGINT into KeyboardInterrupt, which unwinds the stack (finally
blocks run: a hugepage pool is given back, what was measured is saved), but
SIGTERM and SIGHUP kill the process where it stands. signals_interrupt()
makes all three raise Interrupted, a KeyboardInterrupt that knows its signal,
so that a supervisor's SIGTERM or a closed terminal's SIGHUP ends a run as
cleanly as Ctrl-C, with the shell's exit status for that signal (128 + signum).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any, NoReturn, TypeVar

__all__ = [
    "Interrupted",
    "signals_interrupt",
    "deferred",
    "received",
    "as_interrupted",
    "finish",
    "STOP_SIGNALS",
]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# The last stop signal a handler of signals_interrupt() turned into Interrupted:
# code that catches KeyboardInterrupt and carries on with a partial result (a
# sweep, the report) loses the exception, and the CLI still needs its signal.
_received: int | None = None

# What a signal handler can be (signal.getsignal()'s answer): a function, SIG_DFL or
# SIG_IGN (ints), or None for a handler not installed from Python.
_Handler = Callable[[int, FrameType | None], Any] | int | None

# The value finish() builds from a timed call's dict.
_T = TypeVar("_T")


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal: a :class:`KeyboardInterrupt` that knows its signal.

    Parameters
    ----------
    signum : int
        The signal: ``SIGINT``, ``SIGTERM`` or ``SIGHUP``.
    partial : Result, ResultSet or None
        What was measured before it came: the completed loops, marked
        ``interrupted``, or None when no loop completed.

    Attributes
    ----------
    signum : int
        The signal's number.
    partial : Result, ResultSet or None
        As given.
    """

    # partial is open: a Result, a ResultSet or an Advice, whatever the stopped call
    # returns (pagezero.studies.advise.study raises it with its partial Advice).
    def __init__(self, signum: int, partial: Any = None) -> None:
        super().__init__(signum)
        self.signum = int(signum)
        self.partial = partial

    @property
    def signame(self) -> str:
        """The signal's name: ``"SIGINT"``, ``"SIGTERM"`` or ``"SIGHUP"``."""
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """What a shell reports for a process killed by this signal (128 + signum):
        130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP."""
        return 128 + self.signum

    def __str__(self) -> str:
        return f"interrupted by {self.signame}"


def as_interrupted(exc: KeyboardInterrupt) -> Interrupted:
    """A KeyboardInterrupt as an Interrupted.

    Parameters
    ----------
    exc : KeyboardInterrupt
        An :class:`Interrupted` (returned as is) or a plain KeyboardInterrupt, which is
        Python's SIGINT.

    Returns
    -------
    Interrupted
    """
    if isinstance(exc, Interrupted):
        return exc
    return Interrupted(signal.SIGINT)


def received() -> int | None:
    """The last stop signal turned into :class:`Interrupted`.

    Returns
    -------
    int or None
        The signal number that :func:`signals_interrupt`'s handlers or the C core (see
        :func:`finish`) last caught, or None since the last :func:`signals_interrupt`
        took any signal over. Code that catches KeyboardInterrupt and carries on with a
        partial result (a sweep) reads it to report the right signal.
    """
    return _received


def _raise_interrupted(signum: int, frame: FrameType | None) -> NoReturn:
    global _received
    _received = signum
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_interrupt(signals: Iterable[int] = STOP_SIGNALS) -> Iterator[frozenset[int]]:
    """A context manager: within it, each of `signals` raises Interrupted in the main thread.

    Only signals left to their default action are taken over (SIG_DFL, or
    Python's own SIGINT handler): a SIG_IGN chosen by whoever started us
    (nohup's SIGHUP, a background job's SIGINT) or a handler the program
    installed stays as it is. The previous handlers come back afterwards.
    Outside the main thread it does nothing, since only the main thread can
    install handlers.

    Parameters
    ----------
    signals : iterable of int
        The signals to take over; by default SIGINT, SIGTERM and SIGHUP.

    Yields
    ------
    frozenset of int
        The signals taken over (empty outside the main thread).
    """
    global _received
    if threading.current_thread() is not threading.main_thread():
        yield frozenset()
        return
    taken: dict[int, _Handler] = {}
    try:
        for s in signals:
            if signal.getsignal(s) in (signal.SIG_DFL, signal.default_int_handler):
                taken[s] = signal.signal(s, _raise_interrupted)
        if taken:
            _received = None
        yield frozenset(taken)
    finally:
        for s, handler in taken.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def deferred(signals: Iterable[int] = STOP_SIGNALS) -> Iterator[None]:
    """A context manager that holds `signals` for its block.

    A signal arriving meanwhile is delivered when the block ends, so that a write
    that must finish (a pool given back, a result file) does. Two layers, since the
    kernel gives a signal sent to the process to any thread that does not block it
    (numpy's OpenBLAS starts one on import), and Python then runs the handler in the
    main thread at once:

    - the calling thread's signal mask (``pthread_sigmask``), restored afterwards;
      threads started within the block inherit it, and never take these signals;
    - in the main thread, where Python runs every handler, a handler that only
      notes the signal stands in for each of `signals` (but one ignored, or set
      outside Python); afterwards the handlers are back and a noted signal is
      raised again, as if it had come just then. Within the block,
      ``signal.getsignal()`` answers that stand-in: read a handler before.

    Parameters
    ----------
    signals : iterable of int
        The signals to hold; by default SIGINT, SIGTERM and SIGHUP.

    Yields
    ------
    None
    """
    signals = list(signals)
    holder = _Holder()
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        if threading.current_thread() is threading.main_thread():
            for s in signals:
                if signal.getsignal(s) not in (None, signal.SIG_IGN):
                    holder.replaced[s] = signal.signal(s, holder)
        yield
    finally:
        holder.holding = False
        try:
            for s, handler in holder.replaced.items():
                signal.signal(s, handler)
            # Raised on this thread while it still blocks them: pending, they come
            # with any that the mask held, once it is restored.
            for s in dict.fromkeys(holder.held):
                signal.raise_signal(s)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


class _Holder:
    """The handler deferred() puts in the program's place in the main thread: it
    notes a signal while the block runs. Once the block has ended, one that comes
    before the program's handler is back (a restore cut short by another signal's
    exception) goes to that handler, as it would have without deferred()."""

    def __init__(self) -> None:
        self.holding = True
        self.held: list[int] = []
        self.replaced: dict[int, _Handler] = {}

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.holding:
            self.held.append(signum)
            return
        handler = self.replaced[signum]
        if callable(handler):
            handler(signum, frame)
        else:  # SIG_DFL: put back, and its default action once the mask lets it through
            signal.signal(signum, handler)
            signal.raise_signal(signum)


def finish(raw: dict[str, Any], make_result: Callable[[dict[str, Any]], _T]) -> _T | None:
    """The value of a timed C call, or the Interrupted that stopped it.

    Around every timed call the C core turns SIGINT, SIGTERM and SIGHUP into
    a stop request its loops honour within one loop (csrc/py/pzpy.h); such a
    run comes back with ``raw["interrupted"]`` naming the signal and only its
    completed loops (``raw["loops_done"]`` of them).

    Parameters
    ----------
    raw : dict
        What the C call returned.
    make_result : callable
        Builds the call's value from `raw`.

    Returns
    -------
    object
        ``make_result(raw)`` for a run that was not stopped; for a stop signal that
        pagezero does not own (a program's own handler that returns), the partial
        result, or None.

    Raises
    ------
    Interrupted
        For a run stopped by a signal pagezero owns, carrying what the completed loops
        measured (None when no loop completed), as the signal would have, had the
        interpreter seen it.
    """
    global _received
    name = raw.get("interrupted")
    if not name:
        return make_result(raw)
    signum = getattr(signal, name, signal.SIGINT)
    # The program's handler, read before deferred() stands in for it.
    handler = signal.getsignal(signum)
    # Held while the partial is built: a second signal must not replace
    # the Interrupted that carries it.
    with deferred():
        partial = make_result(raw) if raw.get("loops_done") else None
        if handler not in (signal.default_int_handler, _raise_interrupted):
            # Not a stop pagezero owns: a program's own handler, or SIGTERM /
            # SIGHUP left to their default action. The signal goes to it, as
            # if the C core had never caught it (the default action ends the
            # process with the shell's status for it), and a handler that
            # returns gets the loops that were completed.
            signal.raise_signal(signum)
            deliver = True
        else:
            deliver = False
            # The C core caught the signal in Python's stead: received() must
            # say so too, for code that catches KeyboardInterrupt and carries
            # on (a sweep).
            _received = signum
    if deliver:
        return partial
    raise Interrupted(signum, partial=partial)
