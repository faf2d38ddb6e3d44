"""Fit the reader to a user's own board from photos of it EMPTY.

In:  one or more photos of the empty board (any light, any angle the reader accepts).
Out: `Calibration`: every space's empty colour (light-normalised median Lab of its inner part and
     its spread), the median over the photos, saved as DIR/calibration.json; `load_calibration(DIR)`
     reads it back for `read_board(..., calibration=...)`.

Why it helps: printings differ (inks, paper, fading), and light normalisation against the paper
brings every photo to one frame, so an empty space's colour measured once is what it looks like
empty in any later photo. The reader compares each space with its own empty colour instead of the
generic printed colour.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.errors import TtrError

FILE_NAME = "calibration.json"
BOARD_FILE = "empty_board.png"
FORMAT = 1


class CalibrationError(TtrError):
    """A calibration folder is missing, malformed or does not fit the board."""


@dataclass(frozen=True)
class Calibration:
    empty_lab: np.ndarray  # (309, 3) light-normalised Lab of each space's inner part, board order
    empty_spread: np.ndarray  # (309, 3) inter-quartile range of the same pixels
    photos: tuple[str, ...] = ()
    offsets_mm: np.ndarray | None = None  # (309, 2) small shift of each space from the template
    board_bgr: np.ndarray | None = None  # the empty board, flattened at PX_PER_MM and light-normalised

    def to_dict(self) -> dict:
        d = {"format": FORMAT, "photos": list(self.photos),
             "empty_lab": np.round(self.empty_lab, 2).tolist(),
             "empty_spread": np.round(self.empty_spread, 2).tolist()}
        if self.offsets_mm is not None:
            d["offsets_mm"] = np.round(self.offsets_mm, 2).tolist()
        return d

    def save(self, out_dir: str | Path) -> Path:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        p = out / FILE_NAME
        p.write_text(json.dumps(self.to_dict()) + "\n", encoding="utf-8")
        if self.board_bgr is not None:
            import cv2

            cv2.imwrite(str(out / BOARD_FILE), self.board_bgr)
        return p


def load_calibration(path: str | Path) -> Calibration:
    """Read DIR/calibration.json (or the file itself)."""
    p = Path(path)
    if p.is_dir():
        p = p / FILE_NAME
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        lab = np.asarray(d["empty_lab"], dtype=float)
        spread = np.asarray(d["empty_spread"], dtype=float)
        off = np.asarray(d["offsets_mm"], dtype=float) if "offsets_mm" in d else None
    except FileNotFoundError:
        raise CalibrationError(f"no calibration at {path} (make one with `ttr calibrate`)") from None
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as e:
        raise CalibrationError(f"calibration {p} is malformed ({type(e).__name__})") from None
    if lab.shape != (309, 3) or spread.shape != (309, 3) or (off is not None and off.shape != (309, 2)):
        raise CalibrationError(f"calibration {p} does not fit this board (309 spaces expected)")
    board = None
    if (p.parent / BOARD_FILE).exists():
        import cv2

        board = cv2.imread(str(p.parent / BOARD_FILE), cv2.IMREAD_COLOR)
    return Calibration(lab, spread, tuple(d.get("photos", ())), off, board)


def fit_calibration(photos: list[str], reader=None) -> tuple[Calibration, list[str]]:
    """Measure every space on each empty-board photo and keep the median. Returns (calibration,
    warnings). A photo that cannot be read raises its PhotoError/locator error."""
    flats = [_flatten_photo(photo)[0] for photo in photos]
    return fit_from_flattened(flats, [str(p) for p in photos], reader)


def fit_from_flattened(flats: list[np.ndarray], names: list[str], reader=None) -> tuple[Calibration, list[str]]:
    """The calibration of boards already flattened at PX_PER_MM (see `fit_calibration`)."""
    from vision.read import PX_PER_MM, Reader
    from vision.spaces import align_to_reference, normalise_light

    reader = reader or Reader(calibration=None, use_classifier=False)
    quads_px = reader.quads_px(PX_PER_MM)
    boards, warnings = [], []
    for flat, name in zip(flats, names):
        norm = normalise_light(flat, quads_px, PX_PER_MM)
        if boards:
            norm, score = align_to_reference(norm, boards[0], PX_PER_MM)
            if score < 0.5:
                warnings.append(f"{name}: does not match the first photo's board well (ECC {score:.2f})")
        boards.append(norm)
        ev = reader.evidence(flat)
        # A calibration photo should be empty: say so if it looks played.
        claimed = int((ev.probs[:, 0] < 0.5).sum())
        if claimed > 30:
            warnings.append(f"{name}: {claimed} spaces do not look empty; is the board empty?")
    board = np.median(np.stack(boards), axis=0).astype(np.uint8) if len(boards) > 1 else boards[0]
    from vision.spaces import CropGeometry, crop_spaces

    sp = crop_spaces(board, quads_px, PX_PER_MM, CropGeometry(), reader.track_ids, reader.index)
    return Calibration(sp.lab, sp.lab_spread, tuple(names), None, board), warnings


def _flatten_photo(path: str):
    from vision.image_io import load_photo, read_header
    from vision.locate import locate_board
    from vision.read import PX_PER_MM
    from vision.rectify import flatten

    w, h = read_header(path).size_wh
    reduce = 1
    while max(w, h) / (reduce * 2) >= 2000 and reduce < 8:
        reduce *= 2
    img = load_photo(path, reduce=reduce)
    loc = locate_board(img)
    return flatten(img, loc.corners_xy, px_per_mm=PX_PER_MM), loc
