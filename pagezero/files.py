"""Writing files so that a crash, a signal or a power loss leaves the old file
or the new one, whole: write beside it, sync, rename into place, sync the
folder (the sequence rename(2) and fsync(2) leave to the caller)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import IO, Any

__all__ = ["atomic_write", "current_umask"]


def current_umask() -> int:
    """The process's umask, read so that no other thread ever sees it changed.

    Read from /proc/self/status ("Umask:", Linux 4.7 and later); elsewhere, the
    old set-and-restore of :func:`os.umask`.

    Returns
    -------
    int
        The umask's permission bits (for example ``0o022``).
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _fsync_folder(directory: str) -> None:
    """Make a rename in `directory` durable (rename(2) says nothing of the disk)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # a folder that cannot be opened for reading: the rename stands
    try:
        os.fsync(fd)
    except OSError:
        pass  # file systems that cannot sync a folder (some network ones) say EINVAL
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[str]], Any]) -> None:
    """Call write(file) on a temporary file beside `path`, then rename it into place.

    A crash or Ctrl-C leaves the old file or none, never half a file. The file
    is synced before the rename and its folder after it, so a power loss cannot
    leave the new name pointing at blocks never written. The file gets the
    permissions the umask allows (0666 & ~umask), not mkstemp's 0600.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (replaced whole if it exists).
    write : callable
        Called once with the temporary file, open for writing text
        (``newline=""``); its return value is ignored.

    Raises
    ------
    OSError
        The folder cannot take a new file, or writing, syncing or renaming
        failed; the temporary file is removed. Whatever `write` raises (a
        signal's exception included) reaches the caller as itself.
    """
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
        # A signal can land just after the rename, when tmp is gone already:
        # it must still reach the caller as itself, not as FileNotFoundError.
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_folder(directory)
