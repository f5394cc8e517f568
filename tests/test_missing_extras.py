"""A command whose optional dependencies are not installed says so in one line, naming
the extra to install, exit 2, never a traceback (pagezero installed with a plain
`pip install .`). The modules are made unimportable in a fresh interpreter, as where
they were never installed: `import NAME` raises ImportError once sys.modules[NAME] is
None. The fleet's commands are the only ones with an extra (`pagezero --help`; docs and
the browser are the tests' and the docs' build's, not commands)."""

import pytest
from conftest import one_line_error, run_python

WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
from pagezero.cli import main
sys.exit(main(sys.argv[2:]))
"""

UP = ["fleet", "up", "--hosts", "a,b"]
RUN = ["fleet", "run", "--scheduler", "tcp://127.0.0.1:1", "-o", "OUT", "--", "mem", "memset"]


# (modules missing, the command, those it names: what it needs of them)
@pytest.mark.parametrize(
    "missing, argv, needed",
    [
        ("distributed,asyncssh", UP, "distributed and asyncssh"),
        ("asyncssh", UP, "asyncssh"),
        ("distributed", UP, "distributed"),
        ("distributed", RUN, "distributed"),
        ("distributed,asyncssh", RUN, "distributed"),  # fleet run does not use asyncssh
    ],
)
def test_a_fleet_command_without_the_fleet_extra_is_one_line(missing, argv, needed, tmp_path):
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    proc = run_python("-c", WITHOUT, missing, *argv)
    line = one_line_error(proc, 2)
    assert line == (
        f"pagezero: error: pagezero fleet {argv[1]} needs {needed}, not installed here: "
        "pip install 'pagezero[fleet]'"
    )
    assert proc.stdout == "" and not (tmp_path / "out").exists()
