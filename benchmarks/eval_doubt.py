"""Does the reader say where it is unsure? Wrong tracks against the doubtful flag, on labelled photos.

    python3 benchmarks/eval_doubt.py [DIR] [--calibration CAL_DIR]

DIR holds photos and gt/<photo stem>.json truths in the `eval_real.py` format (default
../shared/real/dev relative to the repository; `ttr render --out DIR` makes such a folder). Per photo:
how many tracks were marked doubtful, how many were read wrong, and any wrong track NOT marked
doubtful (the ones a person would not be asked to check). Tracks with the same cities and colour (a
one-colour double) are compared as a group, as eval_real.py does. Ends with a SUMMARY line.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import compare_tracks, labelled_photos  # noqa: E402 (this folder: the scripts' own helper)

from scoring.errors import TtrError  # noqa: E402
from vision.read import Reader  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=str(Path(__file__).resolve().parents[2] / "shared" / "real" / "dev"))
    ap.add_argument("--calibration", metavar="CAL_DIR")
    args = ap.parse_args(argv)
    folder = Path(args.dir)
    calibration = None
    if args.calibration:
        from calibration.user import load_calibration

        calibration = load_calibration(args.calibration)
    reader = Reader(calibration=calibration)
    n_wrong = n_flagged = n_doubtful = n_photos = 0
    for photo, gt in labelled_photos(folder):
        try:
            reading = reader.read_path(str(photo))
        except TtrError as e:
            print(f"{photo.name:28s} FAILED: {e}")
            continue
        seen = compare_tracks(json.loads(gt.read_text(encoding="utf-8")), reading.tracks)
        wrong, doubtful = seen["wrong"], seen["doubtful"]
        unflagged = [w[:5] for w in wrong if not w[5]]
        n_photos += 1
        n_wrong += len(wrong)
        n_flagged += len(wrong) - len(unflagged)
        n_doubtful += doubtful
        print(f"{photo.name:28s} doubtful {doubtful:3d}  wrong {len(wrong):2d}  wrong but not doubtful: {unflagged or '-'}")
    print(f"SUMMARY photos={n_photos} wrong={n_wrong} wrong_marked_doubtful={n_flagged} "
          f"doubtful={n_doubtful} doubtful_per_photo={n_doubtful / max(n_photos, 1):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
