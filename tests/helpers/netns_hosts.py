"""Test hosts with their own addresses, reached over real SSH: network namespaces on this
machine (iproute2), each running Debian's OpenSSH server with a configuration, host key
and authorized user key of the test's own.

The topology: a "client" namespace holding a bridge (10.N.0.1/24) and one veth link per
host into it; each host namespace has its end of the link as eth0 (10.N.0.11, .12, ...)
and a default route through the bridge, so that distributed's address detection (a UDP
socket "connected" to a public address: no packet is sent) finds the host's own address.
The client namespace has no route out and does not forward: traffic stays inside. The
test's client (``fleet up``, ``fleet run``) runs in the client namespace, with a HOME of
its own whose ~/.ssh has the user key, known_hosts and a config naming each host.

The hosts share this machine's filesystem, so the same Python and pagezero are there;
each host's sshd sets PYTHONPATH for its sessions to a folder of that host's own
(`Host.python_dir`, empty at first) before the suite's, where a test can put what makes
that host different (another pagezero's metadata, a sitecustomize.py). Everything is
ended on close(): every process in the namespaces (sshd and all it started), then the
namespaces; the fixture closes on every exit path.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

SSHD = "/usr/sbin/sshd"
START_S = 15


def missing_tools():
    """Why test hosts cannot be made here, or None: root, ip, sshd, ssh-keygen, asyncssh."""
    if os.geteuid() != 0:
        return "test hosts (network namespaces) need root"
    for tool in ("ip", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"test hosts need {tool} (iproute2, openssh-client)"
    if not os.access(SSHD, os.X_OK):
        return f"test hosts need Debian's openssh-server ({SSHD})"
    try:
        import asyncssh  # noqa: F401
    except ImportError:
        return "fleet up needs asyncssh (pip install asyncssh)"
    return None


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@dataclass
class Host:
    """A test host: its name (in ~/.ssh/config), namespace, address and folder."""

    name: str
    namespace: str
    address: str
    folder: str

    @property
    def python_dir(self):
        """First on PYTHONPATH in this host's SSH sessions."""
        return os.path.join(self.folder, "python")

    @property
    def tmp_dir(self):
        """TMPDIR in this host's SSH sessions: its temporary files apart from the others'."""
        return os.path.join(self.folder, "tmp")


