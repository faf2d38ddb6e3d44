"""Fit the reader to a user's own board from photos of it EMPTY.

In:  one or more photos of the empty board (any light, any angle the reader accepts).
Out: `Calibration`: for each photo, the empty board flattened and light-normalised (`EmptyView`:
     the image and every space's colour), saved in DIR (calibration.json + empty_board_<i>.png);
     `load_calibration(DIR)` reads it back for `read_board(..., calibration=...)`.

Why it helps: printings differ (inks, paper, fading), and the reader then compares each space with
what that very space looks like empty, pixel by pixel (after aligning the two boards on their map
drawings), instead of with a generic printed colour. Light normalisation against the paper removes
most of a light's colour, but not all (inks answer differently to a warm lamp and to daylight), so
each photo is kept as its own view and the reader uses the one closest to the photo it reads:
calibrating under the lights you play in helps most.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scoring.errors import TtrError

FILE_NAME = "calibration.json"
BOARD_FILE = "empty_board_{}.png"
FORMAT = 2
N_SPACES = 309


class CalibrationError(TtrError):
    """A calibration folder is missing, malformed or does not fit the board."""


@dataclass(frozen=True)
class EmptyView:
    """One photo of the empty board."""

    board_bgr: np.ndarray  # flattened at PX_PER_MM, light-normalised, aligned to the first view
    lab: np.ndarray  # (309, 3) light-normalised Lab of each space's inner part
    spread: np.ndarray  # (309, 3) inter-quartile range of the same pixels
    photo: str = ""
    mean: np.ndarray | None = None  # (309, 3) mean Lab of the same pixels


@dataclass(frozen=True)
class Calibration:
    views: tuple[EmptyView, ...]

    def __post_init__(self):
        if not self.views:
            raise CalibrationError("a calibration needs at least one empty-board photo")
        for v in self.views:
            if v.lab.shape != (N_SPACES, 3) or v.spread.shape != (N_SPACES, 3):
                raise CalibrationError(f"calibration does not fit this board ({N_SPACES} spaces expected)")

    @property
    def photos(self) -> tuple[str, ...]:
        return tuple(v.photo for v in self.views)

    @property
    def empty_lab(self) -> np.ndarray:
        """(309, 3) median over the views."""
        return np.median(np.stack([v.lab for v in self.views]), axis=0)

    def nearest_view(self, lab: np.ndarray) -> EmptyView:
        """The view whose space colours are closest to `lab` (309, 3) of the photo being read.

        Closeness is the 10th percentile of the per-space colour distances: the empty spaces of
        a played board are the low end, so the cars do not sway the choice."""
        scores = [np.percentile(np.linalg.norm(np.asarray(lab) - v.lab, axis=1), 10) for v in self.views]
        return self.views[int(np.argmin(scores))]

    def to_dict(self) -> dict:
        return {"format": FORMAT, "spaces": N_SPACES,
                "views": [{"photo": v.photo, "board": BOARD_FILE.format(i),
                           "lab": np.round(v.lab, 2).tolist(), "spread": np.round(v.spread, 2).tolist(),
                           "mean": np.round(v.lab if v.mean is None else v.mean, 2).tolist()}
                          for i, v in enumerate(self.views)]}

    def save(self, out_dir: str | Path) -> Path:
        import cv2

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for i, v in enumerate(self.views):
            cv2.imwrite(str(out / BOARD_FILE.format(i)), v.board_bgr)
        p = out / FILE_NAME
        p.write_text(json.dumps(self.to_dict()) + "\n", encoding="utf-8")
        return p


def load_calibration(path: str | Path) -> Calibration:
    """Read DIR/calibration.json (or the file itself) and its board images."""
    import cv2

    p = Path(path)
    if p.is_dir():
        p = p / FILE_NAME
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        views = []
        for v in d["views"]:
            img = cv2.imread(str(p.parent / Path(v["board"]).name), cv2.IMREAD_COLOR)
            if img is None:
                raise CalibrationError(f"calibration {p}: board image {v['board']} is missing or unreadable")
            views.append(EmptyView(img, np.asarray(v["lab"], dtype=float), np.asarray(v["spread"], dtype=float),
                                   str(v.get("photo", "")), np.asarray(v.get("mean", v["lab"]), dtype=float)))
    except FileNotFoundError:
        raise CalibrationError(f"no calibration at {path} (make one with `ttr calibrate`)") from None
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as e:
        raise CalibrationError(f"calibration {p} is malformed ({type(e).__name__})") from None
    return Calibration(tuple(views))


def fit_calibration(photos: list[str], reader=None) -> tuple[Calibration, list[str]]:
    """Measure the empty board on each photo. Returns (calibration, warnings). A photo that cannot
    be read raises its PhotoError / locator error (one line)."""
    flats = [_flatten_photo(photo) for photo in photos]
    return fit_from_flattened(flats, [str(p) for p in photos], reader)


def fit_from_flattened(flats: list[np.ndarray], names: list[str], reader=None) -> tuple[Calibration, list[str]]:
    """The calibration of empty boards already flattened at PX_PER_MM (see `fit_calibration`)."""
    from vision.read import PX_PER_MM, Reader
    from vision.spaces import (CropGeometry, align_to_reference, crop_spaces, normalise_light, register_to_template,
                               warp_quads_frame)

    reader = reader or Reader(calibration=None, use_classifier=False)
    quads_px = reader.quads_px(PX_PER_MM)
    warnings: list[str] = []
    norms = [normalise_light(flat, quads_px, PX_PER_MM) for flat in flats]
    # The calibration's frame is the template's: the photo whose spaces register best on the
    # template is put on it, and the others are aligned to that one on their map drawings (a finer
    # match than spaces alone).
    regs = [register_to_template(norm, quads_px, PX_PER_MM) for norm in norms]
    anchor = int(np.argmax([score for _, score in regs]))
    moved, score = regs[anchor]
    anchor_board = warp_quads_frame(norms[anchor], moved, quads_px) if score > 0 else norms[anchor]
    views: list[EmptyView] = []
    for i, (flat, norm, name) in enumerate(zip(flats, norms, names)):
        if i == anchor:
            norm = anchor_board
        else:
            norm, score = align_to_reference(norm, anchor_board, PX_PER_MM)
            if score < 0.5:
                warnings.append(f"{name}: does not line up with the other photos' board (match {score:.2f})")
        sp = crop_spaces(norm, quads_px, PX_PER_MM, CropGeometry(), reader.track_ids, reader.index)
        # A calibration photo should be empty: say so if it looks played.
        claimed = [t for t in reader.decide(reader.evidence(flat)) if t.owner and not t.doubtful]
        if len(claimed) > 10:
            warnings.append(f"{name}: {len(claimed)} tracks look claimed; calibrate with photos of the EMPTY board")
        views.append(EmptyView(norm, sp.lab.astype(float), sp.lab_spread.astype(float), name,
                               sp.lab_mean.astype(float)))
    return Calibration(tuple(views)), warnings


def _flatten_photo(path: str) -> np.ndarray:
    from vision.image_io import load_photo, read_header
    from vision.locate import locate_board
    from vision.read import PX_PER_MM, decode_reduction
    from vision.rectify import flatten

    w, h = read_header(path).size_wh
    img = load_photo(path, reduce=decode_reduction(w, h))
    loc = locate_board(img)
    return flatten(img, loc.corners_xy, px_per_mm=PX_PER_MM)
