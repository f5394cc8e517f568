"""Writing files so that a crash, a signal or a power loss leaves the old file
or the new one, whole: write beside it, sync, rename into place, sync the
folder (the sequence rename(2) and fsync(2) leave to the caller)."""

import os
import tempfile

__all__ = ["atomic_write", "current_umask"]


def current_umask():
    """The process's umask, read from /proc/self/status ("Umask:", Linux 4.7 and
    later) so that no other thread ever sees it changed; elsewhere, the old
    set-and-restore of os.umask."""
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


def _fsync_folder(directory):
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


def atomic_write(path, write):
    """Call write(file) on a temporary file beside `path`, then rename it into
    place: a crash or Ctrl-C leaves the old file or none, never half a file.
    The file is synced before the rename and its folder after it, so a power
    loss cannot leave the new name pointing at blocks never written."""
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
