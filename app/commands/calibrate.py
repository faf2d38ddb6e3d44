"""`ttr calibrate EMPTY_PHOTO... --out DIR`: measure your own empty board for `ttr detect --calibration DIR`.

Refused with one line: a photo that cannot be read, one with no board, one of a played board (trains
on it would be learnt as the empty look), and an --out that is a file or cannot be written. DIR is
made if missing; the calibration is written atomically (a failure leaves the previous one whole).
"""
from __future__ import annotations

import sys

from tqdm import tqdm

from calibration.user import CalibrationError
from scoring.files import writable_dir
from vision.calibrate import fit_calibration


def add_arguments(parser):
    parser.add_argument("photos", nargs="+", metavar="EMPTY_PHOTO", help="photos of your board with no trains on it")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write the calibration into")


def run(args) -> int:
    writable_dir(args.out, "calibration folder (--out)", CalibrationError)  # before minutes of work
    # On stderr, and only on a terminal: stdout stays the plain summary scripts read.
    with tqdm(total=2 * len(args.photos), desc="calibrating", unit="step", file=sys.stderr, disable=None) as bar:
        cal, warnings = fit_calibration(args.photos, step=bar.update)
    path = cal.save(args.out)
    for w in warnings:
        print(f"warning: {w}")
    print(f"calibrated {len(cal.photos)} photo(s): {path}")
    return 0
