"""Many machines (docs/fleet.rst): one pagezero command on every machine of a Dask cluster;
distributed is imported only inside functions, so that ``import pagezero`` works without it."""
