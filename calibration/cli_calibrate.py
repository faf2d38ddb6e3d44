"""`ttr calibrate EMPTY_PHOTO... --out DIR`: measure your own empty board for `ttr detect --calibration DIR`."""
from __future__ import annotations


def add_arguments(parser):
    parser.add_argument("photos", nargs="+", metavar="EMPTY_PHOTO", help="photos of your board with no trains on it")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write the calibration into")


def run(args) -> int:
    from calibration.fit import fit_calibration

    cal, warnings = fit_calibration(args.photos)
    path = cal.save(args.out)
    for w in warnings:
        print(f"warning: {w}")
    print(f"calibrated {len(cal.photos)} photo(s): {path}")
    return 0
