"""`ttr render --world varied`: the usual renders stay what they were, a varied world is drawn within
its ranges, recorded in the truth, and drawn as recorded (print, paper, cars, light)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cli import main as ttr
from calibration.template import load_template
from scoring.board import load_board
from vision.image_io import read_header
from vision.light import light_board
from vision.spaces import inner_mean_lab
from vision.synth.camera import with_flash_tag
from vision.synth.positions import random_position
from vision.synth.render import default_model, render_flat_board
from vision.synth.world import (
    GRAIN_RANGE,
    INK_CHROMA,
    INK_HUE_DEG,
    INK_LIGHTNESS,
    LIGHTS,
    MIN_INK_DE,
    MIN_PLASTIC_DE,
    NEUTRAL_INKS,
    PAPERS,
    PLASTIC_BGR_RANGE,
    PLASTIC_LCH,
    SHARPEN_RANGE,
    WORN_CHROMA,
    Ink,
    Light,
    PrintRun,
    bgr_to_lab,
    cast_bgr,
    lab_to_bgr,
    light_gain,
    move_ink,
    paper_grain,
    random_world,
    rendition_matrix,
    sharpen,
)

BOARD = load_board()
SPACES = load_template().all_spaces()
PRINTED = default_model().printed_bgr
OVERHEAD = np.array([397.0, 262.0, 5000.0])  # a camera straight above: no parallax on the cars

# sha256 of the JPEGs `ttr render` wrote before the varied world existed (commit 569638e), with the
# libraries of that run: a JPEG encoder or a warp of another version gives other bytes.
MADE_WITH = {"cv2": "5.1.0", "numpy": "2.4.6"}
USUAL_2026 = ["f626f5fae979abcce63c000b8ca78197a8374fbc3d06c904bfcd7bc132846f33",
              "a75ea16c6450c243c236ec6253725de9965f9f2e3153354df2812645efdb01bf",
              "92c351f4538e64c671e6b92f960ef9ca47390b8555a3d1962830958e876dca0e",
              "c76bc72a7e3e06b7eac158f092cd7070a72b809e1b642a7ad149515b09b66b4c",
              "35cb2555b009d6a6db5d0297dc7873353c945d99df29113c457db44d31bf533f",
              "f2651333f6b2d959785d4542cba6fd93736e898475eb58516edfa31b078d32e5"]
HOSTILE_1212 = ["7b873d640b9dba2c20d242137e7b9abad24c10e5755cfec6d4fb7ef0942e7501",
                "bdbca1c3bb159fa6470fe0417b361acfe925d45aab956bd800d0048f939ec52f",
                "42c8154ec222db073d1f8aacc958b6934ebbf740a6719c58d666b41516a609a6",
                "1c46d1ca0ae9caf5a494c591d20b49bc9f295206af5510f53a64bc7e2c707470"]


def _same_libraries():
    if cv2.__version__ != MADE_WITH["cv2"] or np.__version__ != MADE_WITH["numpy"]:
        pytest.skip(f"hashes recorded with {MADE_WITH}; here cv2 {cv2.__version__}, numpy {np.__version__}")


@pytest.mark.parametrize("args, hashes", [
    (["--count", "6", "--seed", "2026"], USUAL_2026),
    (["--count", "4", "--seed", "1212", "--backgrounds", "hostile"], HOSTILE_1212),
], ids=["usual", "hostile"])
def test_the_usual_world_renders_what_it_always_did(tmp_path, args, hashes):
    _same_libraries()
    assert ttr(["render", "--out", str(tmp_path)] + args) == 0
    got = [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(tmp_path.glob("*.jpg"))]
    assert got == hashes
    assert not any("world" in json.loads(p.read_text()) for p in (tmp_path / "gt").glob("*.json"))
    assert all(read_header(str(p)).flash_fired is None for p in tmp_path.glob("*.jpg"))  # no phone's tags


def _lch(lab):
    lab = np.asarray(lab, float)
    return np.array([lab[..., 0], np.hypot(lab[..., 1], lab[..., 2]), np.degrees(np.arctan2(lab[..., 2], lab[..., 1]))])


def _seen(flat: np.ndarray) -> np.ndarray:
    """(309, 3) CIE Lab of each space's middle once the paper is evened out, as the reader sees it."""
    lit = light_board(flat, SPACES.quads, 2.0)
    lab = inner_mean_lab(lit.board, lit.quads_px)
    return np.stack([lab[:, 0] * 100 / 255, lab[:, 1] - 128, lab[:, 2] - 128], axis=1)


