"""One C call, one Result: memset and memcpy, the fault workloads, the clearing policies, and
the conditions they run under. No runs= here: runs/ adds it."""
