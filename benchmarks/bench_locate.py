"""Speed of the board-finding stage: load + locate + flatten on a 12-megapixel photo.

    python3 benchmarks/bench_locate.py [PHOTO] [--repeat N] [--reduce R]

PHOTO defaults to ../shared/real/dev/IMG_4134.jpg (4032 x 3024) when present, else a synthetic
12 MP photo (a stand-in board from the tests, enlarged and saved as JPEG). Prints the median
wall-clock milliseconds of each step and of the total, and the total CPU time (the fairer figure
on a shared machine; OpenCV may use more than one thread, so CPU can exceed wall), for the full-size decode and for `reduce=2` (a
2016 x 1512 decode: the pipeline flattens at 2 px/mm, which such a decode still exceeds).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision.image_io import load_photo  # noqa: E402
from vision.locate import locate_board, scale_location  # noqa: E402
from vision.rectify import flatten  # noqa: E402


def _synthetic_12mp() -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_locate import synthetic_photo

    photo, _ = synthetic_photo(3, size_wh=(1344, 1008), turn_deg=4, fill=0.85, kind="wood")
    big = cv2.resize(photo, (4032, 3024), interpolation=cv2.INTER_CUBIC)
    path = Path(tempfile.mkdtemp()) / "synthetic_12mp.jpg"
    cv2.imwrite(str(path), big, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return path


def bench(path: Path, repeat: int, reduce: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"load": [], "locate": [], "flatten": [], "total": [], "cpu": []}
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        img = load_photo(path, reduce=reduce)
        t1 = time.perf_counter()
        loc = locate_board(img)
        t2 = time.perf_counter()
        flatten(img, loc.corners_xy, px_per_mm=2.0)
        t3 = time.perf_counter()
        if reduce > 1:
            loc = scale_location(loc, reduce)
        c3 = time.process_time()
        for k, v in (("load", t1 - t0), ("locate", t2 - t1), ("flatten", t3 - t2), ("total", t3 - t0),
                     ("cpu", c3 - c0)):
            times[k].append(v * 1000)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = ROOT.parent / "shared" / "real" / "dev" / "IMG_4134.jpg"
    ap.add_argument("photo", nargs="?", default=str(default) if default.exists() else "")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--reduce", type=int, default=0, help="only this reduce (1/2/4); default: 1 and 2")
    args = ap.parse_args(argv)
    path = Path(args.photo) if args.photo else _synthetic_12mp()
    img = load_photo(path)
    print(f"photo {path} ({img.shape[1]}x{img.shape[0]}), median of {args.repeat}")
    bench(path, 1, 1)  # warm-up: imports, caches
    for reduce in ([args.reduce] if args.reduce else [1, 2]):
        r = bench(path, args.repeat, reduce)
        print(f"reduce={reduce}: load {r['load']:.0f} ms, locate {r['locate']:.0f} ms, "
              f"flatten {r['flatten']:.0f} ms, TOTAL {r['total']:.0f} ms wall, {r['cpu']:.0f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
