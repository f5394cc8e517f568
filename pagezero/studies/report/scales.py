"""The report's sizes: "full" (minutes), "quick" (--quick) and "tiny" (seconds; tests, CI)."""

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


# extend_extents: double the largest extent to the memory plateau and twice the cache.
# runs: fresh processes per point (--runs overrides it). page_size: the region of the
# 4KB-against-2MB table. cold_loop_div: fewer loops for the cold study (tiny: seconds).
FULL = dict(
    runs=3,
    extents=None,
    warmup=1,
    chunk_size=1 * GB,
    chunk_loops=3,
    fault_size=1 * GB,
    fault_loops=5,
    cold_extents=None,  # 64KB, 2MB and the cache the run has (report.cold)
    thread_size=1 * GB,
    chunk_kernels=("clear_pages", "streaming", "portable"),
    chunks=None,
    page_size=1 * GB,
    page_loops=3,
    cold_loop_div=1,
    extend_extents=True,
)
QUICK = dict(
    FULL,
    runs=1,
    extents=[e * KB for e in (4, 16, 64, 256)] + [e * MB for e in (1, 4, 16, 32, 64, 256)],
    chunk_size=512 * MB,
    chunk_loops=2,
    fault_size=256 * MB,
    fault_loops=3,
    thread_size=256 * MB,
    chunk_kernels=("clear_pages", "default"),
    chunks=[4 * KB, 64 * KB, 2 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB, 512 * MB],
    page_size=256 * MB,
    page_loops=2,
)
TINY = dict(
    QUICK,
    extents=[4 * KB, 64 * KB, 1 * MB],
    warmup=0,
    fault_size=16 * MB,
    fault_loops=1,
    cold_extents=[64 * KB, 1 * MB],
    thread_size=16 * MB,
    chunk_size=16 * MB,
    chunk_loops=1,
    chunk_kernels=("portable",),
    chunks=[4 * KB, 1 * MB, 16 * MB],
    page_size=16 * MB,
    page_loops=1,
    cold_loop_div=8,
    extend_extents=False,
)
SCALES = {"full": FULL, "quick": QUICK, "tiny": TINY}
