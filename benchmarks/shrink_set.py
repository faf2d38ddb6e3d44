"""Shrink a labelled photo set the way a messaging app sends photos: a copy of every photo with its
long side at SIDE pixels (area-averaged, JPEG quality 85), its truth's corners scaled with it.

    python3 benchmarks/shrink_set.py SRC SIDE OUT [--only-suffix _small.jpg]
    python3 ../shared/eval/eval_real.py OUT --cmd "ttr detect --json"

SRC holds photos and gt/<photo stem>.json truths in the `eval_real.py` format (`ttr render --out`
makes such a folder; so is ../shared/real/dev). Nothing is written into SRC.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2

QUALITY = 85


def shrink_set(src: Path, side: int, out: Path, only_suffix: str = "") -> int:
    """Write the shrunk copies; returns how many photos were written."""
    (out / "gt").mkdir(parents=True, exist_ok=True)
    n = 0
    for photo in sorted(src.glob("*.jpg")):
        truth_path = src / "gt" / f"{photo.stem}.json"
        if not photo.name.endswith(only_suffix) or not truth_path.exists():
            continue
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        image = cv2.imread(str(photo))
        f = side / max(image.shape[:2])
        small = cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        cv2.imwrite(str(out / photo.name), small, [cv2.IMWRITE_JPEG_QUALITY, QUALITY])
        truth["image_size"] = [small.shape[1], small.shape[0]]
        truth["corners"] = [[(x + 0.5) * f - 0.5, (y + 0.5) * f - 0.5] for x, y in truth["corners"]]
        (out / "gt" / f"{photo.stem}.json").write_text(json.dumps(truth), encoding="utf-8")
        n += 1
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("side", type=int)
    ap.add_argument("out", type=Path)
    ap.add_argument("--only-suffix", default="", help="only photos whose name ends so (e.g. _small.jpg)")
    args = ap.parse_args(argv)
    print(f"{shrink_set(args.src, args.side, args.out, args.only_suffix)} photos written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
