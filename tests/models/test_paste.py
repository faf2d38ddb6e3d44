"""Real cars laid on empty boards (models/paste.py), on synthetic patches: a pasted car changes only
the pixels of its mask, keeps its colour as the label, stays out of the other lane of a double, and a
fold's pasted patches hold no pixel of a left-out state's photos."""
import numpy as np

from models.paste import (
    PasteConfig,
    car_mask,
    car_regions,
    car_seen_from,
    fold_pasted,
    frame_warp,
    other_lane_space,
    paste_car,
)

CLASSES = ("empty", "red", "blue", "green", "yellow", "black")
S, SIDE = 64, 30.0


def _rect(cx, cy, length=23.5, width=7.5):
    """A horizontal space quad (mm) centred at (cx, cy)."""
    return np.array([[cx - length / 2, cy - width / 2], [cx + length / 2, cy - width / 2],
                     [cx + length / 2, cy + width / 2], [cx - length / 2, cy + width / 2]])


# Track 0: two spaces end to end; track 1: the other lane of a double, 8.5 mm below track 0's first
# space; track 2: far away.
QUADS = np.stack([_rect(50, 50), _rect(75, 50), _rect(50, 58.5), _rect(150, 150)])
TRACKS = np.array([0, 0, 1, 2])
PRINTED = ["gray", "gray", "blue", "blue"]


def _px(mm_x, mm_y):
    """Patch pixel of space 0 showing board point (mm) (space 0 centre (50, 50), axis +x)."""
    half, scale = (S - 1) / 2, SIDE / S
    return round(half + (mm_x - 50) / scale), round(half + (mm_y - 50) / scale)


def test_region_keeps_own_track_and_leaves_the_other_lane_out():
    region, core = car_regions(QUADS, TRACKS, SIDE, S, grow_mm=3.0)
    x, y = _px(50, 50)
    assert region[0, y, x] and core[0, y, x]
    x, y = _px(64, 50)  # on track 0's next space: a claimed track shows it too
    assert region[0, y, x] and not core[0, y, x]
    x, y = _px(50, 58.5)  # the middle of the other lane
    assert not region[0, y, x]
    x, y = _px(50, 54.0)  # just past the own space's edge, nearer to it than to the other lane
    assert region[0, y, x]
    x, y = _px(50, 44)  # 2.25 mm off the edge on the free side: in; 5 mm off: out
    assert region[0, y, x]
    x, y = _px(50, 41)
    assert not region[0, y, x]


def test_car_mask_finds_the_car_and_nothing_outside_its_region():
    region, core = car_regions(QUADS, TRACKS, SIDE, S, grow_mm=3.0)
    rng = np.random.default_rng(0)
    empty = np.full((S, S, 3), 190, np.uint8)
    empty[26:38, 8:56] = (120, 120, 120)  # the printed space
    empties = np.stack([np.clip(empty.astype(int) + rng.integers(-3, 4, empty.shape), 0, 255).astype(np.uint8)
                        for _ in range(3)])
    played = empty.copy()
    played[25:39, 9:55] = (40, 40, 200)  # a red car (BGR) on it
    played[2:6, 2:6] = (0, 255, 0)  # a speck far off the space: not car
    played[47:52, 20:40] = (0, 0, 0)  # the other lane's car: not this one
    alpha = car_mask(played, empties, region[0], core[0], PasteConfig(feather_px=0))
    assert alpha[31, 32] == 1.0 and alpha[26, 12] == 1.0
    assert alpha[2:6, 2:6].max() == 0 and alpha[47:52, 20:40].max() == 0
    assert alpha[~region[0]].max() == 0


def test_paste_changes_only_the_masked_pixels():
    rng = np.random.default_rng(1)
    car = rng.integers(0, 256, (S, S, 3), dtype=np.uint8)
    background = rng.integers(0, 256, (S, S, 3), dtype=np.uint8)
    alpha = np.zeros((S, S), np.float32)
    alpha[20:40, 10:50] = 1.0
    alpha[19, 10:50] = 0.5
    out = paste_car(car, alpha, background)
    outside = alpha == 0
    assert np.array_equal(out[outside], background[outside])
    assert np.array_equal(out[20:40, 10:50], car[20:40, 10:50])
    half = np.rint(0.5 * car[19, 10:50].astype(float) + 0.5 * background[19, 10:50]).astype(np.uint8)
    assert np.abs(out[19, 10:50].astype(int) - half).max() <= 1
    moved = paste_car(car, alpha, background, shift=(3, -2), flip_h=True)
    changed = np.any(moved != background, axis=2)
    rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
    assert rows.min() >= 17 and rows.max() <= 37  # rows 19..39 moved up 2 px
    assert cols.min() >= 17 and cols.max() <= 56  # columns 10..49 flipped (14..53), moved right 3 px


