"""Photos of the bundled example's board from other sides, and of another game, for the tests of
several photos read together (AppTest and the real browser). The example is a render of a known
position (examples/board.truth.json): the project's renderer photographs that position again from
other cameras; other claims give another position. Written into a temporary folder, once a run.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from scoring.board import load_board
from vision.read import Reader
from vision.synth.positions import random_position
from vision.synth.render import owners_from_truth, render_photo

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "board.jpg"


# The app's flows of doubt (a doubtful track checked, fixed, taken for nobody against the score
# track) need a photo the reader doubts. Read with the car-or-print check and the car-colour net,
# the bundled example has no doubt left; read without them, several (Atlanta - New Orleans: yellow
# cars on yellow print). So the app's tests, and the app they serve, read without both
# (TTR_OCCUPANCY_MODEL=none, TTR_CAR_COLOUR_MODEL=none); the two are tested in
# tests/vision/test_occupancy.py and test_car_colour.py.
# Set before each app test's fixtures (session-scoped ones included), taken away after the last.
WITHOUT = ("TTR_OCCUPANCY_MODEL", "TTR_CAR_COLOUR_MODEL")
_APP_DIR = Path(__file__).resolve().parent
_BEFORE = {env: os.environ.get(env) for env in WITHOUT}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    for env in WITHOUT:
        os.environ[env] = "none"


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    if nextitem is None or _APP_DIR not in Path(str(nextitem.path)).resolve().parents:
        for env, before in _BEFORE.items():
            if before is None:
                os.environ.pop(env, None)
            else:
                os.environ[env] = before


@dataclass(frozen=True)
class BoardPhotos:
    """The example's position photographed again, and another position."""

    side: Path  # from another camera, with one track the example reads sure left empty (`emptied`)
    third: Path  # from a third camera, as the example
    other: Path  # another game position
    emptied: int  # the track id the side photo shows without its cars


def example_claims() -> dict[str, list[int]]:
    """The example's position (a gray double held by two players: each lane as the truth lists it)."""
    board = load_board()
    truth = owners_from_truth(board, json.loads((ROOT / "examples" / "board.truth.json").read_text()))
    claims: dict[str, list[int]] = {}
    for tid, owner in enumerate(truth.owner):
        if owner:
            claims.setdefault(owner, []).append(tid)
    for ids, owners in truth.unsure:
        for tid, owner in zip(ids, owners):
            if owner:
                claims.setdefault(owner, []).append(tid)
    return claims


@pytest.fixture(scope="session")
def board_photos(tmp_path_factory) -> BoardPhotos:
    board = load_board()
    example = Reader().read_path(str(EXAMPLE))
    # the longest single track the example reads sure: the side photo shows it empty, so the
    # photos disagree there, both sure
    emptied = max((t for t in example.tracks if t.owner and not t.doubtful and board.double_ids[t.track_id] < 0),
                  key=lambda t: (t.length, t.confidence)).track_id
    claims = example_claims()
    folder = tmp_path_factory.mktemp("board_photos")
    out = {}
    for name, rng_seed, position in (
            ("side.jpg", 1, {c: [t for t in ids if t != emptied] for c, ids in claims.items()}),
            ("third.jpg", 2, claims),
            ("other.jpg", 7, random_position(np.random.default_rng(5), board))):
        path = folder / name
        path.write_bytes(render_photo(np.random.default_rng(rng_seed), position, (1600, 1200)).jpeg)
        out[name.split(".")[0]] = path
    return BoardPhotos(emptied=emptied, **out)
