"""How long a run takes to stop on a signal, and what it leaves behind.

Information, no target beyond the issue's bound (exit within one loop and at most 1 s):
each command is started as a user would start it, sent SIGINT, SIGTERM or SIGHUP after
a delay, and timed from the signal to its exit. Reported: the exit status (expect 130,
143, 129), the time to exit, the loops the -o file kept (marked interrupted) and, for the
--reserve run, the 2MB pool before and after (it must be back).

    python benchmarks/signal_stop.py [--rounds N]        # the mmap run needs root
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

from _common import import_pagezero, parse_args

POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
COMMANDS = {
    "memset": (["mem", "memset", "-s", "64MB", "-l", "1000000"], 2.0),
    "mmap --reserve": (
        ["mem", "mmap", "-p", "2MB", "-s", "64MB", "-l", "200000", "-f", "demand", "--reserve"],
        3.0,
    ),
}


def pool():
    try:
        with open(POOL) as f:
            return int(f.read())
    except OSError:
        return None


def stop_once(args, delay, sig, pagezero):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        before = pool()
        p = subprocess.Popen(
            [sys.executable, "-m", "pagezero", *args, "-o", out],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        t0 = time.monotonic()
        p.send_signal(sig)
        err = p.communicate(timeout=60)[1]
        elapsed = time.monotonic() - t0
        loops = None
        if os.path.exists(out):
            rs = pagezero.ResultSet.load(out)
            loops = sum(r.loops for r in rs.results)
            assert rs.interrupted, "a file saved after a signal must say so"
        return p.returncode, elapsed, loops, before, pool(), err.strip().splitlines()[-1:]


def main():
    args = parse_args(__doc__, rounds=2)
    pagezero = import_pagezero()
    print(f"{'command':16} {'signal':8} {'status':>6} {'to exit':>9} {'loops kept':>10}  pool")
    for name, (argv, delay) in COMMANDS.items():
        if "--reserve" in argv and os.geteuid() != 0:
            print(f"{name:16} skipped: --reserve needs root")
            continue
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            for _ in range(args.rounds):
                status, secs, loops, before, after, last = stop_once(argv, delay, sig, pagezero)
                print(
                    f"{name:16} {sig.name:8} {status:6} {secs * 1000:7.0f} ms {loops!s:>10}"
                    f"  {before} -> {after}   {last[0] if last else ''}"
                )


if __name__ == "__main__":
    main()
