"""`benchmarks/relight.py` on a rendered photo taken as a labelled real one: empty print moved as
the world's inks say, cars kept (or re-shaded as drawn), and the truth's corners right after a
16:9 crop."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.template import load_template
from scoring.board import load_board
from vision.light import light_board
from vision.rectify import flatten
from vision.spaces import inner_mean_lab
from vision.synth.camera import random_camera
from vision.synth.positions import random_position
from vision.synth.relight import relight
from vision.synth.render import default_model, render_flat_board, render_photo, truth_dict
from vision.synth.trains import SLOPPY, Hands
from vision.synth.world import Cars, Ink, Light, Phone, PrintRun, bgr_to_lab, paper_of, random_world

ROOT = Path(__file__).resolve().parents[2]
BOARD = load_board()
SPACES = load_template().all_spaces()
PRINTED = default_model().printed_bgr
COLOURS = np.array([BOARD.tracks[t].color for t in SPACES.track_ids])
OVERHEAD = np.array([397.0, 262.0, 5000.0])  # a camera straight above: no parallax on the cars


@pytest.fixture(scope="module")
def source():
    """A rendered 1600x1200 photo of a 4-player game, the board filling ~60 % of the frame, seen at
    a slant, its cars laid up to 3.5 mm off their spaces: cars overhang empty lanes beside them."""
    rng = np.random.default_rng(31)
    claims = random_position(rng, BOARD, 4)
    camera = random_camera(rng, (1600, 1200), fill=0.6, tilt_deg=30.0, turn_deg=0.0)
    r = render_photo(rng, claims, (1600, 1200), camera=camera, quality=95, hands=SLOPPY)
    return r.image_bgr, r.truth, claims


def _seen(image, corners, evened=True):
    """(309, 3) CIE Lab of each space's middle, the paper evened out (the reader's view) or not,
    and the paper's Lab as relight measures it."""
    flat = flatten(image, corners, 2.0)
    lit = light_board(flat, SPACES.quads, 2.0)
    lab = inner_mean_lab(lit.board if evened else flat, lit.quads_px)
    paper = bgr_to_lab(paper_of(flat, lit.quads_px, 2.0))
    return np.stack([lab[:, 0] * 100 / 255, lab[:, 1] - 128, lab[:, 2] - 128], axis=1), paper


def _lch(lab):
    return np.array([lab[0], np.hypot(lab[1], lab[2]), np.degrees(np.arctan2(lab[2], lab[1]))])


def _plain_world(image, truth, claims, **parts):
    """A world that changes nothing but `parts`: no cast, no noise, the photo's own frame and
    paper, each player's plastic as the photo shows it."""
    seen, paper = _seen(image, truth["corners"])
    held = {i: p for p, ids in claims.items() for i in ids}
    lch = {}
    for p in claims:
        L, C, h = _lch(np.median(seen[[held.get(int(t)) == p for t in SPACES.track_ids]], axis=0))
        lch[p] = (float(L), float(C), float(h % 360))
    world = random_world([5, 5, 5], PRINTED)
    world = replace(world, print_run=PrintRun({n: Ink() for n in PRINTED}, "cream", (0.0, float(paper[1]),
                                                                                      float(paper[2])), 0.0),
                    light=Light("daylight", 6500.0, 0.0), cars=Cars(lch, 0.0),
                    phone=Phone("phone", (image.shape[1], image.shape[0]), 0.0, 0.0, 0.0, 97))
    return replace(world, **parts)


def _decode(data: bytes):
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)


