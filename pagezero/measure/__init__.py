"""One C call, one Result: memset and memcpy, the fault workloads, the clearing policies, and
the conditions they run under; the rule for loops and runs still warming up. Each measuring
call takes `runs` (its public signature, for type checkers) but measures one: runs/ does N."""
