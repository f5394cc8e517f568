"""``pagezero fleet up`` (docs/fleet.rst): distributed's SSH Scheduler and Workers in a
SpecCluster (SSHCluster cannot name a worker after its machine), each under the tether."""

import shlex
import sys

from pagezero.fleet.run import RESOURCE, FleetError, first_line
from pagezero.interrupt import deferred

__all__ = ["start_fleet"]

DEFAULT_PORT = 8786
# Without distributed's nanny (docs/fleet.rst): it starts in half the time, and a restart
# would serve nothing, the run being lost all the same.
WORKER_CLASS = "distributed.Worker"
REGISTER_TIMEOUT_S = 60


def start_fleet(
    hosts, scheduler_host=None, port=DEFAULT_PORT, connect_options=None, remote_python=None
):
    """Start a fleet over SSH: the scheduler on one host, a worker on every host.

    Parameters
    ----------
    hosts : list of str
        The machines, one worker each, named after the host.
    scheduler_host : str, optional
        Where the scheduler runs; by default the first host.
    port : int
        The scheduler's port, 0 to 65535.
    connect_options, remote_python : dict, str, optional
        asyncssh's connection options; the Python on the hosts.

    Returns
    -------
    distributed.deploy.spec.SpecCluster
        The running cluster, every worker registered; ``close()`` stops it.

    Raises
    ------
    ValueError
        For an empty host list, a host named twice, or a bad port.
    FleetError
        When asyncssh is missing, SSH or a process fails, or the workers do not all join
        within 60 s.
    """
    hosts = [h.strip() for h in hosts if h and h.strip()]
    if not hosts:
        raise ValueError("--hosts needs at least one host name")
    if len(set(hosts)) != len(hosts):
        raise ValueError(f"a host is named twice in --hosts: {','.join(hosts)}")
    if not 0 <= port <= 65535:
        raise ValueError(f"invalid --port {port}: expected 0..65535")
    from distributed.deploy.spec import SpecCluster
    from distributed.deploy.ssh import Scheduler, Worker

    tether = f"{shlex.quote(remote_python or sys.executable)} -m pagezero.fleet.tether --session --"
    ssh = {"connect_options": connect_options or {}, "remote_python": tether}

    def spec(cls, host, **options):
        return {"cls": cls, "options": dict(ssh, address=host, **options)}

    scheduler = spec(Scheduler, scheduler_host or hosts[0], kwargs=dict(port=port, dashboard=False))
    worker = dict(nthreads=1, resources=dict(RESOURCE))
    workers = {
        h: spec(Worker, h, worker_class=WORKER_CLASS, kwargs=dict(worker, name=h)) for h in hosts
    }
    try:
        with deferred():  # its threads keep the stop signals for the main thread (run.connect)
            cluster = SpecCluster(workers, scheduler, name="pagezero-fleet")
    except ImportError as e:
        raise FleetError(f"fleet up needs asyncssh: pip install 'pagezero[fleet]' ({e})") from None
    except Exception as e:  # asyncssh's errors, OSError, "Worker failed to start"
        raise FleetError(f"cannot start the fleet over SSH: {first_line(e)}") from None
    try:
        # A worker has started before the scheduler knows it: the address printed is
        # ready for a run once every machine is there.
        cluster.wait_for_workers(len(hosts), timeout=REGISTER_TIMEOUT_S)
    except (TimeoutError, OSError) as e:
        cluster.close()
        raise FleetError(
            f"the workers started but did not all join the scheduler within "
            f"{REGISTER_TIMEOUT_S} s: {e}"
        ) from None
    return cluster
