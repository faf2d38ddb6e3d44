"""Warnings with codes (`vision.reading.Notice`): their text is what `ttr detect --json` lists and
people read; the page matches the code (the doubtful tracks' warning is the track list's, not a
warning box), keeps it through a save, and codes the plain-text one of games saved before."""
from __future__ import annotations

import numpy as np
import pytest

from app import state as S
from scoring.board import load_board
from vision.reading import DOUBTFUL_TRACKS, BoardLocation, Notice, Reading, TrackReading

BOARD = load_board()
DOUBT = "1 doubtful track(s), please check: Atlanta-Charleston (gray)"
DARK = "the photo is dark: more light would make the reading surer"


def reading(warnings, doubtful=(0,)) -> Reading:
    tracks = [TrackReading(t.id, t.a, t.b, t.color, t.length, None, 0.5 if t.id in doubtful else 0.99,
                           np.full((t.length, 6), 1 / 6), doubtful=t.id in doubtful) for t in BOARD.tracks]
    where = BoardLocation(np.array([[0, 0], [10, 0], [10, 7], [0, 7]], float), 0, 1.0)
    return Reading("photo.jpg", where, tracks, np.zeros((4, 6, 3), np.uint8), 2.0, list(warnings))


def test_a_notice_is_its_text():
    n = Notice(DOUBTFUL_TRACKS, DOUBT)
    assert str(n) == f"{n}" == DOUBT
    assert Notice.of(DARK) == Notice("", DARK) and Notice.of(n) is n
    # the JSON lists the texts, coded or not
    assert reading([DARK, n]).to_dict()["warnings"] == [DARK, DOUBT]


def test_the_page_keeps_codes_through_a_save():
    photo = S.photo_check(reading([Notice(DOUBTFUL_TRACKS, DOUBT), DARK]))
    assert [w.code for w in photo.warnings] == [DOUBTFUL_TRACKS, ""]
    saved = photo.to_json()
    assert saved["warnings"] == [{"code": DOUBTFUL_TRACKS, "text": DOUBT}, DARK]  # plain text stays text
    assert S.PhotoCheck.from_json(saved).warnings == photo.warnings


@pytest.mark.parametrize("doubtful", [(0,), ()])
def test_a_game_saved_before_codes(doubtful):
    """Then the reader's last warning named the doubtful tracks, and only when there were some."""
    warnings = [DARK, DOUBT] if doubtful else [DARK]
    saved = S.photo_check(reading([], doubtful)).to_json() | {"warnings": warnings}
    got = S.PhotoCheck.from_json(saved).warnings
    assert [w.text for w in got] == warnings
    assert [w.code for w in got] == ([""] + [DOUBTFUL_TRACKS] * bool(doubtful))


def test_the_page_shows_every_warning_but_the_doubtful_tracks_one():
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from app.launch import PAGE

    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    photo = S.photo_check(reading([Notice(DOUBTFUL_TRACKS, DOUBT), DARK]))  # (coded, so not last)
    at.session_state["photo_check"] = photo
    at.session_state["owners"] = photo.owners()
    at.run()
    assert not at.exception, at.exception
    shown = [str(w.value) for w in at.warning]
    assert DARK in shown and not any("doubtful track" in w for w in shown)
