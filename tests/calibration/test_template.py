"""The packaged board template: it fits the board facts, its spaces chain from city to city and
never overlap, and the loader refuses templates that do not fit."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from calibration.template import TemplateError, load_template, template_from_dict
from scoring.board import load_board


@pytest.fixture(scope="module")
def template():
    return load_template()


@pytest.fixture(scope="module")
def board():
    return load_board()


def _convex_overlap_area(p: np.ndarray, q: np.ndarray) -> float:
    """Area of the intersection of two convex quads (Sutherland-Hodgman clipping, shoelace)."""

    def orient(poly):
        x, y = poly[:, 0], poly[:, 1]
        area2 = np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))
        return poly if area2 > 0 else poly[::-1]

    out = list(orient(p))
    clip = orient(q)
    for i in range(len(clip)):
        a, b = clip[i], clip[(i + 1) % len(clip)]
        inside = lambda pt: (b[0] - a[0]) * (pt[1] - a[1]) - (b[1] - a[1]) * (pt[0] - a[0]) >= 0  # noqa: E731
        src, out = out, []
        for j in range(len(src)):
            cur, prev = src[j], src[j - 1]
            if inside(cur):
                if not inside(prev):
                    out.append(_cross_point(prev, cur, a, b))
                out.append(cur)
            elif inside(prev):
                out.append(_cross_point(prev, cur, a, b))
        if not out:
            return 0.0
    poly = np.array(out)
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def _cross_point(p1, p2, a, b):
    d1, d2 = p2 - p1, b - a
    t = ((a[0] - p1[0]) * d2[1] - (a[1] - p1[1]) * d2[0]) / (d1[0] * d2[1] - d1[1] * d2[0])
    return p1 + t * d1


def test_overlap_helper_measures_known_areas():
    square = np.array([[0, 0], [2, 0], [2, 2], [0, 2]], float)
    assert _convex_overlap_area(square, square + [1, 1]) == pytest.approx(1.0)
    assert _convex_overlap_area(square, square + [3, 0]) == pytest.approx(0.0)
    assert _convex_overlap_area(square, square[::-1] + [1, 0]) == pytest.approx(2.0)


def test_template_has_every_track_and_space_of_the_board(template, board):
    assert len(template.tracks) == 100
    quads, track_ids, index = template.all_spaces()
    assert quads.shape == (309, 4, 2)
    assert track_ids.shape == index.shape == (309,)
    for t, b in zip(template.tracks, board.tracks):
        assert (t.id, t.a, t.b, t.color, t.length) == (b.id, b.a, b.b, b.color, b.length)
        assert t.spaces.shape == (b.length, 4, 2)
    centers, ids, idx = template.space_centers()
    assert centers.shape == (309, 2)
    assert np.array_equal(ids, track_ids) and np.array_equal(idx, index)
    assert np.allclose(centers, quads.mean(axis=1))


def test_spaces_are_space_sized_rectangles_inside_the_board(template):
    quads, _, _ = template.all_spaces()
    sides = np.linalg.norm(np.roll(quads, -1, axis=1) - quads, axis=2)  # (309, 4)
    assert np.allclose(sides[:, 0], sides[:, 2], atol=0.3) and np.allclose(sides[:, 1], sides[:, 3], atol=0.3)
    assert np.all((sides[:, 0] > 20) & (sides[:, 0] < 30)), "long side of a printed space is about 25 mm"
    assert np.all((sides[:, 1] > 6) & (sides[:, 1] < 11)), "short side of a printed space is about 8 mm"
    w, h = template.board_mm
    assert quads[..., 0].min() > 20 and quads[..., 0].max() < w - 20  # inside the score-track border
    assert quads[..., 1].min() > 20 and quads[..., 1].max() < h - 20


def test_spaces_chain_from_city_a_to_city_b(template):
    for t in template.tracks:
        c = t.centers()
        a, b = template.cities[t.a], template.cities[t.b]
        da = np.linalg.norm(c - a, axis=1)
        db = np.linalg.norm(c - b, axis=1)
        assert da.argmin() == 0, f"track {t.id} {t.a}-{t.b}: first space is not the one nearest {t.a}"
        assert db.argmin() == t.length - 1, f"track {t.id} {t.a}-{t.b}: last space is not nearest {t.b}"
        assert da[0] < 45 and db[-1] < 45, f"track {t.id}: end spaces far from their cities"
        steps = np.linalg.norm(np.diff(c, axis=0), axis=1)
        assert np.all((steps > 20) & (steps < 36)), f"track {t.id} {t.a}-{t.b}: spaces not side by side: {steps}"


def test_no_two_spaces_overlap(template):
    quads, track_ids, index = template.all_spaces()
    centers = quads.mean(axis=1)
    close = np.linalg.norm(centers[:, None] - centers[None], axis=2) < 30
    worst = 0.0
    for i, j in zip(*np.nonzero(np.triu(close, 1))):
        area = _convex_overlap_area(quads[i], quads[j])
        assert area < 1.0, (f"spaces {track_ids[i]}:{index[i]} and {track_ids[j]}:{index[j]} overlap "
                            f"by {area:.1f} mm2")
        worst = max(worst, area)


def test_double_routes_run_side_by_side(template, board):
    for t in board.tracks:
        other = board.double_of(t)
        if other is None or other.id < t.id:
            continue
        d = np.linalg.norm(template.tracks[t.id].centers() - template.tracks[other.id].centers(), axis=1)
        assert np.all((d > 6) & (d < 13)), f"double {t.a}-{t.b}: lanes {d} mm apart"


def test_cities_and_score_cells(template, board):
    w, h = template.board_mm
    assert set(template.cities) == set(board.cities)
    for name, c in board.cities.items():
        assert np.linalg.norm(template.cities[name] - [c.x * w, c.y * h]) < 8, name
    cells = template.score_cells
    assert cells.shape == (100, 2)
    edge = np.minimum.reduce([cells[:, 0], cells[:, 1], w - cells[:, 0], h - cells[:, 1]])
    assert np.all(edge < 22), "score cells lie in the border"
    # 0 bottom-left, 20 top-left, 50 top-right, 70 bottom-right, and the cells go round in order.
    assert cells[0][0] < 30 and cells[0][1] > h - 30
    assert cells[20][0] < 30 and cells[20][1] < 30
    assert cells[50][0] > w - 30 and cells[50][1] < 30
    assert cells[70][0] > w - 30 and cells[70][1] > h - 30
    steps = np.linalg.norm(np.diff(np.vstack([cells, cells[:1]]), axis=0), axis=1)
    assert np.all((steps > 15) & (steps < 35)), steps


def test_space_colours_follow_the_printed_colour(template):
    """The stored Lab colour of each coloured space is nearest to its own colour's mean (gray
    spaces are left out: their light middle panel is the map's shade, so only the frame tells)."""
    by_colour: dict[str, list] = {}
    for t in template.tracks:
        assert t.space_colors_lab is not None and t.space_colors_lab.shape == (t.length, 3)
        by_colour.setdefault(t.color, []).extend(t.space_colors_lab)
    means = {c: np.mean(v, axis=0) for c, v in by_colour.items() if c != "gray"}
    wrong = []
    for t in template.tracks:
        if t.color == "gray":
            continue
        for k, lab in enumerate(t.space_colors_lab):
            nearest = min(means, key=lambda c: np.linalg.norm(lab - means[c]))
            if nearest != t.color:
                wrong.append((t.id, k, t.color, nearest))
    assert len(wrong) <= 2, wrong