def _world(**parts):
    return replace(random_world([1, 2, 3], PRINTED), **parts)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 99999))
def test_a_world_is_drawn_within_its_ranges(seed, i):
    w = random_world([seed, i, 1], PRINTED)
    names = list(PRINTED)
    for name, ink in w.print_run.inks.items():
        if name in NEUTRAL_INKS:
            assert ink.hue_deg == 0 and ink.chroma == 1
        else:
            lo, hi = INK_HUE_DEG[name]
            assert lo <= ink.hue_deg <= hi and abs(ink.lightness) <= INK_LIGHTNESS
            assert INK_CHROMA[0] <= ink.chroma <= INK_CHROMA[1]
    base = bgr_to_lab(np.array([PRINTED[n] for n in names], np.float32))
    moved = np.array([move_ink(b, w.print_run.inks[n]) for b, n in zip(base, names)])
    for a in range(len(names)):
        for b in range(a):
            before = np.linalg.norm(base[a] - base[b])
            assert np.linalg.norm(moved[a] - moved[b]) >= min(MIN_INK_DE, 0.8 * before) - 1e-3, (names[a], names[b])
    dl, a_range, b_range, fade = PAPERS[w.print_run.paper]
    assert w.print_run.paper_lab[0] == dl and a_range[0] <= w.print_run.paper_lab[1] <= a_range[1]
    assert b_range[0] <= w.print_run.paper_lab[2] <= b_range[1] and fade[0] <= w.print_run.fade <= fade[1]
    lab = []
    for player, (L, C, h) in w.cars.lch.items():
        (l0, l1), (c0, c1), (h0, h1) = PLASTIC_LCH[player]
        assert l0 <= L <= l1 and c0 <= C <= c1 and h0 <= h <= h1
        lab.append([L, C * np.cos(np.radians(h)), C * np.sin(np.radians(h))])
    lab = np.array(lab)
    d = np.linalg.norm(lab[:, None] - lab[None], axis=-1) + np.eye(len(lab)) * 1e3
    assert d.min() >= MIN_PLASTIC_DE
    bgr = lab_to_bgr(lab.astype(np.float32))
    assert PLASTIC_BGR_RANGE[0] <= bgr.min() and bgr.max() <= PLASTIC_BGR_RANGE[1]
    assert w.to_dict()["seed"] == [seed, i, 1] and w == random_world([seed, i, 1], PRINTED)


