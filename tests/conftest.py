"""Shared test settings: no test reads or writes the user's own folders.

Before anything is collected, HOME, the XDG folders and every folder ttr itself keeps (games
history, calibrations, Ultralytics' settings) point into one temporary folder for the session, so
module-scoped pages and subprocesses (`ttr ...`, a served app) see it too; each test then gets its
own games history. `.ci/run` checks that a run leaves an empty HOME empty.
"""
from __future__ import annotations

import os
import shutil
import site
import tempfile
from pathlib import Path

import pytest

_SESSION_HOME: Path | None = None


def pytest_configure(config):
    global _SESSION_HOME
    _SESSION_HOME = Path(tempfile.mkdtemp(prefix="ttr-tests-"))
    home = _SESSION_HOME / "home"
    home.mkdir()
    if site.ENABLE_USER_SITE and Path(site.getusersitepackages()).is_dir():
        # a `pip install --user` copy stays importable in subprocesses once HOME moves
        os.environ.setdefault("PYTHONUSERBASE", site.getuserbase())
    os.environ.update({
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "APPDATA": str(home / "AppData" / "Roaming"),
        "TTR_HISTORY_DB": str(_SESSION_HOME / "history.sqlite"),
        "TTR_CALIBRATION_DIR": str(_SESSION_HOME / "calibration"),
        "YOLO_CONFIG_DIR": str(_SESSION_HOME / "ultralytics"),
    })


def pytest_unconfigure(config):
    if _SESSION_HOME is not None:
        shutil.rmtree(_SESSION_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_games_database(tmp_path, monkeypatch):
    """Every test gets its own games history (the app saves a game as it changes; `ttr history`
    reads it): tests that name another keep theirs, since they set it after this runs."""
    monkeypatch.setenv("TTR_HISTORY_DB", str(tmp_path / "history.sqlite"))
