"""`ttr render --backgrounds hostile`: checked cloths, dark stone, red-brown wood, table edges, tiles,
and boxes, card fans and hands around the board. The truth must stay exact whatever lies around it."""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.cli import main as ttr
from app.commands import render as synth_cli
from scoring.board import load_board
from vision.synth import camera as cam
from vision.synth import trains
from vision.synth.board_art import BOARD_MM
from vision.synth.positions import random_position
from vision.synth.render import render_photo

BOARD = load_board()
SIZE = (800, 600)


def _flat(seed: int, ppm: float = 1.0) -> np.ndarray:
    """A random 'board' (every pixel different), so equal pixels mean the board's own pixels."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (round(BOARD_MM[1] * ppm), round(BOARD_MM[0] * ppm), 3), dtype=np.uint8)


def _board_mm_of_pixels(camera: cam.Camera, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    pts = np.stack([xs, ys], 1).astype(np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, np.linalg.inv(camera.H_mm)).reshape(-1, 2)


def _inner_mask(camera: cam.Camera, inset_mm: float) -> np.ndarray:
    w, h = camera.size_wh
    m = np.zeros((h, w), np.uint8)
    q = np.array([[inset_mm, inset_mm], [BOARD_MM[0] - inset_mm, inset_mm],
                  [BOARD_MM[0] - inset_mm, BOARD_MM[1] - inset_mm], [inset_mm, BOARD_MM[1] - inset_mm]])
    cv2.fillConvexPoly(m, np.round(camera.project(q)).astype(np.int32), 255)
    return m > 0


@pytest.mark.parametrize("kind", cam.HOSTILE_KINDS)
def test_each_kind_renders_what_was_asked_with_the_board_in_the_frame(kind):
    rng = np.random.default_rng([31, cam.HOSTILE_KINDS.index(kind)])
    r = render_photo(rng, random_position(rng, BOARD), SIZE, backgrounds=kind)
    assert r.scene.kind == kind
    assert r.image_bgr.shape == (SIZE[1], SIZE[0], 3)
    c = np.array(r.truth["corners"])
    assert (c >= 0).all() and (c[:, 0] <= SIZE[0]).all() and (c[:, 1] <= SIZE[1]).all()
    assert set(r.scene.clutter) <= {"cards", "fan", "box", "hand", "card_over"}
    assert r.scene.over_mask is not None and r.scene.over_mask.shape == (SIZE[1], SIZE[0])


def test_hostile_draws_only_hostile_kinds_and_all_of_them():
    camera = cam.random_camera(np.random.default_rng(0), SIZE)
    kinds = [cam._Hostile(np.random.default_rng(s), camera, "hostile").kind for s in range(80)]
    assert set(kinds) == set(cam.HOSTILE_KINDS)
    plans = [cam._Hostile(np.random.default_rng(s), camera, "hostile").plan for s in range(80)]
    assert np.mean([any(p.values()) for p in plans]) > 0.75  # clutter more often than not
    with pytest.raises(ValueError):
        cam._Hostile(np.random.default_rng(0), camera, "velvet")


def test_cli_choices_are_the_renderers():
    assert synth_cli.BACKGROUNDS == cam.BACKGROUNDS
    assert synth_cli.HANDS == tuple(trains.HANDS)


@pytest.mark.parametrize("seed", [3, 4])
def test_the_board_pixels_do_not_depend_on_the_background(seed):
    """Same photo seed, two tables: inside the board (clear of what may lie over its edge) the
    photos are identical to the bit; outside they are not."""
    flat = _flat(seed)
    camera = cam.random_camera(np.random.default_rng([seed, 1]), SIZE)
    shots = {k: cam.photograph_scene(np.random.default_rng([seed, 2]), flat, 1.0, camera, k)
             for k in ("checked", "stone", "table_edge")}
    inner = _inner_mask(camera, cam.SHADOW_REACH_MM + 8)
    assert inner.sum() > 0.1 * inner.size
    outside = ~_inner_mask(camera, -30)
    ref, _ = shots["checked"]
    for kind, (img, scene) in shots.items():
        assert scene.kind == kind
        assert np.array_equal(img[inner], ref[inner]), kind
        if kind != "checked":
            diff = np.abs(img.astype(int) - ref.astype(int)).mean(axis=2)
            assert diff[outside].mean() > 10, kind


def _seed_with(part: str, camera: cam.Camera, start: int) -> int:
    return next(s for s in range(start, start + 200)
                if cam._Hostile(np.random.default_rng(s), camera, "stone").plan[part])


@pytest.mark.parametrize("part,start", [("hand", 0), ("hand", 500), ("card_over", 0), ("card_over", 500)])
def test_what_lies_over_the_edge_stays_on_the_score_band(part, start, monkeypatch):
    """Hands and cards cover the board only within REACH_MM of its edge (their shadows within
    SHADOW_REACH_MM), and the scene's over mask says truly where they changed the board."""
    camera = cam.random_camera(np.random.default_rng([start, 7]), SIZE, fill=0.8)
    seed = _seed_with(part, camera, start)
    flat = _flat(seed)
    img, scene = cam.photograph_scene(np.random.default_rng(seed), flat, 1.0, camera, "stone")
    assert part in scene.clutter
    ys, xs = np.nonzero(scene.over_mask)
    mm = _board_mm_of_pixels(camera, ys, xs)
    inside = (mm[:, 0] > 0) & (mm[:, 0] < BOARD_MM[0]) & (mm[:, 1] > 0) & (mm[:, 1] < BOARD_MM[1])
    assert inside.sum() > 20, "nothing reaches over the board's edge"
    depth = np.minimum.reduce([mm[inside, 0], mm[inside, 1], BOARD_MM[0] - mm[inside, 0], BOARD_MM[1] - mm[inside, 1]])
    px_mm = BOARD_MM[0] / np.linalg.norm(camera.corners_xy[1] - camera.corners_xy[0])  # one pixel, in mm
    assert depth.max() <= cam.SHADOW_REACH_MM + 2 * px_mm
    # The same photo with nothing over the board: it differs only under the over mask.
    monkeypatch.setattr(cam._Hostile, "over", lambda self, img: None)
    bare, bare_scene = cam.photograph_scene(np.random.default_rng(seed), flat, 1.0, camera, "stone")
    assert not bare_scene.over_mask.any()
    board = _inner_mask(camera, 4)
    changed = (np.abs(img.astype(int) - bare.astype(int)).max(axis=2) > 0) & board
    covered = cv2.dilate(scene.over_mask, np.ones((9, 9), np.uint8)) > 0
    assert changed.sum() > 20
    assert not (changed & ~covered).any()


