"""Car or print, space by space: how well each evidence source tells empty print in a player's
colour from that player's cars on it, on labelled photo sets.

    python3 benchmarks/own_print.py SET [SET ...] [--cache DIR] [--held-out-checks DIR]

For every space of a single track printed in a player's colour whose truth is empty or that
player's cars: the area under the ROC curve of the net's first look, the colours, the car-or-print
check and the fused evidence (each as the log-odds of the player's cars against empty; the check
read with the one that left the photo out, given `--held-out-checks`), and of three measures of shape
that need no training, on the light-normalised patch (how much the lightness varies inside the
space, its edges there, a darker strip along a long side: a car's shadow). Per print colour, then
all. The sets and the cache are `ablate.py`'s.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ablate import board_views, held_out_checks, reader_for  # noqa: E402 (this folder: the scripts' own helpers)

from vision.read import Reader  # noqa: E402
from vision.reading import PLAYER_COLORS  # noqa: E402

MEASURES = ("net", "colours", "check", "fused", "lightness spread", "edges", "shadow")


def auc(pos: list[float], neg: list[float]) -> float:
    """The chance a car's value exceeds an empty space's (ties half), by ranks."""
    if not pos or not neg:
        return float("nan")
    ranks = np.concatenate([pos, neg]).argsort(kind="stable").argsort() + 1.0
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def shape_measures(patch_bgr: np.ndarray, px_per_mm: float) -> tuple[float, float, float]:
    """Lightness spread and mean edge strength inside the space (its middle 20 x 5 mm, the patch
    centred on it, long axis horizontal), and how much darker than the patch's median the darker
    of the strips 4.5-6.5 mm either side of its axis is (a space is 8 mm wide)."""
    half_len, half_wid = int(10 * px_per_mm), int(2.5 * px_per_mm)
    near, far = int(4.5 * px_per_mm), int(6.5 * px_per_mm)
    light = cv2.cvtColor(patch_bgr, cv2.COLOR_BGR2LAB)[..., 0].astype(float)
    cy, cx = np.array(light.shape) // 2
    inside = np.s_[cy - half_wid:cy + half_wid, cx - half_len:cx + half_len]
    edges = np.hypot(cv2.Sobel(light, cv2.CV_64F, 1, 0), cv2.Sobel(light, cv2.CV_64F, 0, 1))
    strips = [light[cy - far:cy - near, cx - half_len:cx + half_len],
              light[cy + near:cy + far, cx - half_len:cx + half_len]]
    return float(light[inside].std()), float(edges[inside].mean()), float(np.median(light) - min(map(np.mean, strips)))


def space_rows(reader: Reader, views, checks: list = ()) -> list[dict]:
    rows, readers = [], {}
    for name, truth, view in views:
        if view is None:
            continue
        trace = reader_for(reader, name, checks, readers).trace_view(view, name)
        owners: dict = {}
        for t in truth["tracks"]:
            owners.setdefault((*sorted((t["a"], t["b"])), t["color"]), []).append(t.get("owner") or None)
        colours = trace.evidence.sources.get("colour")
        check = trace.evidence.sources.get("occupancy", np.zeros_like(colours))
        px = trace.lit.px_per_mm
        for i, tid in enumerate(trace.samples.track_ids):
            t = trace.tracks[tid]
            own = owners.get((*sorted((t.a, t.b)), t.color))
            if t.color not in PLAYER_COLORS or own is None or len(own) != 1 or own[0] not in (None, t.color):
                continue
            c = 1 + PLAYER_COLORS.index(t.color)
            net = np.maximum(trace.net_first[i], 1e-4)
            spread, edges, shadow = shape_measures(trace.samples.printed.patches[i], px)
            rows.append({"colour": t.color, "car": own[0] is not None,
                         "net": float(np.log(net[c]) - np.log(net[0])),
                         "colours": float(colours[i, c] - colours[i, 0]),
                         "check": float(check[i, c] - check[i, 0]),
                         "fused": float(trace.evidence.loglik[i, c] - trace.evidence.loglik[i, 0]),
                         "lightness spread": spread, "edges": edges, "shadow": shadow})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="labelled photo folders")
    ap.add_argument("--cache", default="/tmp/ttr_ablate_cache", help="where each photo's located board is kept")
    ap.add_argument("--held-out-checks", type=Path, metavar="DIR", help="as ablate.py's")
    args = ap.parse_args(argv)
    checks = held_out_checks(args.held_out_checks)
    reader = Reader()
    for folder in map(Path, args.sets):
        rows = space_rows(reader, board_views(folder, Path(args.cache) / folder.name, reader), checks)
        print(f"{folder.name}: {len(rows)} spaces, {sum(r['car'] for r in rows)} with cars")
        for m in MEASURES:
            cells = []
            for colour in (*PLAYER_COLORS, "all"):
                rr = [r for r in rows if colour in ("all", r["colour"])]
                cells.append(f"{colour} {auc([r[m] for r in rr if r['car']], [r[m] for r in rr if not r['car']]):.2f}")
            print(f"  {m:17s} " + ", ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
