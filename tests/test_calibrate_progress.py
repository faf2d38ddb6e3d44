"""`ttr calibrate` shows its progress on stderr when that is a terminal, and stdout stays the summary."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EMPTY = ROOT.parent / "shared" / "real" / "dev" / "IMG_4169_small.jpg"
TTR = shutil.which("ttr", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])) or "ttr"


@pytest.mark.skipif(not EMPTY.exists(), reason="../shared/real (an empty board's photo) is not there")
def test_calibrate_shows_progress_on_a_terminal(tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal's size
    proc = subprocess.Popen([TTR, "calibrate", str(EMPTY), "--out", str(tmp_path / "cal")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    out, _ = proc.communicate(timeout=300)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert proc.returncode == 0, err
    assert out.strip().splitlines()[-1].startswith("calibrated 1 photo(s):")
    text = err.decode(errors="replace")
    assert "calibrating" in text and "2/2" in text, text
