"""The report's sizes: "full" (minutes), "quick" (--quick) and "tiny" (seconds; tests, CI)."""

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30

QUICK_EXTENTS = [e * KB for e in (4, 16, 64, 256)] + [e * MB for e in (1, 4, 16, 32, 64, 256)]
QUICK_CHUNKS = [4 * KB, 64 * KB, 2 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB, 512 * MB]

# Each setting at the (full, quick, tiny) scales. quick: advise's and predict's quick sweeps
# (and only 2MB pages predicted). extend_extents: double the largest extent to
# the memory plateau and twice the cache. runs: fresh processes per point (--runs overrides
# it). page_size: the region of the 4KB-against-2MB table. cold_extents None: 64KB, 2MB and
# the cache the run has (report.cold). cold_loop_div: fewer loops for the cold study.
_SETTINGS = {
    "quick": (False, True, True),
    "runs": (3, 1, 1),
    "extents": (None, QUICK_EXTENTS, [4 * KB, 64 * KB, 1 * MB]),
    "warmup": (1, 1, 0),
    "chunk_size": (1 * GB, 512 * MB, 16 * MB),
    "chunk_loops": (3, 2, 1),
    "fault_size": (1 * GB, 256 * MB, 16 * MB),
    "fault_loops": (5, 3, 1),
    "cold_extents": (None, None, [64 * KB, 1 * MB]),
    "thread_size": (1 * GB, 256 * MB, 16 * MB),
    "chunk_kernels": (
        ("clear_pages", "streaming", "portable"),
        ("clear_pages", "default"),
        ("portable",),
    ),
    "chunks": (None, QUICK_CHUNKS, [4 * KB, 1 * MB, 16 * MB]),
    "page_size": (1 * GB, 256 * MB, 16 * MB),
    "page_loops": (3, 2, 1),
    "cold_loop_div": (1, 1, 8),
    "extend_extents": (True, True, False),
}
SCALES = {
    name: {key: values[i] for key, values in _SETTINGS.items()}
    for i, name in enumerate(("full", "quick", "tiny"))
}
