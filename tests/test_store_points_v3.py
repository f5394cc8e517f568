"""A store of version 2 migrated: its points recomputed under results/points.py's identity."""

import json
import sqlite3

from pagezero.results.resultset import Result, ResultSet
from pagezero.store import SCHEMA_VERSION, Store


def batch_set(path, batch):
    params = {"size": 64 << 20, "batch": batch, "batch_bytes": 32 << 20, "loops": 2}
    ResultSet(
        [
            Result(
                benchmark="batch-like",
                function="k",
                params=params,
                bytes_per_loop=64 << 20,
                clock="ns",
                samples=[10**7, 2 * 10**7],
                machine={"hostname": "box"},
            )
        ]
    ).save(path)
    return path


def test_version_2_points_are_recomputed(tmp_path):
    db = str(tmp_path / "s.sqlite")
    with Store(db, create=True) as s:
        s.add([batch_set(str(tmp_path / "a.json"), "32MB")])
    # As version 2 stored it: the label spelled batch_bytes in bytes.
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("UPDATE points SET label = 'old label'")
    # A document that no longer reads (a loop of 0 ticks) keeps its old points.
    doc = json.loads(con.execute("SELECT document FROM result_sets").fetchone()[0])
    doc["results"][0]["samples"] = [0, 5]
    con.execute(
        "INSERT INTO result_sets (content_hash, machine_name, benchmarks, measured_at, "
        "added_at, document) VALUES ('h', 'box', 'batch-like', 't', 't', ?)",
        (json.dumps(doc),),
    )
    set_id = con.execute("SELECT id FROM result_sets WHERE content_hash = 'h'").fetchone()[0]
    con.execute(
        "INSERT INTO points (set_id, benchmark, function, label, params, unit, median, "
        "spread_pct, runs, spread_of) VALUES (?, 'batch-like', 'k', 'kept', '{}', "
        "'bytes/sec', 1.0, 0.0, 1, 'loops')",
        (set_id,),
    )
    con.execute("UPDATE pagezero_store SET version = 2")
    con.close()
    with Store(db) as s:
        labels = sorted(row["label"] for row in s.history())
    version = sqlite3.connect(db).execute("SELECT version FROM pagezero_store").fetchone()
    assert version == (SCHEMA_VERSION,)  # migrated forward
    assert labels == ["batch-like k batch=32MB batch_bytes=32MB size=64MB", "kept"]


def test_one_point_however_the_batch_is_spelled(tmp_path):
    db = str(tmp_path / "s.sqlite")
    with Store(db, create=True) as s:
        s.add(
            [
                batch_set(str(tmp_path / "a.json"), "32MB"),
                batch_set(str(tmp_path / "b.json"), 32 << 20),
            ]
        )
        labels = {row["label"] for row in s.history()}
    assert len(labels) == 1
