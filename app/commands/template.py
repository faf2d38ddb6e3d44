"""`ttr template`: measure the board template from a flattened empty board, or draw it over a photo.

    ttr template measure FLATTENED_EMPTY.jpg --out FILE.json [--report]
    ttr template overlay FLATTENED.jpg [--template FILE] --out OVERLAY.png [--check]
    ttr template printed FLATTENED_EMPTY.jpg --out FILE.npz

`printed` measures the board's printed look (SIFT features) that the locator matches photos
against; the packaged one is
`calibration/data/usa_printed.npz`.

A flattened photo is the board warped to its outer corners (any size with the board's 795:525
proportions, e.g. 1500 x 990). OpenCV is imported inside `run` so `ttr --help` stays fast.
"""
from __future__ import annotations

from pathlib import Path

import cv2

from calibration.template import load_template
from scoring.errors import TtrError
from vision.locate.printed import measure_reference
from vision.measure import measure_template
from vision.measure.overlay import check_alignment, draw_measurement, draw_template


def add_arguments(parser):
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    m = sub.add_parser("measure", help="measure every space, city and score cell on a flattened empty board")
    m.add_argument("photo", help="flattened photo of the EMPTY board (warped to its outer corners)")
    m.add_argument("--out", required=True, help="template JSON file to write")
    m.add_argument("--debug", help="also write a picture of what was detected to this PNG")
    p = sub.add_parser("printed", help="measure the printed look the locator finds and checks the board by")
    p.add_argument("photo", help="flattened photo of the EMPTY board (warped to its outer corners)")
    p.add_argument("--out", required=True, help="reference .npz file to write")
    o = sub.add_parser("overlay", help="draw the template over a flattened board photo")
    o.add_argument("photo", help="flattened photo of the board (warped to its outer corners)")
    o.add_argument("--template", help="template JSON file (default: the packaged USA template)")
    o.add_argument("--out", required=True, help="PNG/JPEG file to write")
    o.add_argument("--no-labels", action="store_true", help="leave out track ids and score numbers")
    o.add_argument("--check", action="store_true",
                   help="also detect the printed spaces in the photo and report how far the template lies from them")


def _read_image(path: str):
    if not Path(path).is_file():
        raise TtrError(f"no such photo: {path}")
    image = cv2.imread(path, cv2.IMREAD_COLOR)
    if image is None:
        raise TtrError(f"cannot read {path} as an image")
    return image


def _write_image(path: str, image) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(path, image):
        raise TtrError(f"cannot write {path} (use a .png or .jpg name in a writable folder)")


def run(args) -> int:
    image = _read_image(args.photo)
    if args.action == "measure":
        result = measure_template(image, photo_name=Path(args.photo).name)
        result.template.save(args.out)
        print(result.summary())
        if args.debug:
            _write_image(args.debug, draw_measurement(image, result))
        return 0
    if args.action == "printed":
        try:
            ref = measure_reference(image)
        except ValueError as e:
            raise TtrError(f"{args.photo}: {e}") from None
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        ref.save(args.out)
        print(f"wrote {args.out}: {len(ref.keypoints_mm)} features")
        return 0

    template = load_template(args.template)
    _write_image(args.out, draw_template(image, template, labels=not args.no_labels))
    print(f"wrote {args.out}")
    if args.check:
        print(check_alignment(image, template).summary())
    return 0
