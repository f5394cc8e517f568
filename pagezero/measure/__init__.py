"""One C call, one Result: memset and memcpy, the fault workloads, the clearing policies, and
the conditions they run under; the rule for loops and runs still warming up. No runs= here:
runs/ adds it."""
