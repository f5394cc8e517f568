"""A sweep's worker process: a JSON spec on stdin, a ResultSet file out.

A module of its own so that `python -m` runs it without importing it twice
(pagezero/__init__.py imports pagezero.sweeps).

SIGINT, SIGTERM and SIGHUP stop it as they stop the CLI: the points measured
(and the completed loops of the one cut short) are saved, marked with the
signal, and it exits with the shell's status for that signal, 128 + signum,
which the sweep reads as "stopped", not "failed".
"""
import json
import signal
import sys

from .interrupt import as_interrupted, deferred, signals_interrupt
from .sweeps import run_here


def main():
    spec = json.load(sys.stdin)
    rs, late = None, None
    try:
        with signals_interrupt():
            rs = run_here(spec["benchmark"], spec["points"], spec["repetitions"],
                          spec["warmup"], spec["seed"], spec["process"], spec["progress"])
            # Held signals: a second one cannot leave the file half written.
            with deferred():
                rs.save(spec["output"])
    except KeyboardInterrupt as e:
        # A signal that came as run_here returned, or was held during the save.
        late = as_interrupted(e)
        if rs is not None:
            with deferred():
                rs.save(spec["output"])
    if rs is not None and rs.interrupted:
        return 128 + getattr(signal, rs.interrupted, signal.SIGINT)
    return late.exit_status if late else 0


if __name__ == "__main__":
    sys.exit(main())