def test_a_copys_print_moves_as_drawn_and_its_paper_takes_its_tone():
    """On the board straight on (the same print run and light but for the world), each print
    colour the reader sees, once the paper is evened out, moved by the ink drawn for it."""
    inks = {name: Ink() for name in PRINTED}
    inks.update(red=Ink(hue_deg=8.0), green=Ink(hue_deg=15.0, lightness=-6.0), blue=Ink(chroma=0.75),
                yellow=Ink(hue_deg=-6.0, lightness=5.0))
    world = _world(print_run=PrintRun(inks, "yellowed", (-4.0, 3.0, 22.0), 0.0))
    usual = render_flat_board(np.random.default_rng(4), {}, 2.0)
    varied = render_flat_board(np.random.default_rng(4), {}, 2.0, world=world)
    before, after = _seen(usual), _seen(varied)
    colours = np.array([BOARD.tracks[t].color for t in SPACES.track_ids])
    for name, ink in inks.items():
        if name in NEUTRAL_INKS:
            continue
        b, a = (_lch(np.median(x[colours == name], axis=0)) for x in (before, after))
        assert abs((a[2] - b[2] + 180) % 360 - 180 - ink.hue_deg) < 3.0, name
        assert abs(a[0] - b[0] - ink.lightness) < 2.5, name
        assert abs(a[1] / b[1] - ink.chroma) < 0.08, name
    # The paper itself, not evened out, has the drawn tint.
    paper = cv2.cvtColor(varied[40:80, 300:340].astype(np.float32) / 255, cv2.COLOR_BGR2Lab).reshape(-1, 3)
    assert abs(np.median(paper[:, 2]) - 22.0) < 6 and np.median(paper[:, 2]) > 14
    usual_paper = cv2.cvtColor(usual[40:80, 300:340].astype(np.float32) / 255, cv2.COLOR_BGR2Lab).reshape(-1, 3)
    assert np.median(usual_paper[:, 2]) < 10


def test_the_cars_wear_the_drawn_plastic():
    claims = random_position(np.random.default_rng(8), BOARD, 5)
    world = random_world([8, 0, 1], PRINTED)
    flat = render_flat_board(np.random.default_rng(8), claims, 2.0, camera_mm=OVERHEAD, world=world)
    seen = _seen(flat)
    owner = {i: p for p, ids in claims.items() for i in ids}
    for player, (L, C, h) in world.cars.lch.items():
        C *= 1 - WORN_CHROMA * world.cars.worn
        want = np.array([L, C * np.cos(np.radians(h)), C * np.sin(np.radians(h))])
        got = np.median(seen[[owner.get(int(t)) == player for t in SPACES.track_ids]], axis=0)
        assert np.linalg.norm(got - want) < 10, (player, got, want)
    # ... unlike the usual plastic of the same game
    usual = _seen(render_flat_board(np.random.default_rng(8), claims, 2.0, camera_mm=OVERHEAD))
    moved = [np.linalg.norm(np.median(x[[owner.get(int(t)) == p for t in SPACES.track_ids]], axis=0)
                            - np.median(usual[[owner.get(int(t)) == p for t in SPACES.track_ids]], axis=0))
             for p in claims for x in (seen,)]
    assert max(moved) > 8


def test_the_flash_falls_off_from_under_the_camera_and_glares_there():
    light = Light("flash", 3000.0, 1.0, flash=0.9, glare=0.8, gloss=300.0)
    camera = np.array([300.0, 200.0, 600.0])
    xy = np.array([[[300.0, 200.0], [300.0, 650.0], [750.0, 500.0]]])
    gain, glare = light_gain(light, xy, camera, (795.0, 525.0))
    d = np.hypot(450.0, 600.0)
    assert gain[0, 0].mean() > gain[0, 1].mean() > gain[0, 2].mean()
    assert gain[0, 1, 1] == pytest.approx(0.1 * cast_bgr(3000.0, 5500.0)[1] + 0.9 * (600 / d) ** 3, rel=1e-4)
    assert glare[0, 0] == pytest.approx(0.8) and glare[0, 1] < 0.01
    # far from the flash the room's warm lamp shows: red above blue
    assert gain[0, 2, 2] > gain[0, 2, 0]


def test_a_window_and_a_lamp_tint_their_own_sides():
    light = Light("mixed", 6500.0, 1.0, lamp_kelvin=2800.0, split_deg=0.0)  # window left, lamp right
    gain, _ = light_gain(light, np.array([[[50.0, 260.0], [745.0, 260.0]]]), np.array([397.0, 262.0, 700.0]),
                         (795.0, 525.0))
    left, right = gain[0]
    assert left[0] / left[2] > 1.1 and right[2] / right[0] > 1.5  # BGR: blue-ish window, warm lamp