def _photo(name, state, value, labels):
    """A synthetic collected photo: every patch filled with `value`, a car's pixels `value + 1`."""
    patches = np.full((len(labels), S, S, 3), value, np.uint8)
    patches[np.asarray(labels) > 0, 22:42, 8:56] = value + 1
    return {"photo": name, "state": state, "patches": patches, "labels": np.asarray(labels)}


def test_a_fold_pastes_only_its_training_photos_cars_with_their_labels():
    photos = [_photo("a.jpg", "A", 10, [1, 1, 2, 0]),  # red on track 0, blue on track 1
              _photo("d.jpg", "D", 100, [5, 5, 3, 4]),  # the left-out state
              _photo("e1.jpg", "empty", 180, [0, 0, 0, 0]),
              _photo("e2.jpg", "empty", 200, [0, 0, 0, 0])]
    exact = PasteConfig(feather_px=0, car_gain=(1.0, 1.0), car_wb=0.0, bare_share=0.0)  # pixels as they are
    ps, used = fold_pasted(photos, "D", 200, QUADS, TRACKS, PRINTED, CLASSES, SIDE, seed=3, cfg=exact)
    assert [o["photo"] for o in used] == ["a.jpg", "e1.jpg", "e2.jpg"]
    assert len(ps.y) == 200 and set(ps.y) == {1, 2}
    values = set(np.unique(ps.x))
    assert not values & {100, 101}  # nothing of the left-out photo
    assert values <= {10, 11, 180, 200}  # A's car (and what the region took around it) on the empty boards
    for x, y, (i, k), (j, k2) in zip(ps.x, ps.y, ps.source, ps.target):
        assert used[i]["state"] == "A" and used[i]["labels"][k] == y  # the label is the car's colour
        assert used[j]["state"] == "empty"
        assert (x == 11).any()  # the car is there
    blue_on_blue = sum(PRINTED[k2] == "blue" for (_, k2), y in zip(ps.target, ps.y) if y == 2)
    assert blue_on_blue > 0.5 * (ps.y == 2).sum()  # own print, deliberately often (2 of 4 spaces are blue)
    none, _ = fold_pasted(photos, "D", 0, QUADS, TRACKS, PRINTED, CLASSES, SIDE)
    assert len(none.y) == 0
    # Half bare: each car's background also given as it is, labelled empty.
    # Half without a car: each car's background as it is, or (a double's lane) the other lane beside it.
    paired, used = fold_pasted(photos, "D", 200, QUADS, TRACKS, PRINTED, CLASSES, SIDE, seed=4, double_ids=(1, 0, -1))
    assert (paired.y == 0).sum() == 100 and (paired.y > 0).sum() == 100
    beside = 0
    for x, y, (i, _), (j, k2) in zip(paired.x, paired.y, paired.source, paired.target):
        if y == 0 and i == -1:
            assert np.array_equal(x, used[j]["patches"][k2])
        elif y == 0:  # the other lane's patch: the background changed where the car leans in, not all
            beside += 1
            assert used[i]["state"] == "A" and k2 in (0, 2)
            assert (x != used[j]["patches"][k2]).any() and (x == used[j]["patches"][k2]).any()
        else:
            assert used[i]["state"] == "A" and not (x == 11).all()
    assert beside > 10


def test_a_car_seen_from_the_other_lane_sits_beside_it():
    warp = frame_warp(QUADS, SIDE, S, 0, 2)  # space 2: track 1, 8.5 mm below space 0
    assert np.allclose(warp, [[1, 0, 0], [0, 1, 8.5 * S / SIDE]], atol=1e-4)
    car = np.zeros((S, S, 3), np.float32)
    alpha = np.zeros((S, S), np.float32)
    car[26:38, 8:56], alpha[26:38, 8:56] = 200, 1.0
    _, seen_alpha = car_seen_from(car, alpha, warp)
    rows = np.flatnonzero(seen_alpha.max(axis=1) > 0.5)
    assert rows.min() in (7, 8) and rows.max() in (19, 20)  # 18.1 px higher: the upper edge of the patch
    assert seen_alpha[32].max() == 0  # nothing on the other lane itself
    assert list(other_lane_space(QUADS, TRACKS, (1, 0, -1))) == [2, 2, 0, -1]
