"""scoring.files: reading only regular files within a cap, output folders, atomic writes."""
from __future__ import annotations

import os
import time

import pytest

from scoring.errors import TtrError
from scoring.files import atomic_write, read_capped, writable_dir


def test_read_capped_reads_a_regular_file_and_refuses_the_rest(tmp_path):
    f = tmp_path / "a.json"
    f.write_bytes(b"x" * 100)
    assert read_capped(f, 100) == b"x" * 100
    with pytest.raises(TtrError, match="too large"):
        read_capped(f, 99)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading would wait forever
    t0 = time.perf_counter()
    for path, phrase in ((fifo, "FIFO"), ("/dev/zero", "device"), ("/dev/null", "device"), (tmp_path, "folder"),
                         (f / "under", "a part of the path is a file"), (tmp_path / ("n" * 256), "too long"),
                         (tmp_path / "missing", "no such file"), ("a\0b", "not a usable file name")):
        with pytest.raises(TtrError, match=phrase):
            read_capped(path, 1000, "game file")
    assert time.perf_counter() - t0 < 1


def test_read_capped_stops_at_the_cap_even_if_the_file_grew(tmp_path, monkeypatch):
    f = tmp_path / "grows"
    f.write_bytes(b"y" * 5000)
    real_stat = os.stat

    class Small:  # the size os.stat saw before the file grew
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 10

    monkeypatch.setattr(os, "stat", lambda p, *a, **k: Small(real_stat(p, *a, **k)))
    with pytest.raises(TtrError, match="too large"):
        read_capped(f, 100)


def test_writable_dir_makes_or_refuses(tmp_path):
    assert writable_dir(tmp_path / "a" / "b").is_dir()
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(TtrError, match="is a file"):
        writable_dir(f)
    with pytest.raises(TtrError, match="a part of the path is a file"):
        writable_dir(f / "sub")
    with pytest.raises(TtrError, match="too long"):
        writable_dir(tmp_path / ("d" * 300))
    with pytest.raises(TtrError, match="empty path"):
        writable_dir("")


def test_atomic_write_replaces_whole_or_not_at_all(tmp_path, monkeypatch):
    p = tmp_path / "game.json"
    atomic_write(p, "old\n")
    assert p.read_text() == "old\n"

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(TtrError, match="No space left"):
        atomic_write(p, "new\n")
    monkeypatch.undo()
    assert p.read_text() == "old\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["game.json"]  # no temporary left behind
    with pytest.raises(TtrError, match="too long"):
        atomic_write(tmp_path / ("f" * 300), "x")