def test_white_balance_and_rendition_keep_gray_where_told():
    assert np.allclose(cast_bgr(2800.0, 6500.0, 0.0), 1.0)
    warm = cast_bgr(2800.0, 6500.0, 0.4)
    assert warm[2] > warm[1] > warm[0]  # BGR: red up, blue down
    m = rendition_matrix(5.0, 0.85)
    assert np.allclose(m @ np.ones(3), 1.0, atol=1e-6)
    assert not np.allclose(m @ np.array([0.8, 0.2, 0.1]), [0.8, 0.2, 0.1], atol=0.01)


def test_ttr_render_varied_records_its_world_and_frames_the_photo(tmp_path):
    # A seed whose first world is the 16:9 frame 1600x900, found the way the command draws it.
    seed = next(s for s in range(9000, 9100)
                if random_world([s, 0, 1], PRINTED).phone.size_wh == (1600, 900))
    assert ttr(["render", "--out", str(tmp_path), "--count", "1", "--seed", str(seed), "--world", "varied"]) == 0
    truth = json.loads((tmp_path / "gt" / f"render_{seed}_00000.json").read_text())
    world = random_world([seed, 0, 1], PRINTED)
    assert truth["world"] == world.to_dict()
    img = cv2.imread(str(tmp_path / f"render_{seed}_00000.jpg"))
    assert (img.shape[1], img.shape[0]) == world.phone.size_wh == tuple(truth["image_size"])
    c = np.array(truth["corners"])
    assert (c >= 0).all() and (c[:, 0] <= img.shape[1]).all() and (c[:, 1] <= img.shape[0]).all()


@pytest.mark.parametrize("kind", LIGHTS)
def test_a_world_can_be_told_its_light_and_keeps_its_copy_of_the_board(kind):
    for s in range(9000, 9010):
        told, drawn = random_world([s, 0, 1], PRINTED, kind), random_world([s, 0, 1], PRINTED)
        assert told.light.kind == kind
        assert told.print_run == drawn.print_run  # drawn before the light: the same copy of the board
        assert (told.light == drawn.light) == (drawn.light.kind == kind)


def test_ttr_render_light_goes_with_the_varied_world(tmp_path, capsys):
    assert ttr(["render", "--out", str(tmp_path), "--light", "flash"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ttr: error: --light") and "\n" not in err
    assert ttr(["render", "--out", str(tmp_path), "--count", "1", "--seed", "9001", "--world", "varied",
                "--light", "flash", "--size", "800x600"]) == 0
    truth = json.loads((tmp_path / "gt" / "render_9001_00000.json").read_text())
    assert truth["world"]["light"]["kind"] == "flash" and truth["world"]["light"]["glare"] > 0


@pytest.mark.parametrize("kind", ["flash", "tungsten"])
def test_a_varied_render_says_whether_its_flash_fired_as_a_phone_does(tmp_path, kind):
    # The reader takes a photo whose flash fired by its own doubt standard: renders must say so too.
    assert ttr(["render", "--out", str(tmp_path), "--count", "1", "--seed", "9001", "--world", "varied",
                "--light", kind, "--size", "800x600"]) == 0
    assert read_header(str(tmp_path / "render_9001_00000.jpg")).flash_fired is (kind == "flash")


@pytest.mark.parametrize("fired", [True, False])
def test_the_flash_tag_keeps_the_picture_as_it_was(tmp_path, fired):
    img = np.random.default_rng(5).integers(0, 255, (80, 120, 3), dtype=np.uint8)
    data = cv2.imencode(".jpg", img)[1].tobytes()
    tagged = with_flash_tag(data, fired)
    assert len(tagged) > len(data)
    assert np.array_equal(cv2.imdecode(np.frombuffer(tagged, np.uint8), cv2.IMREAD_COLOR),
                          cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR))
    (tmp_path / "tagged.jpg").write_bytes(tagged)
    assert read_header(str(tmp_path / "tagged.jpg")).flash_fired is fired
    with pytest.raises(ValueError):
        with_flash_tag(b"PNG", fired)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 99999))
