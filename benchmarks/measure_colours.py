"""What colours a labelled photo set's print, cars and paper show: the measurements the varied
world's ranges (`vision/synth/world.py`) are anchored on.

    python3 benchmarks/measure_colours.py SRC [--all]

SRC holds photos and gt/<photo stem>.json truths in the `eval_real.py` format (../shared/real/dev).
Each photo is flattened through its true corners at 2 px/mm and its light evened out on its paper
(`vision.spaces.light_board`, as the reader does); then, per printed colour, the inner part of
every *empty* space, and per player, every *claimed* space, is measured in CIE L*C*h (lightness,
chroma, hue angle in degrees). Printed: one line per photo with its raw paper colour (before the
light was evened out: the photo's white balance and exposure), then per class the median over
photos of each photo's median, and the range of the photos' medians. A `_small` copy is skipped
where its full-size photo is there (the same board twice), unless `--all`.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import labelled_photos  # noqa: E402 (this folder: the scripts' own helper)

from calibration.template import FLAT_PX_PER_MM, load_template  # noqa: E402
from scoring.board import load_board  # noqa: E402
from vision.image_io import load_photo  # noqa: E402
from vision.light import light_board, paper_light_map  # noqa: E402
from vision.rectify import flatten  # noqa: E402
from vision.spaces import inner_mean_lab  # noqa: E402
from vision.synth.render import owners_from_truth  # noqa: E402


def lch(lab_cv: np.ndarray) -> np.ndarray:
    """OpenCV 8-bit Lab (n, 3) -> CIE L* (0-100), C*, h (degrees 0-360), (n, 3)."""
    lab = np.asarray(lab_cv, float).reshape(-1, 3)
    L, a, b = lab[:, 0] * 100 / 255, lab[:, 1] - 128, lab[:, 2] - 128
    return np.stack([L, np.hypot(a, b), np.degrees(np.arctan2(b, a)) % 360], axis=1)


def measure(image_bgr: np.ndarray, truth: dict, quads_mm: np.ndarray, track_of_space: np.ndarray):
    """{("print", colour) | ("car", player): (n, 3) L*C*h of each space}, and the raw paper BGR
    (the lanes of a double held differently, which the truth does not tell apart, left out)."""
    flat = flatten(image_bgr, truth["corners"], FLAT_PX_PER_MM)
    lit = light_board(flat, quads_mm, FLAT_PX_PER_MM)
    lab = inner_mean_lab(lit.board, lit.quads_px)
    paper = np.nanmedian(paper_light_map(flat, lit.quads_px, FLAT_PX_PER_MM).reshape(-1, 3), axis=0)
    board = load_board()
    truth_owners = owners_from_truth(board, truth)
    unsure = {i for ids, _ in truth_owners.unsure for i in ids}
    out = defaultdict(list)
    for k, tid in enumerate(track_of_space):
        if tid in unsure:
            continue
        owner = truth_owners.owner[tid]
        out[("car", owner) if owner else ("print", board.tracks[tid].color)].append(lab[k])
    return {key: lch(np.array(v)) for key, v in out.items()}, paper


def _hue_median(h: np.ndarray) -> float:
    """The circular median of hue angles (degrees): the median of the angles around their mean direction."""
    mean = np.degrees(np.arctan2(np.sin(np.radians(h)).mean(), np.cos(np.radians(h)).mean()))
    return float((mean + np.median((h - mean + 180) % 360 - 180)) % 360)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("--all", action="store_true", help="measure _small copies too")
    args = ap.parse_args(argv)
    template = load_template()
    spaces = template.all_spaces()
    found = labelled_photos(Path(args.src))
    stems = {p.stem for p, _ in found}
    per_class = defaultdict(list)  # class -> per-photo medians (L, C, h)
    for photo, gt in found:
        if not args.all and photo.stem.endswith("_small") and photo.stem[:-6] in stems:
            continue
        truth = json.loads(gt.read_text(encoding="utf-8"))
        classes, paper = measure(load_photo(str(photo)), truth, spaces.quads, spaces.track_ids)
        print(f"{photo.name:30s} paper BGR {np.round(paper).astype(int).tolist()}")
        for key, v in classes.items():
            per_class[key].append([np.median(v[:, 0]), np.median(v[:, 1]), _hue_median(v[:, 2])])
    print(f"{'class':16s} photos   L* median [range]      C* median [range]      h median [range]")
    for key in sorted(per_class):
        m = np.array(per_class[key])
        hs = m[:, 2]
        hm = _hue_median(hs)
        dh = (hs - hm + 180) % 360 - 180
        print(f"{key[0] + ' ' + key[1]:16s} {len(m):5d}"
              f"   {np.median(m[:, 0]):5.1f} [{m[:, 0].min():5.1f}, {m[:, 0].max():5.1f}]"
              f"   {np.median(m[:, 1]):5.1f} [{m[:, 1].min():5.1f}, {m[:, 1].max():5.1f}]"
              f"   {hm:5.1f} [{hm + dh.min():6.1f}, {hm + dh.max():6.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
