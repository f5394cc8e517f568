"""Results files reach the disk whole (pagezero/files.py atomic_write)."""

import os
import stat

import pytest

from pagezero import files
from pagezero.results.resultset import Result, ResultSet


def one_set():
    return ResultSet(
        [
            Result(
                benchmark="memset",
                function="k",
                params={"size": 4096},
                bytes_per_loop=4096,
                clock="ns",
                samples=[1000, 1100],
            )
        ]
    )


def test_file_and_folder_are_synced(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    one_set().save(str(tmp_path / "r.json"))
    # The file before its rename, then the folder that holds the new name.
    assert synced == [False, True]
    assert ResultSet.load(str(tmp_path / "r.json")).results == one_set().results


def test_umask_is_read_without_changing_it(tmp_path, monkeypatch):
    # os.umask(0) is process-wide: another thread creating a file meanwhile
    # would make it world-writable. /proc/self/status says the umask instead.
    old = os.umask(0o027)
    try:

        def no_umask(mask):
            raise AssertionError(f"os.umask({mask:o}) called")

        monkeypatch.setattr(os, "umask", no_umask)
        assert files.current_umask() == 0o027
        one_set().save(str(tmp_path / "r.json"))
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "r.json").st_mode) == 0o640


def test_without_proc_the_umask_is_still_right(tmp_path, monkeypatch):
    real_open = open

    def no_proc(path, *args, **kwargs):
        if str(path).startswith("/proc/self/status"):
            raise FileNotFoundError(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_proc)
    old = os.umask(0o022)
    try:
        assert files.current_umask() == 0o022
        assert os.umask(0o022) == 0o022  # left as it was
    finally:
        os.umask(old)


def test_a_failed_write_leaves_nothing(tmp_path):
    def broken(f):
        f.write("half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        files.atomic_write(str(tmp_path / "r.json"), broken)
    assert os.listdir(tmp_path) == []


def test_a_place_to_write_is_checked_before_anything_is_written(tmp_path):
    # One check for every output: a file (-o), a folder (fleet run, publish).
    (tmp_path / "f").write_text("x")
    assert files.writable_parent(str(tmp_path / "new.json")) == str(tmp_path)
    assert files.writable_parent(str(tmp_path / "site"), "publish to", folder=True) == str(tmp_path)
    with pytest.raises(ValueError, match=r"cannot write '.*missing/x': no directory"):
        files.writable_parent(str(tmp_path / "missing" / "x"))
    with pytest.raises(ValueError, match=r"cannot publish to '.*f': it is a file, not a folder"):
        files.writable_parent(str(tmp_path / "f"), "publish to", folder=True)
    with pytest.raises(ValueError, match=r"it is a directory \(name a file in it\)"):
        files.writable_parent(str(tmp_path))
    assert list(tmp_path.iterdir()) == [tmp_path / "f"]  # nothing made
