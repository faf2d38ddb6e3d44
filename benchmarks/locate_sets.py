"""The locator on labelled sets, as the reader runs it: boards found right, found wrong, refused, and how long it took.

    python3 benchmarks/locate_sets.py SET [SET ...] [--rows FILE]

Each SET is a labelled photo folder (the `eval_real.py` layout: photos and gt/<stem>.json with the
board's true corners). Each photo is located as the reader locates a photo file
(`Reader.view_path`: decoded reduced, at full size where that shows no board, and flattened). Per
set it prints one SUMMARY line: photos located within 1 % of the diagonal
of their true corners ("right"), further off ("wrong"), refused (split by whether the board, by its
true corners, is seen finer than the city dots need, `LocateConfig.min_px_per_mm`, with the
refusal's first words), photos with no board, and the median and mean time of `view_path`.
`--rows` keeps each photo's verdict (JSON), to compare two versions photo by photo.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import labelled_photos  # noqa: E402 (this folder: the scripts' own helper)

from scoring.errors import TtrError  # noqa: E402
from vision.image_io import read_header  # noqa: E402
from vision.locate import LocateConfig  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.rectify import photo_px_per_mm  # noqa: E402

RIGHT_PCT = 1.0  # a corner further off than this share of the diagonal misreads tracks


def verdict(reader: Reader, photo: Path, truth_corners, cfg: LocateConfig = LocateConfig()) -> str:
    """One photo's verdict: "right", "wrong", "refused, fine enough: ..." or "refused, too small: ..."
    (the refusal's first words), or "no board: refused" / "no board: found" without true corners."""
    try:
        found = reader.view_path(str(photo)).location.corners_xy
    except TtrError as e:
        found = str(e).split(":")[0].split(" (")[0]  # its first words, without the photo's figures
    if truth_corners is None:
        return "no board: refused" if isinstance(found, str) else "no board: found"
    truth = np.asarray(truth_corners, float)
    if isinstance(found, str):
        scale = "fine enough" if photo_px_per_mm(truth) >= cfg.min_px_per_mm else "too small"
        return f"refused, {scale}: {found}"
    err = np.abs(found - truth).max() / float(np.hypot(*read_header(str(photo)).size_wh)) * 100
    return "right" if err < RIGHT_PCT else "wrong"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", type=Path, help="labelled photo folders")
    ap.add_argument("--rows", type=Path, help="keep each photo's verdict here (JSON)")
    args = ap.parse_args(argv)
    reader, rows = Reader(use_classifier=False), {}
    for folder in args.sets:
        counts, seconds, verdicts = collections.Counter(), [], {}
        for photo, gt in labelled_photos(folder):
            truth = json.loads(gt.read_text(encoding="utf-8")).get("corners")
            t0 = time.perf_counter()
            verdicts[photo.name] = verdict(reader, photo, truth)
            seconds.append(time.perf_counter() - t0)
            counts[verdicts[photo.name]] += 1
        rows[folder.name] = verdicts
        parts = " ".join(f"{k.replace(' ', '_')}={n}" for k, n in sorted(counts.items()))
        print(f"{folder.name}: SUMMARY photos={len(verdicts)} {parts} "
              f"median_s={np.median(seconds):.3f} mean_s={np.mean(seconds):.3f}", flush=True)
    if args.rows:
        args.rows.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
