"""What a fleet's client asks every worker first, at this path in every pagezero since the
fleet began, so that a worker of another version is told apart and refused (fleet run)."""

__all__ = ["installed_version"]


def installed_version():
    """``pagezero.__version__`` on this machine (run on each worker)."""
    from pagezero import __version__

    return __version__
