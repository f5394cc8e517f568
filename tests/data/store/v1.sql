-- A results store as pagezero's store schema version 1 wrote it, written out by hand
-- (not by today's code), for the migration test: one result set of old-box, one point
-- measured in two processes (runs), summarised the version 1 way (median and %stdev over all loops).
-- The content hash is the SHA-256 of the document's canonical JSON (keys sorted, no
-- whitespace), so adding the same document again must find it.
CREATE TABLE pagezero_store (version INTEGER NOT NULL);
INSERT INTO pagezero_store (version) VALUES (1);
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
    document TEXT NOT NULL
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
    spread_pct REAL NOT NULL
);
CREATE INDEX points_by_point ON points (benchmark, function, size, page);
INSERT INTO result_sets (id, content_hash, machine_name, hostname, cpu_model, kernel_release,
                         benchmarks, measured_at, source, added_at, document)
VALUES (1, '11d656f5fe9a786e32e9e7bc3091fc5b385bedece87bdb3b56bb7c9c4499b5d1', 'old-box',
        'old-box', 'Test CPU 1', '6.1.0-old', 'memset', '2026-01-15T10:00:00+00:00',
        '/home/someone/old.json', '2026-01-15T10:05:00+00:00',
'{
 "schema": "pagezero.results",
 "version": 2,
 "machine": {
  "hostname": "old-box",
  "cpu_model": "Test CPU 1",
  "kernel_release": "6.1.0-old"
 },
 "interrupted": false,
 "results": [
  {
   "benchmark": "memset",
   "function": "default",
   "params": {
    "size": 4096,
    "page": "4KB",
    "chunk": 0,
    "loops": 2,
    "thp": false,
    "value": 0
   },
   "bytes_per_loop": 4096,
   "clock": "ns",
   "clock_hz": 1000000000.0,
   "samples": [
    100,
    200
   ],
   "run": {
    "repetition": 0,
    "process": 0
   }
  },
  {
   "benchmark": "memset",
   "function": "default",
   "params": {
    "size": 4096,
    "page": "4KB",
    "chunk": 0,
    "loops": 2,
    "thp": false,
    "value": 0
   },
   "bytes_per_loop": 4096,
   "clock": "ns",
   "clock_hz": 1000000000.0,
   "samples": [
    150,
    150
   ],
   "run": {
    "repetition": 0,
    "process": 1
   }
  }
 ]
}');
INSERT INTO points (set_id, benchmark, function, size, page, label, params, unit, median,
                    spread_pct)
VALUES (1, 'memset', 'default', 4096, '4KB',
        'memset default chunk=0 page=4KB size=4KB thp=false value=0',
        '{"chunk": 0, "loops": 2, "page": "4KB", "size": 4096, "thp": false, "value": 0}',
        'bytes/sec', 27306666666.666668, 29.60719386380686);
