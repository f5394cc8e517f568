"""Every clear kernel this CPU runs, over one extent, each in 3 fresh processes: the run is
the unit (the loops of one process share one placement of the buffer).

    python examples/kernels.py [SIZE]

CI's mypy checks this file with the package (pyproject.toml [tool.mypy] files): a misspelled
or mistyped argument to pagezero.memset below fails there.
"""

import sys

import pagezero

size = sys.argv[1] if len(sys.argv) > 1 else "64MB"
for kernel in pagezero.kernels("clear"):
    if not kernel.available:
        print(f"{kernel.name:20} not available here: {kernel.reason}")
        continue
    rs = pagezero.memset(size, function=kernel.name, loops=5, runs=3)
    rate = rs.bytes_per_sec or float("nan")  # None: nothing measured (a stop signal)
    print(f"{kernel.name:20} {rate / 1e9:6.1f} GB/s (the median of 3 runs' medians)")
