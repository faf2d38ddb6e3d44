"""`measure_template` on a board drawn from the packaged template (no real photo needed): the tool
must find every space, city and score cell where they were drawn."""
from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

PX_PER_MM = 2.0


def _lab_to_bgr(lab) -> tuple[int, int, int]:
    px = np.uint8([[np.clip(np.round(lab), 0, 255)]])
    return tuple(int(v) for v in cv2.cvtColor(px, cv2.COLOR_LAB2BGR)[0, 0])


def draw_board(template, seed: int = 0) -> np.ndarray:
    """A plain flattened board: mottled map with faint lines, the printed spaces (colour faces with
    dark outlines; gray ones a dark frame round a light panel), city dots and the score border."""
    rng = np.random.default_rng(seed)
    w, h = (int(round(v * PX_PER_MM)) for v in template.board_mm)
    lab = np.empty((h, w, 3), np.float32)
    lab[:] = (185, 129, 138)
    lab[..., 0] += cv2.GaussianBlur(rng.normal(0, 14, (h, w)).astype(np.float32), (0, 0), 3)
    img = cv2.cvtColor(np.clip(lab, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)
    for _ in range(40):  # faint map lines, some running under the spaces
        p = rng.uniform([0, 0], [w, h], (2, 2)).astype(np.int32)
        cv2.line(img, tuple(p[0]), tuple(p[1]), _lab_to_bgr((140, 129, 136)), 1, cv2.LINE_AA)
    t = template.to_pixels(PX_PER_MM)
    colours = {}
    for tr in template.tracks:
        colours.setdefault(tr.color, []).extend(tr.space_colors_lab)
    face = {c: _lab_to_bgr(np.median(v, axis=0)) for c, v in colours.items()}
    outline = _lab_to_bgr((70, 130, 135))
    for tr in t.tracks:
        for quad in tr.spaces:
            pts = np.round(quad * 16).astype(np.int32)
            if tr.color == "gray":
                cv2.fillPoly(img, [pts], _lab_to_bgr((105, 130, 138)), cv2.LINE_AA, 4)
                inner = _inset(quad, 1.6 * PX_PER_MM)
                cv2.fillPoly(img, [np.round(inner * 16).astype(np.int32)], _lab_to_bgr((168, 129, 136)), cv2.LINE_AA, 4)
            else:
                cv2.fillPoly(img, [pts], face[tr.color], cv2.LINE_AA, 4)
            cv2.polylines(img, [pts], True, outline, 1, cv2.LINE_AA, 4)
    for c in t.cities.values():
        cv2.circle(img, tuple(np.round(c).astype(int)), int(4.5 * PX_PER_MM), _lab_to_bgr((60, 140, 150)), -1, cv2.LINE_AA)
        cv2.circle(img, tuple(np.round(c).astype(int)), int(3.8 * PX_PER_MM), _lab_to_bgr((110, 160, 175)), -1, cv2.LINE_AA)
    band = int(22 * PX_PER_MM)
    mask = np.zeros((h, w), bool)
    mask[:band], mask[-band:], mask[:, :band], mask[:, -band:] = True, True, True, True
    img[mask] = _lab_to_bgr((55, 140, 145))
    half = 8.5 * PX_PER_MM
    for i, c in enumerate(t.score_cells):
        if i in (0, 20, 50, 70):
            cv2.circle(img, tuple(np.round(c).astype(int)), int(9 * PX_PER_MM), _lab_to_bgr((200, 126, 120)), -1)
        else:
            x0, y0 = np.round(c - half).astype(int)
            x1, y1 = np.round(c + half).astype(int)
            cv2.rectangle(img, (x0, y0), (x1, y1), _lab_to_bgr((85, 168, 160)), -1)
    return img


def _inset(quad: np.ndarray, by: float) -> np.ndarray:
    u = quad[1] - quad[0]
    n = quad[3] - quad[0]
    u, n = u / np.linalg.norm(u), n / np.linalg.norm(n)
    return quad + np.array([u + n, -u + n, -u - n, u - n]) * by


@pytest.fixture(scope="module")
def measured():
    from calibration.template import load_template
    from vision.measure import measure_template

    drawn = load_template()
    return drawn, measure_template(draw_board(drawn))


def test_measure_finds_every_space_where_it_was_drawn(measured):
    drawn, result = measured
    want, _, _ = drawn.space_centers()
    got, _, _ = result.template.space_centers()
    off = np.linalg.norm(got - want, axis=1)
    assert np.median(off) < 0.3, np.median(off)
    assert np.percentile(off, 95) < 0.6, np.percentile(off, 95)
    # Spaces no detector finds are tracked on from their neighbours; on this drawing a few of them
    # slip along their track (the known weak point), but never onto another track.
    slipped = [(t.id, k) for t in drawn.tracks for k in range(t.length)]
    slipped = [slipped[i] for i in np.nonzero(off > 2.0)[0]]
    assert len(slipped) <= 6, slipped
    assert off.max() < 12.0


def test_measure_finds_cities_and_score_cells(measured):
    drawn, result = measured
    for name, c in drawn.cities.items():
        assert np.linalg.norm(result.template.cities[name] - c) < 1.5, name
    cells = np.linalg.norm(result.template.score_cells - drawn.score_cells, axis=1)
    assert np.median(cells) < 1.5 and cells.max() < 3.0, cells.argmax()


def test_measure_refuses_a_photo_of_the_wrong_shape():
    from scoring.errors import TtrError
    from vision.measure import measure_template

    with pytest.raises(TtrError, match="795:525"):
        measure_template(np.zeros((1000, 1000, 3), np.uint8))
    with pytest.raises(TtrError, match="no printed spaces"):
        measure_template(np.full((990, 1500, 3), 200, np.uint8))
