"""Reading and writing the project's files safely: what a hostile or mistaken path can do is one line.

- `read_capped(path, limit, what)` -> bytes: only a regular file, checked with `os.stat` before it
  is opened (a FIFO is never opened, a device or folder never read), at most `limit` bytes (the
  size is checked before reading, and the read itself stops at `limit + 1`, so a file that grows
  meanwhile cannot blow up memory).
- `writable_dir(path, what)` -> Path: an output folder, made if missing; `TtrError` if it is a
  file, under a file, or not writable.
- `atomic_write(path, data)`: write to a temporary name in the same folder, then rename, so a
  failure never leaves half a file where a good one was.

Every failure is a `TtrError` with one line naming the path.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from scoring.errors import TtrError

NAME_MAX = 255  # bytes in one path component on the file systems ttr meets


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n >= 1_000_000 else f"{n / 1e3:.0f} kB"


def _path_problem(path: str, e: OSError | ValueError) -> str:
    """One line for an error from stat/open on `path`."""
    if isinstance(e, ValueError):  # "embedded null byte"
        return f"{path!r}: not a usable file name ({e})"
    if e.errno == errno.ENOENT:
        return f"{path}: no such file"
    if e.errno == errno.ENOTDIR:
        return f"{path}: no such file (a part of the path is a file, not a folder)"
    if e.errno == errno.ENAMETOOLONG:
        return f"{_short_name(path)}: the file name is too long (at most {NAME_MAX} bytes a name)"
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"{path}: permission denied"
    if e.errno == errno.ELOOP:
        return f"{path}: too many symbolic links"
    return f"{path}: cannot read it ({e.strerror or e})"


def _short_name(path: str) -> str:
    return path if len(path) <= 80 else path[:40] + "…" + path[-20:]


def read_capped(path: str | os.PathLike, limit: int, what: str = "file", error=TtrError) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; `error` (a TtrError class) otherwise."""
    name = os.fspath(path)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    try:
        st = os.stat(name)
    except (OSError, ValueError) as e:
        raise error(_path_problem(name, e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{name}: is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
                "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise error(f"{name}: is {kind}, not a {what}; give a regular file")
    if st.st_size > limit:
        raise error(f"{name}: the {what} is too large ({_mb(st.st_size)}; at most {_mb(limit)} are read)")
    try:
        # O_NONBLOCK: should the path have been swapped for a FIFO since the stat, opening it
        # does not wait for a writer; the fstat below then refuses it.
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError) as e:
        raise error(_path_problem(name, e)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise error(f"{name}: is not a regular file, not a {what}; give a regular file")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as e:
        raise error(_path_problem(name, e)) from None
    finally:
        os.close(fd)
    if total > limit:
        raise error(f"{name}: the {what} is too large (more than {_mb(limit)})")
    return b"".join(chunks)


def writable_dir(path: str | os.PathLike, what: str = "output folder", error=TtrError) -> Path:
    """`path` as a folder that exists and can be written to (made, with its parents, if missing)."""
    name = os.fspath(path)
    if not name:
        raise error(f"the {what} is an empty path")
    p = Path(name)
    try:
        if p.exists() and not p.is_dir():
            raise error(f"{name}: is a file; the {what} must be a folder")
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise error(f"{name}: is a file; the {what} must be a folder") from None
    except NotADirectoryError:
        raise error(f"{name}: cannot make the {what} (a part of the path is a file, not a folder)") from None
    except (OSError, ValueError) as e:
        if isinstance(e, OSError) and e.errno == errno.ENAMETOOLONG:
            raise error(f"{_short_name(name)}: the name is too long (at most {NAME_MAX} bytes a name)") from None
        if isinstance(e, OSError) and e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise error(f"{name}: cannot make the {what} (permission denied)") from None
        raise error(f"{_short_name(name)}: cannot make the {what} ({getattr(e, 'strerror', None) or e})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise error(f"{name}: the {what} is not writable (permission denied)")
    return p


def atomic_write(path: str | os.PathLike, data: bytes | str, error=TtrError) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and a rename."""
    p = Path(path)
    if len(os.fsencode(p.name)) > NAME_MAX:
        raise error(f"{_short_name(str(p))}: the file name is too long (at most {NAME_MAX} bytes)")
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=p.suffix)
    except OSError as e:
        raise error(f"{p.parent}: cannot write there ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise error(f"{p}: cannot write it ({e.strerror or e})") from None
    return p
