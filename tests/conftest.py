"""Shared test settings: no test writes to the user's own data folder."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_games_database(tmp_path, monkeypatch):
    """Every test gets its own games history (the app saves a game as it changes; `ttr history`
    reads it): tests that name another keep theirs, since they set it after this runs."""
    monkeypatch.setenv("TTR_HISTORY_DB", str(tmp_path / "history.sqlite"))
