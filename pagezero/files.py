"""Reading sysfs's and procfs's small files; writing files a crash leaves old or new, whole."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable
from typing import IO, Any


def read_text(path: str) -> str | None:
    """A small file's text, stripped; None where it cannot be read."""
    try:
        with open(path) as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def read_int(path: str) -> int | None:
    """A file holding one integer (sysfs's counts and sizes), or None."""
    text = read_text(path) or ""
    return int(text) if text.lstrip("-").isdigit() else None


def writable_parent(path: str, verb: str = "write", folder: bool = False) -> str:
    """The directory to write `path` (a file, or a `folder`) in; ValueError, "cannot VERB
    PATH: why", where there is none or it cannot be written."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValueError(f"cannot {verb} {path!r}: no directory {parent!r}")
    if folder and os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"cannot {verb} {path!r}: it is a file, not a folder")
    if not folder and os.path.isdir(path):
        raise ValueError(f"cannot {verb} {path!r}: it is a directory (name a file in it)")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"cannot {verb} {path!r}: directory {parent!r} is not writable")
    return parent


def entries(folder: str, pattern: str) -> list[re.Match[str]]:
    """The entries of `folder` that `pattern` matches whole, as matches sorted by name."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [m for name in names if (m := re.fullmatch(pattern, name))]


def current_umask() -> int:
    """The umask, read from /proc/self/status so that no other thread sees it changed."""
    if m := re.search(r"^Umask:\s+([0-7]+)$", read_text("/proc/self/status") or "", re.M):
        return int(m[1], 8)
    umask = os.umask(0o022)  # before Linux 4.7: set and restore
    os.umask(umask)
    return umask


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[str]], Any]) -> None:
    """write(file) on a synced temporary file beside `path`, renamed into place (0666 & ~umask)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".pagezero-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            os.fchmod(f.fileno(), 0o666 & ~current_umask())  # mkstemp: 0600; results are shared
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        # A signal can land just after the rename, when tmp is gone already.
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    # The folder synced too where it can be (some network file systems: EINVAL); the rename stands.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
