"""A sweep's worker process: a JSON spec on stdin, a ResultSet file out.

A module of its own so that `python -m` runs it without importing it twice
(pagezero/__init__.py imports pagezero.sweeps).
"""
import json
import sys

from .sweeps import run_here


def main():
    spec = json.load(sys.stdin)
    rs = run_here(spec["benchmark"], spec["points"], spec["repetitions"], spec["warmup"],
                  spec["seed"], spec["process"], spec["progress"])
    rs.save(spec["output"])


if __name__ == "__main__":
    main()
