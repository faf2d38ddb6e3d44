"""A user's calibration: their own board as their camera sees it EMPTY, its files and their checks.

`Calibration`: for each photo of the empty board, the board flattened and light-normalised
(`EmptyView`: the image and every space's colour), saved in DIR (calibration.json +
empty_board_<i>.png); `load_calibration(DIR)` reads it back (every field checked) for
`vision.read.Reader`. It is measured from photos by `vision.calibrate.fit_calibration`.

Why it helps: printings differ (inks, paper, fading), and the reader then compares each space with
what that very space looks like empty, pixel by pixel (after aligning the two boards on their map
drawings), instead of with a generic printed colour. Light normalisation against the paper removes
most of a light's colour, but not all (inks answer differently to a warm lamp and to daylight), so
each photo is kept as its own view and the reader uses the one closest to the photo it reads:
calibrating under the lights you play in helps most. In other light a view does harm (its print
reads as cars), so the reader checks the nearest view against each photo first and reads a photo it
does not fit without it (`vision.settings.CalibrationGate`).
"""
from __future__ import annotations

import io
import json
import os
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from calibration.template import flattened_size
from scoring.board import load_board
from scoring.errors import TtrError
from scoring.files import atomic_write, read_capped, writable_dir
from scoring.game import parse_json

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
        if len(self.views) > MAX_VIEWS:
            raise CalibrationError(f"a calibration holds at most {MAX_VIEWS} photos, not {len(self.views)}")
        for n, v in enumerate(self.views, 1):
            for field in ("lab", "spread") + (("mean",) if v.mean is not None else ()):
                problem = _array_problem(getattr(v, field), field)
                if problem:
                    raise CalibrationError(f"calibration view {n}: {problem}")

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
        """Write DIR/calibration.json and its board images; nothing already there is damaged by a
        failure: each board image gets a new name, the JSON is replaced in one rename, and only then
        are the previous calibration's images removed."""

        out = writable_dir(out_dir, "calibration folder", CalibrationError)
        token = uuid.uuid4().hex[:8]
        names = [BOARD_FILE.format(f"{i}_{token}") for i in range(len(self.views))]
        for name, v in zip(names, self.views):
            ok, png = cv2.imencode(".png", v.board_bgr)
            if not ok:
                raise CalibrationError(f"calibration view {name}: cannot encode the board image")
            atomic_write(out / name, png.tobytes(), CalibrationError)
        d = self.to_dict()
        for view, name in zip(d["views"], names):
            view["board"] = name
        p = atomic_write(out / FILE_NAME, json.dumps(d) + "\n", CalibrationError)
        for old in out.glob(BOARD_FILE.format("*")):
            if old.name not in names:
                old.unlink(missing_ok=True)
        return p


# Caps on a calibration read back: a view is ~25 kB of JSON and a 1590x1050 board image (~3 MB PNG).
MAX_VIEWS = 32
MAX_CALIBRATION_BYTES = 2_000_000
MAX_BOARD_IMAGE_BYTES = 20_000_000
LAB_RANGE = (-256.0, 256.0)  # any Lab scale OpenCV uses (8-bit 0..255 or float -128..127 for a, b)


def _array_problem(a, field: str) -> str | None:
    """What is wrong with a view's (309, 3) colour array, or None."""
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        return f"{field} is not a table of numbers"
    if arr.shape != (N_SPACES, 3):
        return f"{field} has shape {'x'.join(map(str, arr.shape)) or 'scalar'}, not {N_SPACES}x3 (one colour per space)"
    if not np.isfinite(arr).all():
        return f"{field} holds {int((~np.isfinite(arr)).sum())} values that are not numbers (NaN or infinite)"
    lo, hi = LAB_RANGE
    if arr.min() < (0.0 if field == "spread" else lo) or arr.max() > hi:
        return f"{field} holds values outside {0 if field == 'spread' else lo:g}..{hi:g} (not Lab colours)"
    return None