def test_fine_detail_is_drawn_apart_and_changes_nothing_else(seed, i):
    plain, fine = random_world([seed, i, 1], PRINTED), random_world([seed, i, 1], PRINTED, fine_detail=True)
    assert plain.print_run.grain == 0 and plain.phone.sharpen == 0
    assert GRAIN_RANGE[0] <= fine.print_run.grain <= GRAIN_RANGE[1]
    assert SHARPEN_RANGE[0] <= fine.phone.sharpen <= SHARPEN_RANGE[1]
    assert replace(fine, print_run=plain.print_run, phone=plain.phone) == plain
    assert replace(fine.print_run, grain=0.0) == plain.print_run and replace(fine.phone, sharpen=0.0) == plain.phone


def _detail(img: np.ndarray) -> float:
    """Mean absolute detail finer than a pixel or two (grey levels)."""
    g = img.astype(np.float32).mean(axis=2) if img.ndim == 3 else img.astype(np.float32)
    return float(np.abs(g - cv2.GaussianBlur(g, (0, 0), 1.5)).mean())


def test_sharpening_adds_fine_detail_and_leaves_flat_areas_and_none_alone():
    rng = np.random.default_rng(3)
    img = cv2.GaussianBlur(rng.uniform(0, 255, (120, 160, 3)).astype(np.float32), (0, 0), 1.0)
    assert sharpen(img, 0.0) is img
    assert _detail(sharpen(img, 1.0)) > 1.4 * _detail(img) and _detail(sharpen(img, 0.3)) < _detail(sharpen(img, 1.0))
    flat = np.full((40, 40, 3), 120.0, np.float32)
    assert np.allclose(sharpen(flat, 1.5), flat)


def test_paper_grain_is_fine_speckle_of_the_drawn_strength_and_seeded():
    g = paper_grain((400, 600), 4.0, 0.04, [1, 2])
    assert g.shape == (400, 600, 1) and np.isclose(g.std(), 0.04, rtol=0.05) and np.isclose(g.mean(), 1.0, atol=0.01)
    assert np.array_equal(g, paper_grain((400, 600), 4.0, 0.04, [1, 2]))
    assert not np.array_equal(g, paper_grain((400, 600), 4.0, 0.04, [1, 3]))
    # speckle a fraction of a millimetre across: mostly gone once the board is seen at a millimetre a pixel
    coarse = cv2.resize(g[..., 0], (150, 100), interpolation=cv2.INTER_AREA)
    assert coarse.std() < 0.5 * g.std()


def test_ttr_render_fine_detail_goes_with_the_varied_world_and_shows_it(tmp_path, capsys):
    assert ttr(["render", "--out", str(tmp_path / "x"), "--fine-detail"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ttr: error: --fine-detail") and "\n" not in err
    shown = {}
    for fine in (False, True):
        out = tmp_path / ("fine" if fine else "plain")
        assert ttr(["render", "--out", str(out), "--count", "1", "--seed", "9002", "--world", "varied",
                    "--size", "1600x1200"] + (["--fine-detail"] if fine else [])) == 0
        truth = json.loads((out / "gt" / "render_9002_00000.json").read_text())
        img = cv2.imread(str(out / "render_9002_00000.jpg"))
        shown[fine] = (truth, img)
    (plain, a), (fine, b) = shown[False], shown[True]
    assert plain["tracks"] == fine["tracks"] and plain["corners"] == fine["corners"]
    assert fine["world"]["phone"]["sharpen"] > 0 and fine["world"]["print_run"]["grain"] > 0
    c = np.array(plain["corners"], float)
    x0, y0 = c.min(axis=0).astype(int) + 40
    x1, y1 = c.max(axis=0).astype(int) - 40
    assert _detail(b[y0:y1, x0:x1]) > 1.2 * _detail(a[y0:y1, x0:x1])
