"""Fleet runs that only an interruption ends: for the fleet tests that kill a worker
or press Ctrl-C while a run is in progress. A run given a loop count guessed to last
"half a second or more" ends first on a fast machine, and the test then sees a
finished run where it meant to stop one.

`worker_env(folder)` is the environment of a `dask worker` whose pagezero commands get
``-l 1000000`` in place of their loop count (a loop of the tests' 64MB demand-faulted
mmap is milliseconds: hours in all): a sitecustomize.py written into `folder` and put
first on PYTHONPATH, which every Python that worker starts imports before its main
module, changes the command's sys.argv. With ``after_first=True``, the first command
the worker runs keeps its loop count (it ends, and its result is kept) and every later
one is endless.
"""

import os

# Only a fleet run's command: it runs in the worker's pagezero-fleet-* folder
# (pagezero/fleet/tether.py); the worker itself, started from tests/, is left alone.
SITECUSTOMIZE = """
import os, sys

# sys.orig_argv: the pagezero command itself, not the tether that starts it (fleet/tether.py).
here = os.path.basename(os.getcwd()).startswith("pagezero-fleet-")
if here and sys.orig_argv[1:3] == ["-m", "pagezero"] and "-l" in sys.argv:
    try:  # the first command here creates the mark; later ones find it
        os.close(os.open({mark!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        first = True
    except FileExistsError:
        first = False
    if not (first and {after_first!r}):
        sys.argv[sys.argv.index("-l") + 1] = "1000000"
"""


def worker_env(folder, after_first=False):
    """The environment for a worker whose runs are endless (see the module's note)."""
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    mark = os.path.join(folder, "first-run-started")
    with open(os.path.join(folder, "sitecustomize.py"), "w") as f:
        f.write(SITECUSTOMIZE.format(mark=mark, after_first=after_first))
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=folder + (os.pathsep + path if path else ""))