def load_calibration(path: str | Path) -> Calibration:
    """Read DIR/calibration.json (or the file itself) and its board images.

    Every part is checked and a bad one refused with one line naming it (`CalibrationError`): only
    regular files of capped size, JSON nested at most a few levels, 1..MAX_VIEWS views, each with
    309x3 finite Lab arrays and a board image of exactly the flattened board's size."""

    p = Path(path)
    try:
        if stat.S_ISDIR(os.stat(p).st_mode):
            p = p / FILE_NAME
    except FileNotFoundError:
        raise CalibrationError(f"no calibration at {path} (make one with `ttr calibrate`)") from None
    except (OSError, ValueError):
        pass  # read_capped says what is wrong
    try:
        if stat.S_ISDIR(os.stat(p).st_mode):
            raise CalibrationError(f"calibration {p}: is a folder, not the calibration file "
                                   "(make one with `ttr calibrate`)")
    except FileNotFoundError:
        raise CalibrationError(f"no calibration at {path} (make one with `ttr calibrate`)") from None
    except (OSError, ValueError):
        pass
    data = read_capped(p, MAX_CALIBRATION_BYTES, "calibration file", CalibrationError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CalibrationError(f"calibration {p}: not a text file (expected UTF-8 JSON)") from None
    try:
        d = parse_json(text, f"calibration {p}", limit=MAX_CALIBRATION_BYTES)
    except CalibrationError:
        raise
    except TtrError as e:
        raise CalibrationError(str(e)) from None
    views = [_load_view(p, n, v) for n, v in enumerate(_views_of(p, d), 1)]
    return Calibration(tuple(views))


def _views_of(p: Path, d) -> list:
    if not isinstance(d, dict) or not isinstance(d.get("views"), list):
        raise CalibrationError(f"calibration {p} is malformed (expected an object with a \"views\" list)")
    if d.get("format", FORMAT) != FORMAT:
        raise CalibrationError(f"calibration {p}: format {repr(d.get('format'))[:40]} is not {FORMAT}; "
                               "make it again with `ttr calibrate`")
    if d.get("spaces", N_SPACES) != N_SPACES:
        raise CalibrationError(f"calibration {p} does not fit this board ({N_SPACES} spaces expected)")
    views = d["views"]
    if not views:
        raise CalibrationError(f"calibration {p} holds no views")
    if len(views) > MAX_VIEWS:
        raise CalibrationError(f"calibration {p} holds {len(views)} views; at most {MAX_VIEWS} are read")
    return views


def _load_view(p: Path, n: int, v) -> EmptyView:
    where = f"calibration {p}: view {n}"
    if not isinstance(v, dict):
        raise CalibrationError(f"{where} is not an object")
    for key in ("board", "lab", "spread"):
        if key not in v:
            raise CalibrationError(f"{where} has no \"{key}\"")
    arrays = {}
    for key in ("lab", "spread", "mean"):
        if key in v:
            problem = _array_problem(v[key], key)
            if problem:
                raise CalibrationError(f"{where}: {problem}")
            arrays[key] = np.asarray(v[key], dtype=float)
    photo = v.get("photo", "")
    if not isinstance(photo, str) or len(photo) > 4096:
        raise CalibrationError(f"{where}: \"photo\" must be a file name")
    board = v["board"]
    if not isinstance(board, str) or not board or len(board) > 255:
        raise CalibrationError(f"{where}: \"board\" must be the name of a PNG beside calibration.json")
    image_path = p.parent / Path(board).name  # beside the JSON, never elsewhere
    try:
        data = read_capped(image_path, MAX_BOARD_IMAGE_BYTES, "board image", CalibrationError)
        with Image.open(io.BytesIO(data)) as header:  # the size from the header, before decoding
            size = header.size
    except CalibrationError as e:
        raise CalibrationError(f"{where}: board image {e}") from None
    except (OSError, ValueError, Image.DecompressionBombError):
        raise CalibrationError(f"{where}: board image {image_path.name}: is not an image") from None
    want = flattened_size(load_board().board_mm)
    if tuple(size) != tuple(want):
        raise CalibrationError(f"{where}: board image {image_path.name} is {size[0]}x{size[1]} pixels, "
                               f"not the flattened board's {want[0]}x{want[1]}")
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None or img.shape[1::-1] != tuple(want):
        raise CalibrationError(f"{where}: board image {image_path.name} is unreadable")
    return EmptyView(img, arrays["lab"], arrays["spread"], photo, arrays.get("mean", arrays["lab"]))