def test_empty_print_moves_as_drawn_and_the_cars_stay():
    """On a board seen straight on (a flattened photo, as the rectified development ones), its
    cars pushed 3.5 mm to a side of their spaces, over the empty lanes beside them."""
    claims = random_position(np.random.default_rng(31), BOARD, 4)
    pushed = Hands(across_sd_mm=5.0, across_max_mm=3.5, along_sd_mm=1.2, along_max_mm=3.5, track_sd_mm=1.0)
    image = render_flat_board(np.random.default_rng(32), claims, 2.0, camera_mm=OVERHEAD, hands=pushed)
    bare = render_flat_board(np.random.default_rng(32), {}, 2.0, camera_mm=OVERHEAD)  # the same print, no cars
    h, w = image.shape[:2]
    truth = truth_dict(BOARD, claims, np.array([[0, 0], [w, 0], [w, h], [0, h]], float), (w, h))
    inks = {n: Ink() for n in PRINTED}
    inks.update(red=Ink(hue_deg=10.0), green=Ink(hue_deg=15.0, lightness=-6.0), blue=Ink(chroma=0.75),
                yellow=Ink(hue_deg=-6.0), orange=Ink(lightness=6.0), black=Ink(lightness=8.0))
    plain = _plain_world(image, truth, claims)
    world = replace(plain, print_run=replace(plain.print_run, inks=inks))
    r = relight(image, truth, world, np.random.default_rng(0))
    out = _decode(r.jpeg)
    assert out.shape == image.shape and np.allclose(r.truth["corners"], truth["corners"])
    # (measured as printed: evening out a saturated red's paper clips its red channel, and turns it less)
    before, _ = _seen(image, truth["corners"], evened=False)
    after, _ = _seen(out, truth["corners"], evened=False)
    held = np.array([any(int(t) in ids for ids in claims.values()) for t in SPACES.track_ids])
    for name in ("red", "green", "blue", "yellow", "orange", "black"):
        empty = (COLOURS == name) & ~held
        b, a = _lch(np.median(before[empty], axis=0)), _lch(np.median(after[empty], axis=0))
        if name != "black":
            assert abs((a[2] - b[2] + 180) % 360 - 180 - inks[name].hue_deg) < 4.0, name
            assert abs(a[1] / b[1] - inks[name].chroma) < 0.1, name
        assert abs(a[0] - b[0] - inks[name].lightness) < 3.0, name
    # Every pixel of a car (where the bare board differs) is what it was, wherever it stands (as
    # the same JPEG encoder gives it back: its colour subsampling blurs a car's fine lines).
    again = _decode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, world.phone.jpeg_quality])[1].tobytes())
    lab = {k: cv2.cvtColor(v.astype(np.float32) / 255, cv2.COLOR_BGR2Lab) for k, v in
           (("image", again), ("bare", bare), ("out", out))}
    car = np.linalg.norm(lab["image"] - lab["bare"], axis=-1) > 25
    car = cv2.erode(car.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0  # not the anti-aliased rims
    changed = np.linalg.norm(lab["out"] - lab["image"], axis=-1) > 8
    on_empty = np.zeros(car.shape, np.uint8)  # the empty spaces' print, where cars overhang it
    for quad in SPACES.quads[~held]:
        cv2.fillConvexPoly(on_empty, np.round(quad * 2.0 * 16).astype(np.int32), 1, cv2.LINE_8, 4)
    over = car & (on_empty > 0)
    assert car.sum() > 50000 and changed[car].mean() < 0.01
    assert over.sum() > 300 and changed[over].mean() < 0.01


def test_cars_take_the_drawn_plastic(source):
    image, truth, claims = source
    plain = _plain_world(image, truth, claims)
    cars = random_world([7, 0, 1], PRINTED).cars
    r = relight(image, truth, replace(plain, cars=replace(cars, worn=0.0)), np.random.default_rng(0))
    after, _ = _seen(_decode(r.jpeg), r.truth["corners"])
    for player, ids in claims.items():
        L, C, h = cars.lch[player]
        want = np.array([L, C * np.cos(np.radians(h)), C * np.sin(np.radians(h))])
        got = np.median(after[[int(t) in ids for t in SPACES.track_ids]], axis=0)
        assert np.linalg.norm(got - want) < 10, (player, got, want)


@pytest.mark.parametrize("frame", [(1600, 900), (1280, 720)])
def test_a_16_9_frame_keeps_the_board_where_its_corners_say(source, frame):
    image, truth, claims = source
    world = _plain_world(image, truth, claims, phone=Phone("phone", frame, 0.0, 0.0, 0.0, 97))
    r = relight(image, truth, world, np.random.default_rng(3))
    out = _decode(r.jpeg)
    assert (out.shape[1], out.shape[0]) == tuple(r.truth["image_size"]) == frame
    assert r.truth["frame"]["kind"].startswith("cropped to 16:9")
    c = np.array(r.truth["corners"])
    assert (c >= 0).all() and (c[:, 0] <= frame[0]).all() and (c[:, 1] <= frame[1]).all()
    # The board flattened through the new corners is the one flattened through the old.
    a = cv2.cvtColor(flatten(image, truth["corners"], 1.0), cv2.COLOR_BGR2GRAY).astype(np.float32)
    b = cv2.cvtColor(flatten(out, r.truth["corners"], 1.0), cv2.COLOR_BGR2GRAY).astype(np.float32)
    (dx, dy), _ = cv2.phaseCorrelate(a, b)
    assert np.hypot(dx, dy) < 0.25  # a quarter of a millimetre
    assert np.corrcoef(a.ravel(), b.ravel())[0, 1] > 0.97
    # ... and corners a few pixels off show it (the check can fail)
    off = flatten(out, np.array(r.truth["corners"]) + [4, 0], 1.0)
    (dx, _), _ = cv2.phaseCorrelate(a, cv2.cvtColor(off, cv2.COLOR_BGR2GRAY).astype(np.float32))
    assert abs(dx) > 1.0


def test_the_script_writes_a_labelled_set_and_never_into_its_source(source, tmp_path):
    image, truth, _ = source
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "gt").mkdir(parents=True)
    cv2.imwrite(str(src / "board.jpg"), image)
    (src / "gt" / "board.json").write_text(json.dumps(dict(truth, photo="board.jpg")))
    before = sorted(p.name for p in src.rglob("*"))
    script = str(ROOT / "benchmarks" / "relight.py")
    done = subprocess.run([sys.executable, script, str(src), str(out), "--seed", "9100", "--per-photo", "2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in src.rglob("*")) == before
    for i in range(2):
        t = json.loads((out / "gt" / f"board_rl9100_{i:02d}.json").read_text())
        assert t["photo"] == f"board_rl9100_{i:02d}.jpg" and t["source"] == "board.jpg"
        assert t["world"] == random_world([9100, 0, i], PRINTED).to_dict() and t["tracks"] == truth["tracks"]
        img = cv2.imread(str(out / t["photo"]))
        assert [img.shape[1], img.shape[0]] == t["image_size"]
    refused = subprocess.run([sys.executable, script, str(src), str(src / "relit")], capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 2 and "only read" in refused.stderr and not (src / "relit").exists()
