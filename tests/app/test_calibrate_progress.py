"""`ttr calibrate` shows its progress on stderr when that is a terminal, and stdout stays the summary."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from ttr_testing import run_with_stderr_on_a_terminal

ROOT = Path(__file__).resolve().parents[2]
EMPTY = ROOT.parent / "shared" / "real" / "dev" / "IMG_4169_small.jpg"
TTR = shutil.which("ttr", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])) or "ttr"


@pytest.mark.skipif(not EMPTY.exists(), reason="../shared/real (an empty board's photo) is not there")
def test_calibrate_shows_progress_on_a_terminal(tmp_path):
    rc, out, text = run_with_stderr_on_a_terminal([TTR, "calibrate", str(EMPTY), "--out", str(tmp_path / "cal")], ROOT)
    assert rc == 0, text
    assert out.strip().splitlines()[-1].startswith("calibrated 1 photo(s):")
    assert "calibrating" in text and "2/2" in text, text
