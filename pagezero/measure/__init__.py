"""One C call, one Result: memset/memcpy, faults, the policies; runs/ does runs=N."""
