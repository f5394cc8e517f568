"""`pagezero fleet up` with only the SSH connection faked: a stand-in for
asyncssh whose connections run each command on this machine instead of over
SSH. Everything above it is real: distributed's SSH Scheduler and Worker
process classes build the command lines, a real scheduler and real workers
(one per "host") start, and a fleet run goes through them."""

import asyncio
import os
import signal
import subprocess
import sys
import types

import pytest
from conftest import TESTS_DIR

from pagezero.fleet.run import FleetError, connect, run_fleet, start_fleet, workers_now

TINY = ["mem", "memset", "-s", "4KB", "-l", "2", "-f", "default"]


class _Process:
    """An asyncssh process, as far as distributed.deploy.ssh uses one: stderr lines
    as str, and kill(). A plain subprocess, read in a thread, so that killing it
    is synchronous and leaves nothing open."""

    def __init__(self, command):
        self._proc = subprocess.Popen(
            command,
            shell=True,
            cwd=TESTS_DIR,
            text=True,
            stdin=subprocess.PIPE,  # the channel's: open until the session ends
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.stderr = self

    async def readline(self):
        return await asyncio.get_running_loop().run_in_executor(None, self._proc.stderr.readline)

    def kill(self):
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)  # the remote command's whole tree
        except ProcessLookupError:
            pass
        self._proc.wait()
        self._proc.stdin.close()
        self._proc.stderr.close()


class _Connection:
    """What distributed.deploy.ssh uses of an asyncssh connection, run locally."""

    def __init__(self, host, log):
        self.host, self.log = host, log

    async def run(self, command):
        self.log.append((self.host, command))
        done = await asyncio.get_running_loop().run_in_executor(
            None, lambda: subprocess.run(command, shell=True, capture_output=True)
        )
        return types.SimpleNamespace(exit_status=done.returncode)

    async def create_process(self, command):
        self.log.append((self.host, command))
        return _Process(command)

    def close(self):
        pass


@pytest.fixture
def fake_ssh(monkeypatch):
    """A stand-in asyncssh module; its log has (host, command) of every command."""
    log, connected = [], []

    async def connect_(host, **options):
        if host == "unreachable":
            raise OSError(f"[Errno 113] Connect call failed ('{host}', 22)")
        connected.append((host, options))
        return _Connection(host, log)

    module = types.SimpleNamespace(connect=connect_, log=log, connected=connected)
    monkeypatch.setitem(sys.modules, "asyncssh", module)
    return module


def test_fleet_up_starts_one_named_worker_per_host(fake_ssh, tmp_path):
    cluster = start_fleet(["lab-a", "lab-b"], port=0, connect_options={"username": "bench"})
    try:
        hosts = [h for h, _ in fake_ssh.connected]
        assert sorted(hosts) == ["lab-a", "lab-a", "lab-b"]  # the scheduler on the first host
        assert all(options == {"username": "bench"} for _, options in fake_ssh.connected)
        client = connect(cluster.scheduler_address)
        try:
            workers = workers_now(client).values()
            assert sorted(
                (w["name"], w["resources"]["benchmark"], w["nthreads"]) for w in workers
            ) == [("lab-a", 1, 1), ("lab-b", 1, 1)]
        finally:
            client.close()
        log = run_fleet(cluster.scheduler_address, TINY, str(tmp_path / "run"))
        assert [(m["name"], m["status"]) for m in log.machines] == [
            ("lab-a", "ok"),
            ("lab-b", "ok"),
        ]
    finally:
        cluster.close()


def test_fleet_up_reports_ssh_failures_in_one_line(fake_ssh):
    with pytest.raises(FleetError, match="cannot start the fleet over SSH: .*Connect call failed"):
        start_fleet(["lab-a", "unreachable"], port=0)
    with pytest.raises(ValueError, match="named twice"):
        start_fleet(["lab-a", "lab-a"])
    with pytest.raises(ValueError, match="at least one host"):
        start_fleet([" ", ""])


def test_cli_fleet_up_failures_are_one_line(fake_ssh, capsys):
    from pagezero.cli import main

    assert main(["fleet", "up", "--hosts", "lab-a,unreachable", "--port", "0"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot start the fleet over SSH" in err[0]
    assert main(["fleet", "up", "--hosts", ","]) == 2
    assert capsys.readouterr().err.startswith("pagezero: error: --hosts needs at least one")