def _render(tmp_path: Path, name: str, *args: str) -> Path:
    out = tmp_path / name
    assert ttr(["render", "--out", str(out), "--size", "800x600", *args]) == 0
    return out


def test_cli_hostile_set_repeats_bit_for_bit_and_records_the_table(tmp_path):
    a = _render(tmp_path, "a", "--count", "3", "--seed", "1212", "--backgrounds", "hostile")
    b = _render(tmp_path, "b", "--count", "3", "--seed", "1212", "--backgrounds", "hostile")
    c = _render(tmp_path, "c", "--count", "1", "--seed", "1213", "--backgrounds", "hostile")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) == 9
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert (a / "render_1212_00000.jpg").read_bytes() != (c / "render_1213_00000.jpg").read_bytes()
    for f in sorted((a / "gt").glob("*.json")):
        truth = json.loads(f.read_text())
        assert truth["background"]["kind"] in cam.HOSTILE_KINDS
        assert truth["image_size"] == [800, 600]
        img = cv2.imread(str(a / truth["photo"]))
        assert img.shape == (600, 800, 3)


def test_cli_one_kind_and_the_usual_truth_format(tmp_path):
    s = _render(tmp_path, "s", "--count", "2", "--seed", "5", "--backgrounds", "redwood")
    kinds = {json.loads(f.read_text())["background"]["kind"] for f in (s / "gt").glob("*.json")}
    assert kinds == {"redwood"}
    u = _render(tmp_path, "u", "--count", "1", "--seed", "5")
    truth = json.loads(next((u / "gt").glob("*.json")).read_text())
    assert "background" not in truth  # usual renders' truth files are as they always were


def test_cli_flat_refuses_backgrounds(tmp_path, capsys):
    assert ttr(["render", "--out", str(tmp_path / "f"), "--flat", "--backgrounds", "stone"]) != 0
    assert "--backgrounds" in capsys.readouterr().err
