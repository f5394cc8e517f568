"""Many machines (docs/fleet.rst): the same pagezero command on every machine of a Dask
cluster, one worker per machine offering one unit of the resource "benchmark".
distributed is imported only inside functions, so that ``import pagezero`` works without it.
"""
