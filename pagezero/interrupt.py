"""Signals as exceptions: under signals_interrupt(), SIGTERM and SIGHUP unwind as Ctrl-C does."""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any, NoReturn, TypeVar

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# The last stop signal turned into Interrupted: code that carries on with a partial result
# loses the exception, and the CLI still needs its signal.
_received: int | None = None

# signal.getsignal()'s answer: a function, SIG_DFL or SIG_IGN, or None (set outside Python).
_Handler = Callable[[int, FrameType | None], Any] | int | None
_T = TypeVar("_T")
_DROPPED = re.compile(r"Signal (\d+) ignored due to race condition")


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal: a :class:`KeyboardInterrupt` that knows its signal.

    Parameters
    ----------
    signum, partial : int, Result or ResultSet or Advice or None
        ``SIGINT``, ``SIGTERM`` or ``SIGHUP``; what the stopped call returns (its loops so far,
        marked ``interrupted``), or None.

    Attributes
    ----------
    signame, exit_status : str, int
        The signal's name (``"SIGTERM"``); a shell's status for a process it killed: 128 + signum.
    """

    def __init__(self, signum: int, partial: Any = None) -> None:
        super().__init__(signum)
        self.signum = int(signum)
        self.partial = partial
        self.signame = signal.Signals(self.signum).name
        self.exit_status = 128 + self.signum  # as a shell reports a process a signal killed

    def __str__(self) -> str:
        return f"interrupted by {self.signame}"


def as_interrupted(exc: KeyboardInterrupt) -> Interrupted:
    """`exc` as an Interrupted: a plain KeyboardInterrupt is Python's SIGINT."""
    return exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)


def received() -> int | None:
    """The last stop signal turned into Interrupted (by a handler or the C core), or None."""
    return _received


def _raise_interrupted(signum: int, frame: FrameType | None) -> NoReturn:
    global _received
    _received = signum
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_interrupt(signals: Iterable[int] = STOP_SIGNALS) -> Iterator[frozenset[int]]:
    """Each of `signals` at its default action raises Interrupted in the block; yields those."""
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
    """Hold `signals` for the block and deliver them when it ends, so a write that must finish
    does (``signal.getsignal()`` inside answers the stand-in: read a handler before)."""
    # Both the calling thread's mask (threads started within inherit it: the kernel gives a
    # process's signal to any thread not blocking it, and numpy's OpenBLAS starts some) and, in
    # the main thread, where Python runs handlers, a stand-in noting each signal to raise again.
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
            dropped = _put_back(holder.replaced)
            # Raised while blocked: they come, with any the mask held, once it is restored.
            for s in dict.fromkeys(holder.held + dropped):
                signal.raise_signal(s)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _put_back(handlers: dict[int, _Handler]) -> list[int]:
    """Put the program's `handlers` back; the signals CPython dropped meanwhile, returned."""
    # Another thread may catch a signal just as its handler goes back to SIG_DFL: CPython drops
    # it with an unraisable "Signal N ignored due to race condition" (bpo-43406), where the
    # kernel would have ended the process. Those are noted, to be raised again.
    dropped: list[int] = []
    hook = sys.unraisablehook

    def note(unraisable: Any) -> None:
        why = unraisable.exc_value
        if found := isinstance(why, OSError) and _DROPPED.fullmatch(str(why)):
            dropped.append(int(found.group(1)))
        else:
            hook(unraisable)

    sys.unraisablehook = note
    try:
        # Twice: signal.signal() runs the pending handlers first, so a signal caught during the
        # first pass is seen in the second, while note() is the hook.
        for _ in range(2):
            for s, handler in handlers.items():
                signal.signal(s, handler)
    finally:
        sys.unraisablehook = hook
    return dropped


class _Holder:
    """deferred()'s stand-in handler: notes a signal in the block, passes it on after it."""

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
    """make_result(raw) of a timed C call, or raise the Interrupted that stopped it (pzpy.h);
    a signal pagezero does not own goes to its handler, and one that returns gets the partial."""
    global _received
    name = raw.get("interrupted")
    if not name:
        return make_result(raw)
    signum = getattr(signal, name, signal.SIGINT)
    handler = signal.getsignal(signum)  # read before deferred() stands in for it
    # Held while the partial is built: a second signal must not replace its Interrupted.
    with deferred():
        partial = make_result(raw) if raw.get("loops_done") else None
        deliver = handler not in (signal.default_int_handler, _raise_interrupted)
        if deliver:
            signal.raise_signal(signum)  # as if the C core had never caught it
        else:
            _received = signum  # received() must say so too
    if deliver:
        return partial
    raise Interrupted(signum, partial=partial)
