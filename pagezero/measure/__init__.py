"""One C call, one Result: memset and memcpy, the fault workloads, the clearing policies, the
conditions they run under. Each takes `runs` (for type checkers) but measures one: runs/ does N."""
