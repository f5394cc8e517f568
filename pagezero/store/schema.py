"""The store's SQLite schema, its version, and the migrations between versions.

The version lives in a table of its own (pagezero_store): a SQLite file made by anything
else is recognised as foreign, and a store of a newer pagezero is refused rather than
misread. Every result set keeps its whole document, so a migration can recompute what an
older version derived from it (the points table).
"""

__all__ = ["SCHEMA_VERSION", "CREATE", "MIGRATIONS", "VERSION_TABLE"]

VERSION_TABLE = "pagezero_store"

# Version 2 adds each set's pagezero version and interrupted mark, and per point its
# runs and whether the spread is between runs or (one run) loops, the run being the
# unit; version 3 has results/points.py's point identity (sizes spelt alike, the cycles
# clock named, a rate's spread that of its times).
SCHEMA_VERSION = 3

CREATE = f"""
CREATE TABLE {VERSION_TABLE} (version INTEGER NOT NULL);
INSERT INTO {VERSION_TABLE} (version) VALUES ({SCHEMA_VERSION});
CREATE TABLE result_sets (
    id INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL UNIQUE,
    machine_name TEXT NOT NULL,
    hostname TEXT,
    cpu_model TEXT,
    kernel_release TEXT,
    benchmarks TEXT NOT NULL,
    measured_at TEXT NOT NULL,
    source TEXT,
    added_at TEXT NOT NULL,
    document TEXT NOT NULL,
    pagezero_version TEXT,
    interrupted TEXT
);
CREATE TABLE points (
    set_id INTEGER NOT NULL REFERENCES result_sets(id) ON DELETE CASCADE,
    benchmark TEXT NOT NULL,
    function TEXT NOT NULL,
    size INTEGER,
    page TEXT,
    label TEXT NOT NULL,
    params TEXT NOT NULL,
    unit TEXT NOT NULL,
    median REAL NOT NULL,
    spread_pct REAL NOT NULL,
    runs INTEGER NOT NULL,
    spread_of TEXT NOT NULL
);
CREATE INDEX points_by_point ON points (benchmark, function, size, page);
CREATE INDEX sets_by_time ON result_sets (measured_at);
"""


# MIGRATIONS[n]: the statements that take a store from version n to n + 1, in the
# caller's transaction; after them the store recomputes every set's points.
MIGRATIONS = {
    1: (
        "ALTER TABLE result_sets ADD COLUMN pagezero_version TEXT",
        "ALTER TABLE result_sets ADD COLUMN interrupted TEXT",
        "ALTER TABLE points ADD COLUMN runs INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE points ADD COLUMN spread_of TEXT NOT NULL DEFAULT 'loops'",
        "CREATE INDEX IF NOT EXISTS sets_by_time ON result_sets (measured_at)",
    ),
    2: (),
}
