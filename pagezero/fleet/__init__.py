"""Many machines: the same pagezero command on every machine of a Dask cluster.

A fleet is a Dask cluster with one worker per machine offering one unit of the resource
"benchmark", so that the scheduler runs one benchmark at a time per machine; started the
documented Dask way or by ``pagezero fleet up`` over SSH. distributed is imported only
inside functions, so that ``import pagezero`` works without it.
"""
