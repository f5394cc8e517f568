"""Many machines: the same pagezero study on every machine of a Dask cluster.

A fleet is a Dask cluster with one worker per machine, each offering one
unit of the resource "benchmark", so that one benchmark runs at a time per
machine: the scheduler, not pagezero, decides where and when. Workers are
started the documented Dask way (`dask scheduler`, then on each machine
`dask worker tcp://SCHEDULER:8786 --nworkers 1 --nthreads 1 --resources
benchmark=1 --name MACHINE`) or by `pagezero fleet up` over SSH (cluster.py).

    command.py  the pagezero command checked on the client, before anything is sent
    worker.py   what runs on a worker: the command in a fresh process, its files back
    run.py      the client: machines chosen, versions checked, runs watched, files written
    table.py    machines side by side, point by point

distributed is imported only inside these modules' functions, so that
`import pagezero` stays fast and works without it.
"""
