"""Evaluate `locate_board` on the real development photos against their hand-clicked corners.

    python3 benchmarks/eval_locate.py [DEV_DIR] [--no-variants] [--only SUBSTR]

For every photo in DEV_DIR (default ../shared/real/dev relative to the repository, i.e.
/work/shared/real/dev) it runs the locator on the photo as it is and, unless --no-variants, on
copies made in memory: turned 90/180/270 degrees, turned by small angles (+-7 deg, on a grown
canvas), with added perspective (a seeded keystone; "steep": about 30-35 deg of tilt) and shrunk
to about 40 % of the frame, the truth corners moved along (surround: plain grey-brown); and the
board cut out along its hand-clicked corners and laid onto the renderer's hostile tables (checked
cloth, dark stone, red-brown wood, a table edge with a chair, tiles; boxes and cards beside it).
Then the outline check alone: the truth corners, and the truth moved by 1.2 % of the diagonal,
scored by the city dots (`vision.locate` confidence; flagged below 0.5).
Prints per-image corner error (mean over the 4 corners, in % of the board diagonal) and whether
the board's orientation (which corner is top-left) is right, then SUMMARY lines.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.errors import TtrError  # noqa: E402
from vision.image_io import load_photo  # noqa: E402
from vision.locate import locate_board  # noqa: E402


def default_dev_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "shared" / "real" / "dev"


def corner_error_pct(found, truth) -> tuple[float, float]:
    """(mean, max) distance between matching corners, % of the true board diagonal."""
    f, t = np.asarray(found, float), np.asarray(truth, float)
    diag = 0.5 * (np.linalg.norm(t[0] - t[2]) + np.linalg.norm(t[1] - t[3]))
    d = np.linalg.norm(f - t, axis=1) / diag * 100
    return float(d.mean()), float(d.max())


def orientation_right(found, truth) -> bool:
    """Right when the found TL is nearer the true TL than any other true corner (same for all)."""
    f, t = np.asarray(found, float), np.asarray(truth, float)
    d = np.linalg.norm(f[:, None, :] - t[None, :, :], axis=2)
    return bool(np.all(np.argmin(d, axis=1) == np.arange(4)))


def _turn(img, corners, quarter: int):
    """Rotate image and corners clockwise by quarter*90 degrees."""
    c = np.asarray(corners, float).copy()
    h, w = img.shape[:2]
    for _ in range(quarter % 4):
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
        x, y = c[:, 0].copy(), c[:, 1].copy()
        c = np.column_stack([h - 1 - y, x])
        h, w = img.shape[:2]
    return img, c


def _warp(img, corners, M, size_wh):
    # A plain grey-brown surround (a mirrored border would show mirrored copies of the board).
    out = cv2.warpPerspective(img, M, size_wh, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                              borderValue=(95, 110, 125))
    c = cv2.perspectiveTransform(np.asarray(corners, float).reshape(-1, 1, 2), M).reshape(-1, 2)
    return out, c


def _small_turn(img, corners, deg):
    h, w = img.shape[:2]
    M = cv2.getRotationMatrix2D((w / 2, h / 2), -deg, 1.0)
    cos, sin = abs(M[0, 0]), abs(M[0, 1])
    nw, nh = int(w * cos + h * sin), int(w * sin + h * cos)
    M[0, 2] += nw / 2 - w / 2
    M[1, 2] += nh / 2 - h / 2
    return _warp(img, corners, np.vstack([M, [0, 0, 1]]), (nw, nh))


def _keystone(img, corners, rng, amount=0.12):
    """A perspective as from a lower camera: one side of the frame shrunk by `amount`."""
    h, w = img.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    side = rng.integers(4)
    # Shrink to 90 % first so the whole photo (and a board filling it) stays in the frame.
    dst = (src - src.mean(0)) * 0.9 + src.mean(0)
    a, b = side, (side + 1) % 4
    inward = (src.mean(0) - (src[a] + src[b]) / 2)
    along = (src[b] - src[a])
    dst[a] += along * amount / 2 + inward * 0.0
    dst[b] -= along * amount / 2
    dst += rng.normal(0, 0.01 * max(w, h), dst.shape).astype(np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    return _warp(img, corners, M, (w, h))


def _on_table(img, corners, rng, kind):
    """The board (inside its truth corners, grown by 5 mm: the hand-clicked corners are a few pixels
    off, and a seam on the band would be a straight edge no real board has) laid onto a hostile
    table."""
    from vision.rectify import BOARD_MM, board_to_photo_homography
    from vision.synth.camera import Camera, hostile_surround

    h, w = img.shape[:2]
    c = np.asarray(corners, float)
    H = board_to_photo_homography(c)
    cam = Camera(H, np.array([BOARD_MM[0] / 2, BOARD_MM[1] / 2, 700.0]), (w, h), 0.0, 0.0)
    bg, _ = hostile_surround(rng, cam, kind)
    grown = cv2.perspectiveTransform(np.array([[-5, -5], [BOARD_MM[0] + 5, -5], [BOARD_MM[0] + 5, BOARD_MM[1] + 5],
                                               [-5, BOARD_MM[1] + 5]], float).reshape(-1, 1, 2), H).reshape(-1, 2)
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, np.round(grown).astype(np.int32), 1)
    out = np.where(mask[..., None] > 0, img, bg.astype(np.uint8))
    return out, c


TABLES = ("checked", "stone", "redwood", "table_edge", "tiles")


def variants(img, corners, rng, with_variants: bool):
    yield "as-is", img, np.asarray(corners, float)
    if not with_variants:
        return
    for q in (1, 2, 3):
        i2, c2 = _turn(img, corners, q)
        yield f"rot{q * 90}", i2, c2
    for deg in (-7, 7):
        i2, c2 = _small_turn(img, corners, deg)
        yield f"tilt{deg:+d}", i2, c2
    i2, c2 = _keystone(img, corners, rng)
    yield "keystone", i2, c2
    i3, c3 = _turn(i2, c2, 3)
    yield "keystone+rot270", i3, c3
    i2, c2 = _keystone(img, corners, rng, amount=0.3)  # about 30-35 deg of camera tilt
    yield "steep", i2, c2
    h, w = img.shape[:2]
    M = np.array([[0.65, 0, 0.2 * w], [0, 0.65, 0.15 * h], [0, 0, 1]])  # board ~40 % of the frame
    i2, c2 = _warp(img, corners, M, (w, h))
    yield "small", i2, c2
    for kind in TABLES:
        i2, c2 = _on_table(img, corners, rng, kind)
        yield f"on {kind}", i2, c2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dev_dir", nargs="?", default=str(default_dev_dir()))
    ap.add_argument("--no-variants", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    dev = Path(args.dev_dir)
    gts = sorted((dev / "gt").glob("*.json"))
    if not gts:
        print(f"no gt/*.json under {dev}", file=sys.stderr)
        return 2
    rows = []
    for g in gts:
        truth = json.loads(g.read_text())
        if args.only and args.only not in truth["photo"]:
            continue
        rng = np.random.default_rng(zlib.crc32(truth["photo"].encode()))  # same variants every run
        img = load_photo(dev / truth["photo"])
        for name, im, tc in variants(img, truth["corners"], rng, not args.no_variants):
            t0 = time.perf_counter()
            try:
                loc = locate_board(im)
            except TtrError as e:
                ms = (time.perf_counter() - t0) * 1000
                print(f"{truth['photo']:32s} {name:16s} FAILED: {e} ({ms:.0f} ms)")
                rows.append((truth["photo"], name, np.nan, np.nan, False, ms))
                continue
            ms = (time.perf_counter() - t0) * 1000
            mean, mx = corner_error_pct(loc.corners_xy, tc)
            ok = orientation_right(loc.corners_xy, tc)
            rows.append((truth["photo"], name, mean, mx, ok, ms))
            print(f"{truth['photo']:32s} {name:16s} err mean {mean:5.2f}% max {mx:5.2f}%  "
                  f"orient {'ok' if ok else 'WRONG'}  conf {loc.confidence:.2f}  {ms:4.0f} ms"
                  + (f"  warn: {'; '.join(loc.warnings)}" if loc.warnings else ""))
    checks = _check_outlines(gts, dev, args.only) if not args.no_variants else None
    means = np.array([r[2] for r in rows])
    maxes = np.array([r[3] for r in rows])
    oks = sum(r[4] for r in rows)
    failed = int(np.isnan(means).sum())
    asis = [r for r in rows if r[1] == "as-is"]
    am = np.array([r[2] for r in asis])
    print(f"SUMMARY as-is: n={len(asis)} mean corner error {np.nanmean(am):.3f}% of diagonal, "
          f"max {np.nanmax([r[3] for r in asis]):.3f}%, orientation right {sum(r[4] for r in asis)}/{len(asis)}, "
          f"failed {int(np.isnan(am).sum())}")
    print(f"SUMMARY all variants: n={len(rows)} mean corner error {np.nanmean(means):.3f}% of diagonal, "
          f"max {np.nanmax(maxes):.3f}%, orientation right {oks}/{len(rows)}, failed {failed}, "
          f"median locate {np.median([r[5] for r in rows]):.0f} ms")
    tables = [r for r in rows if r[1].startswith("on ")]
    if tables:
        tm = np.array([r[2] for r in tables])
        print(f"SUMMARY on hostile tables: n={len(tables)} mean corner error {np.nanmean(tm):.3f}%, "
              f"max {np.nanmax([r[3] for r in tables]):.3f}%, orientation right {sum(r[4] for r in tables)}/{len(tables)}, "
              f"failed {int(np.isnan(tm).sum())}")
    if checks:
        (good_flagged, n_good), (bad_flagged, n_bad) = checks
        print(f"SUMMARY outline check: truth corners flagged {good_flagged}/{n_good}, "
              f"truth moved 1.2 % flagged {bad_flagged}/{n_bad}")
    return 0 if failed == 0 and oks == len(rows) and np.nanmean(means) <= 0.5 else 1


def _check_outlines(gts, dev, only):
    """How the dots score the truth outline and the truth moved by 1.2 % of the diagonal (three
    seeded directions per photo): (flagged, n) for each."""
    from vision.locate import LocateConfig, _confidence
    from vision.locate.dots import check_outline, city_dots_mm
    from vision.rectify import shrink

    cfg = LocateConfig()
    good, bad = [0, 0], [0, 0]
    for g in gts:
        truth = json.loads(g.read_text())
        if only and only not in truth["photo"]:
            continue
        small, scale = shrink(load_photo(dev / truth["photo"]), cfg.work_side)
        t = (np.asarray(truth["corners"], float) + 0.5) * scale - 0.5
        rng = np.random.default_rng(zlib.crc32(truth["photo"].encode()) + 1)
        good[0] += _confidence(check_outline(small, t, city_dots_mm(), cfg.dots), cfg) < 0.5
        good[1] += 1
        diag = np.linalg.norm(t[0] - t[2])
        for _ in range(3):
            d = rng.normal(0, 1, t.shape)
            off = t + d / np.linalg.norm(d, axis=1).mean() * 0.012 * diag
            bad[0] += _confidence(check_outline(small, off, city_dots_mm(), cfg.dots), cfg) < 0.5
            bad[1] += 1
    return tuple(good), tuple(bad)


if __name__ == "__main__":
    sys.exit(main())