def test_to_pixels_and_for_image_scale_everything(template):
    px = template.to_pixels(2.0)
    assert px.units == "px"
    assert np.allclose(px.tracks[5].spaces, template.tracks[5].spaces * 2.0)
    assert np.allclose(px.score_cells, template.score_cells * 2.0)
    img = template.for_image(1500, 990)
    assert img.size == pytest.approx((1500, 990))
    assert np.allclose(img.cities["Denver"], template.cities["Denver"] * [1500 / 795, 990 / 525])
    with pytest.raises(ValueError):
        px.to_pixels(2.0)


def test_json_round_trip(template, tmp_path):
    path = tmp_path / "t.json"
    template.save(path)
    again = load_template(path)
    assert again.to_dict() == template.to_dict()


@pytest.mark.parametrize("change, message", [
    (lambda raw: raw["tracks"].pop(), "tracks"),
    (lambda raw: raw["tracks"][3].update(color="pink"), "track 3"),
    (lambda raw: raw["tracks"][0]["spaces"].pop(), "spaces"),
    (lambda raw: raw["tracks"][7]["spaces"][0][0].__setitem__(0, 900.0), "outside the board"),
    (lambda raw: raw["score_cells"].pop(), "score_cells"),
    (lambda raw: raw["cities"].pop("Denver"), "cities"),
    (lambda raw: raw.pop("tracks"), "malformed"),
])
def test_loader_refuses_templates_that_do_not_fit(template, change, message):
    raw = json.loads(json.dumps(template.to_dict()))
    change(raw)
    with pytest.raises(TemplateError, match=message):
        template_from_dict(raw)


def test_load_template_errors_are_one_line(tmp_path):
    with pytest.raises(TemplateError, match="no template file"):
        load_template(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TemplateError, match="not JSON"):
        load_template(bad)


def test_cli_reports_bad_input_without_traceback(tmp_path):
    bad = tmp_path / "x.jpg"
    bad.write_bytes(b"not an image")
    for args in (["overlay", str(tmp_path / "none.jpg"), "--out", str(tmp_path / "o.png")],
                 ["overlay", str(bad), "--out", str(tmp_path / "o.png")],
                 ["measure", str(bad), "--out", str(tmp_path / "t.json")]):
        r = subprocess.run([sys.executable, "-m", "app.cli", "template", *args], capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("ttr: error:") and "Traceback" not in r.stderr
