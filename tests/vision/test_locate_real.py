"""The locator on the real development photos (skipped when ../shared is absent).

Bar from the issue: mean corner error within 0.5 % of the board diagonal, orientation always right.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

DEV = Path(__file__).resolve().parents[3] / "shared" / "real" / "dev"

pytestmark = pytest.mark.skipif(not (DEV / "gt").is_dir(), reason="real dev photos (../shared) not present")


def _cases():
    if not (DEV / "gt").is_dir():
        return []
    return sorted(p.stem for p in (DEV / "gt").glob("*.json"))


@pytest.fixture(scope="module")
def results():
    from vision.image_io import load_photo
    from vision.locate import locate_board

    out = {}
    for name in _cases():
        truth = json.loads((DEV / "gt" / f"{name}.json").read_text())
        img = load_photo(DEV / truth["photo"])
        loc = locate_board(img)
        t = np.asarray(truth["corners"], float)
        diag = 0.5 * (np.linalg.norm(t[0] - t[2]) + np.linalg.norm(t[1] - t[3]))
        err = np.linalg.norm(loc.corners_xy - t, axis=1) / diag * 100
        out[name] = (err, loc)
    return out


@pytest.mark.parametrize("name", _cases())
def test_each_dev_photo(results, name):
    err, loc = results[name]
    assert err.max() < 1.0, f"{name}: corner errors {np.round(err, 2)} % of diagonal"
    assert loc.orientation == 0  # every dev photo shows the board upright


def test_mean_corner_error_within_bar(results):
    mean = float(np.mean([e.mean() for e, _ in results.values()]))
    assert mean <= 0.5


def test_turned_photo_keeps_board_order(results):
    """A dev photo turned a quarter: the same physical corners, in the board's order."""
    import cv2

    from vision.image_io import load_photo
    from vision.locate import locate_board

    truth = json.loads((DEV / "gt" / "IMG_4134_small.json").read_text())
    img = cv2.rotate(load_photo(DEV / truth["photo"]), cv2.ROTATE_90_CLOCKWISE)
    h = img.shape[1]  # height of the original
    t = np.asarray(truth["corners"], float)
    turned = np.column_stack([h - 1 - t[:, 1], t[:, 0]])
    loc = locate_board(img)
    assert loc.orientation == 90
    diag = np.linalg.norm(turned[0] - turned[2])
    assert np.linalg.norm(loc.corners_xy - turned, axis=1).mean() / diag * 100 < 0.5


def test_a_real_board_on_a_checked_cloth_is_found_by_all_of_its_print():
    """A development board photographed again on a checked cloth (benchmarks/rephotograph.py,
    seed 5656): the colour outline finds the cloth, and the cloth's corners fill the print match's
    first 2000 features; the last try, every feature, finds the board. Seen at 0.79 px/mm in a 3 MP
    frame, it is found as well by the search for a board small in the frame, which comes after."""
    import dataclasses

    import cv2

    from vision.image_io import load_photo
    from vision.locate import BoardNotFound, LocateConfig, locate_board
    from vision.synth.render import photograph_again

    truth = json.loads((DEV / "gt" / "IMG_4169.json").read_text())
    again = photograph_again(np.random.default_rng([5656, 7, 3]), load_photo(DEV / truth["photo"]),
                             truth["corners"], "hostile")
    assert again.scene.kind == "checked"  # else this test would not test what it says
    photo = cv2.imdecode(np.frombuffer(again.jpeg, np.uint8), cv2.IMREAD_COLOR)
    loc = locate_board(photo)
    t = np.asarray(again.corners_xy, float)
    diag = 0.5 * (np.linalg.norm(t[0] - t[2]) + np.linalg.norm(t[1] - t[3]))

    def off_pct(corners):
        return (np.linalg.norm(corners - t, axis=1) / diag * 100).max()

    assert off_pct(loc.corners_xy) < 1.0
    cfg = LocateConfig()
    first_only = dataclasses.replace(cfg, match=dataclasses.replace(cfg.match, last_features=cfg.match.features))
    assert off_pct(locate_board(photo, first_only).corners_xy) < 1.0  # by the small board's search
    with pytest.raises(BoardNotFound):  # neither: refused
        locate_board(photo, dataclasses.replace(first_only, smallest_px_per_mm=cfg.min_px_per_mm))
