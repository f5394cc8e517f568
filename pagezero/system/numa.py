"""NUMA nodes as sysfs lists them: which exist, and the CPUs of each.

Read from ``/sys/devices/system/node`` (the kernel's
Documentation/ABI/stable/sysfs-devices-node): a ``nodeN`` directory per
node, each with a ``cpulist`` such as ``0-3,8-11``. A machine without that
directory is one node, 0. pagezero.measure.conditions checks benchmarks' ``node``
and ``cpu_node`` arguments with these.
"""

from __future__ import annotations

import os

__all__ = ["NODE_DIR", "numa_nodes", "node_cpus", "check_node"]

NODE_DIR = "/sys/devices/system/node"


def numa_nodes(root: str = NODE_DIR) -> list[int]:
    """The machine's NUMA nodes, from sysfs.

    Parameters
    ----------
    root : str
        The directory of the nodes; by default ``/sys/devices/system/node``.

    Returns
    -------
    list of int
        The node numbers, ascending; ``[0]`` on a machine without the directory.
    """
    try:
        nodes = sorted(
            int(e[4:]) for e in os.listdir(root) if e.startswith("node") and e[4:].isdigit()
        )
    except OSError:
        nodes = []
    return nodes or [0]


def _parse_cpulist(text: str) -> set[int]:
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def node_cpus(node: int, root: str = NODE_DIR) -> set[int]:
    """The CPUs of a NUMA node, from its sysfs ``cpulist``.

    Parameters
    ----------
    node : int
        The node.
    root : str
        The directory of the nodes; by default ``/sys/devices/system/node``.

    Returns
    -------
    set of int
        CPU numbers.

    Raises
    ------
    ValueError
        For a node that does not exist.
    """
    check_node(node, "node", root)
    try:
        with open(os.path.join(root, f"node{node}", "cpulist")) as f:
            return _parse_cpulist(f.read())
    except OSError:
        # No sysfs node directory at all: a single-node machine, every CPU is node 0's.
        return set(range(os.cpu_count() or 1))


def check_node(node: object, what: str = "node", root: str = NODE_DIR) -> int:
    """Check that a NUMA node exists on this machine.

    Parameters
    ----------
    node : int
        The node.
    what : str
        The argument's name, for the message (``"node"``, ``"cpu_node"``).
    root : str
        The directory of the nodes; by default ``/sys/devices/system/node``.

    Returns
    -------
    int
        `node`.

    Raises
    ------
    ValueError
        For a non-int or a node the machine lacks; the message lists its nodes.
    """
    if isinstance(node, bool) or not isinstance(node, int):
        raise ValueError(f"{what} must be an int, not {node!r}")
    nodes = numa_nodes(root)
    if node not in nodes:
        if nodes == [0]:
            raise ValueError(
                f"{what} {node} does not exist: this machine has only node 0 "
                f"(one NUMA node; {root} lists no other), so only {what} 0 "
                f"can be asked for"
            )
        raise ValueError(
            f"{what} {node} does not exist: this machine's nodes are {', '.join(map(str, nodes))}"
        )
    return node
