"""Many machines: the same pagezero command on every machine of a Dask cluster.

A fleet is a Dask cluster with one worker per machine, each offering one unit of the
resource "benchmark", so that the scheduler runs one benchmark at a time per machine.
Start it the documented Dask way (``dask scheduler``, then on each machine ``dask worker
tcp://SCHEDULER:8786 --nworkers 1 --nthreads 1 --resources benchmark=1 --name MACHINE``)
or with ``pagezero fleet up`` over SSH (cluster.py). run.py is the client, worker.py what
runs on a worker, log.py the record (fleet.json), table.py the machines side by side.
distributed is imported only inside functions, so that ``import pagezero`` works without it.
"""