class NamespaceHosts:
    """`names` as test hosts under `folder` (see the module's note); use as a context."""

    def __init__(self, folder, names):
        self.folder = str(folder)
        self.tag = f"pz{os.getpid() % 100000}"  # namespaces of this run's own
        subnet = 100 + os.getpid() % 150
        self.client = f"{self.tag}-client"
        self.bridge_address = f"10.{subnet}.0.1"
        self.hosts = {
            name: Host(
                name,
                f"{self.tag}-{name}",
                f"10.{subnet}.0.{11 + i}",
                os.path.join(self.folder, name),
            )
            for i, name in enumerate(names)
        }
        self.home = os.path.join(self.folder, "home")
        self._sshd = []
        self._made_run_sshd = False

    def __enter__(self):
        try:
            self._network()
            self._keys()
            for host in self.hosts.values():
                self._start_sshd(host)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def namespaces(self):
        return [self.client, *(h.namespace for h in self.hosts.values())]

    def _network(self):
        _ip("netns", "add", self.client)
        _ip("-n", self.client, "link", "set", "lo", "up")
        _ip("-n", self.client, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.client, "addr", "add", f"{self.bridge_address}/24", "dev", "br0")
        _ip("-n", self.client, "link", "set", "br0", "up")
        for i, host in enumerate(self.hosts.values()):
            ns, peer = host.namespace, f"veth{i}"
            _ip("netns", "add", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            # Made inside the namespaces: no interface of the test's ever in this machine's.
            _ip(
                "link",
                "add",
                "eth0",
                "netns",
                ns,
                "type",
                "veth",
                "peer",
                peer,
                "netns",
                self.client,
            )
            _ip("-n", self.client, "link", "set", peer, "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{host.address}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "route", "add", "default", "via", self.bridge_address)

    def _keys(self):
        ssh = os.path.join(self.home, ".ssh")
        os.makedirs(ssh, mode=0o700)
        key = os.path.join(ssh, "id_ed25519")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
        shutil.copy(key + ".pub", os.path.join(self.folder, "authorized_keys"))
        known, config = [], []
        for host in self.hosts.values():
            os.makedirs(host.python_dir)
            os.makedirs(host.tmp_dir)
            host_key = os.path.join(host.folder, "host_key")
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", host_key], check=True
            )
            with open(host_key + ".pub") as f:
                public = " ".join(f.read().split()[:2])
            known.append(f"{host.name},{host.address} {public}")
            config.append(f"Host {host.name}\n    HostName {host.address}\n")
        with open(os.path.join(ssh, "known_hosts"), "w") as f:
            f.write("\n".join(known) + "\n")
        with open(os.path.join(ssh, "config"), "w") as f:
            f.write("".join(config))

    def _start_sshd(self, host):
        if not os.path.isdir("/run/sshd"):  # its privilege separation directory
            os.makedirs("/run/sshd", mode=0o755)
            self._made_run_sshd = True
        path = os.pathsep.join(p for p in (host.python_dir, os.environ.get("PYTHONPATH")) if p)
        config = os.path.join(host.folder, "sshd_config")
        with open(config, "w") as f:
            f.write(
                f"Port 22\nListenAddress {host.address}\n"
                f"HostKey {host.folder}/host_key\nPidFile {host.folder}/sshd.pid\n"
                f"AuthorizedKeysFile {self.folder}/authorized_keys\n"
                "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                f'SetEnv "PYTHONPATH={path}" "TMPDIR={host.tmp_dir}"\n'
            )
        log = open(os.path.join(host.folder, "sshd.log"), "w")
        with log:
            proc = subprocess.Popen(
                self.in_namespace(host.namespace, SSHD, "-D", "-e", "-f", config),
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self._sshd.append(proc)
        deadline = time.monotonic() + START_S
        while not self._listening(host):
            if proc.poll() is not None or time.monotonic() > deadline:
                with open(log.name) as f:
                    raise RuntimeError(f"sshd on {host.name} did not start: {f.read()}")
            time.sleep(0.05)

    def _listening(self, host):
        ss = subprocess.run(
            ["ip", "netns", "exec", host.namespace, "ss", "-Htln", f"src {host.address}:22"],
            capture_output=True,
            text=True,
        )
        return bool(ss.stdout.strip())

    @staticmethod
    def in_namespace(namespace, *argv):
        """The command line that runs `argv` in `namespace`."""
        return ["ip", "netns", "exec", namespace, *map(str, argv)]

    def client_command(self, *argv):
        """``python -m pagezero ARGV`` in the client namespace."""
        return self.in_namespace(self.client, sys.executable, "-m", "pagezero", *argv)

    def client_env(self):
        """The environment of the test's client: its own HOME (~/.ssh)."""
        return dict(os.environ, HOME=self.home)

    def pids(self, namespace):
        """The processes in `namespace` now."""
        out = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def commands(self, name):
        """{pid: command line} of the processes on host `name` but its sshd listener (its
        SSH sessions included)."""
        found = {}
        for pid in self.pids(self.hosts[name].namespace):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue  # ended meanwhile
            if argv != [b""]:  # a zombie has none: it has ended, its parent not yet told
                found[pid] = " ".join(a.decode(errors="replace") for a in argv if a)
        listeners = {p.pid for p in self._sshd}  # `ip netns exec` exec'd sshd: its pid
        return {pid: cmd for pid, cmd in found.items() if pid not in listeners}

    def cut(self, name):
        """Take host `name`'s link down (its end of the veth pair)."""
        _ip("-n", self.hosts[name].namespace, "link", "set", "eth0", "down")

    def mend(self, name):
        """Bring host `name`'s link back up, and its default route with it."""
        _ip("-n", self.hosts[name].namespace, "link", "set", "eth0", "up")
        _ip(
            "-n",
            self.hosts[name].namespace,
            "route",
            "replace",
            "default",
            "via",
            self.bridge_address,
        )

    def end_processes(self, names=None):
        """SIGKILL every process on these hosts (default all) but sshd; how many there were."""
        ended = 0
        for name in names or self.hosts:
            for pid in self.commands(name):
                try:
                    os.kill(pid, signal.SIGKILL)
                    ended += 1
                except ProcessLookupError:
                    pass
        return ended

    def close(self):
        """End every process in the namespaces, then delete them (idempotent)."""
        for proc in self._sshd:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        existing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        ours = [ns for ns in self.namespaces() if ns in existing.split()]
        for ns in ours:
            for pid in self.pids(ns):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for proc in self._sshd:
            proc.wait()
        self._sshd.clear()
        for ns in ours:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        if self._made_run_sshd:
            shutil.rmtree("/run/sshd", ignore_errors=True)
            self._made_run_sshd = False
