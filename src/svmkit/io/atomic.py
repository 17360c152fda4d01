"""Atomic file replacement: a failed write never destroys the file it was replacing."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path, mode="w", newline=None):
    """Open a temporary file beside `path` for writing; on success it replaces `path` (one
    rename, atomic on POSIX), on any error it is removed and `path` is left as it was.

    A symbolic link is followed, so its target is replaced and the link kept. A target that
    exists and is not a regular file (a terminal, /dev/stdout, a pipe) is written in place.
    Errors name `path`, not the temporary file. `newline` is open()'s (csv writers want "").
    """
    if Path(path).exists() and not Path(path).is_file():
        with open(path, mode, newline=newline) as fh:
            yield fh
        return
    target = Path(os.path.realpath(path))
    fd, tmp = _temporary_beside(path, target)
    try:
        os.fchmod(fd, _permissions(target))
        with os.fdopen(fd, mode, newline=newline) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        _sync_dir(target.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def check_writable(path) -> None:
    """Raise now the OSError that `atomic_write(path)` would raise (a missing or read-only folder,
    a folder in the file's place), so that a command fails before its fit, not after."""
    if Path(path).is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    if Path(path).exists() and not Path(path).is_file():
        return
    fd, tmp = _temporary_beside(path, Path(os.path.realpath(path)))
    os.close(fd)
    os.unlink(tmp)


def _temporary_beside(path, target: Path):
    """mkstemp's (fd, name) of a new hidden file in target's folder; errors name `path`."""
    try:
        return tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None


def _sync_dir(folder: Path) -> None:
    """Make the rename itself durable (where directories can be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _permissions(path: Path) -> int:
    """Keep the replaced file's mode; a new file gets the usual 0o666 less the umask."""
    if path.exists():
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
