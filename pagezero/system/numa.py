"""NUMA nodes as sysfs lists them (Documentation/ABI/stable/sysfs-devices-node); a machine
without that directory is one node, 0."""

from __future__ import annotations

import os

from pagezero.files import entries, read_text

NODE_DIR = "/sys/devices/system/node"


def listed(root: str = NODE_DIR) -> list[int]:
    """The nodes sysfs lists, ascending; [] without the directory."""
    return sorted(int(m[1]) for m in entries(root, r"node(\d+)"))


def numa_nodes(root: str = NODE_DIR) -> list[int]:
    """The machine's NUMA nodes, ascending; [0] without the sysfs directory."""
    return listed(root) or [0]


def node_cpus(node: int, root: str = NODE_DIR) -> set[int]:
    """The CPUs of a NUMA node, from its cpulist; ValueError for a node that does not exist."""
    check_node(node, "node", root)
    text = read_text(os.path.join(root, f"node{node}", "cpulist"))
    if text is None:
        # No sysfs node directory at all: a single-node machine, every CPU is node 0's.
        return set(range(os.cpu_count() or 1))
    ranges = (part.partition("-") for part in text.split(",") if part)  # "0-3,8-11"
    return {cpu for lo, _, hi in ranges for cpu in range(int(lo), int(hi or lo) + 1)}


def check_node(node: object, what: str = "node", root: str = NODE_DIR) -> int:
    """`node`, if this machine has it; else ValueError naming `what` and listing the nodes."""
    if isinstance(node, bool) or not isinstance(node, int):
        raise ValueError(f"{what} must be an int, not {node!r}")
    nodes = numa_nodes(root)
    if node not in nodes:
        if nodes == [0]:
            raise ValueError(
                f"{what} {node} does not exist: this machine has only node 0 (one NUMA node; "
                f"{root} lists no other), so only {what} 0 can be asked for"
            )
        raise ValueError(
            f"{what} {node} does not exist: this machine's nodes are {', '.join(map(str, nodes))}"
        )
    return node
