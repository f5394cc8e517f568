"""What the machine is: its caches, hugepage pools, NUMA nodes, kernel registry and memory."""
