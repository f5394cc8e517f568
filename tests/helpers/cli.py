"""The command line run in the test's own process: pagezero.cli.main(argv), with
stdout and stderr captured and the exit status kept, returned as the
CompletedProcess a subprocess would give.

A fresh interpreter costs a quarter to a half second (importing numpy and
pagezero) before the command does anything, and most CLI tests check what the
command prints, writes and returns, which is the same code either way. The
tests whose subject is the process itself (``python -m pagezero``'s exit status
and stderr, the console script, a signal, a fresh environment) keep
conftest.pagezero_cli, a real subprocess.
"""

import contextlib
import io
import os
import subprocess


def run_cli(*args, cwd=None):
    """Run ``pagezero ARGS`` in this process (in `cwd` if given) and return a
    CompletedProcess: returncode, stdout, stderr as text. ``--help`` and
    ``--version`` leave through SystemExit, as in the console script; its code
    is the status."""
    from pagezero.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["pagezero", *argv], status, out.getvalue(), err.getvalue())
