"""The board template: where every one of the 309 train spaces, 36 cities and 100 score cells lies.

Coordinates are millimetres from the board's top-left outer corner (the score-track corner "20"),
x right, y down, on the whole 795 x 525 mm board (score track included). `load_template()` reads
`calibration/data/usa_template.json` (measured from a flattened empty board by
`vision.measure`) and checks it against the board facts in `scoring.board` before anyone uses
it. In:  a template file (or the packaged one). Out: a frozen `Template` with numpy fields.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np

from scoring.board import Board, load_board
from scoring.errors import TtrError

FLAT_PX_PER_MM = 2.0  # boards are read and calibrated flattened onto the template frame at this scale


def flattened_size(board_mm, px_per_mm: float = FLAT_PX_PER_MM) -> tuple[int, int]:
    """(width, height) in pixels of a board of `board_mm` flattened at `px_per_mm`."""
    return int(round(board_mm[0] * px_per_mm)), int(round(board_mm[1] * px_per_mm))


class TemplateError(TtrError):
    """A template file does not fit the board (wrong tracks, spaces or shapes)."""


@dataclass(frozen=True)
class TrackTemplate:
    """One track's printed spaces, in order from city `a` to city `b`."""

    id: int  # index into scoring.board.load_board().tracks
    a: str
    b: str
    color: str  # printed colour
    length: int
    spaces: np.ndarray  # (length, 4, 2) float: each space's corners, in order around the space
    space_colors_lab: np.ndarray | None = None  # (length, 3) mean printed colour, OpenCV Lab 0..255

    def __post_init__(self):
        if self.spaces.shape != (self.length, 4, 2):
            raise TemplateError(f"track {self.id} {self.a}-{self.b}: spaces have shape "
                                f"{self.spaces.shape}, expected ({self.length}, 4, 2)")

    def centers(self) -> np.ndarray:
        """(length, 2) centre of each space."""
        return self.spaces.mean(axis=1)


class Spaces(NamedTuple):
    """Every space of the board, as parallel arrays."""

    quads: np.ndarray  # (309, 4, 2) in the template's units
    track_ids: np.ndarray  # (309,) the track each space is on
    index: np.ndarray  # (309,) the space's number along its track, from city a


@dataclass(frozen=True)
class Template:
    """The measured board. All arrays in `units` (millimetres unless made by `to_pixels`)."""

    board_mm: tuple[float, float]  # width, height of the whole board
    cities: dict[str, np.ndarray]  # name -> (2,) city-dot centre
    tracks: tuple[TrackTemplate, ...]  # 100, in scoring.board track-id order
    score_cells: np.ndarray  # (100, 2) centre of score cell 0..99 (index = number)
    source: str = ""
    units: str = "mm"
    scale_xy: tuple[float, float] = (1.0, 1.0)  # units per millimetre along x and y

    def all_spaces(self) -> Spaces:
        """Every space, track by track in id order, each from city a to city b."""
        quads = np.concatenate([t.spaces for t in self.tracks], axis=0)
        track_ids = np.concatenate([np.full(t.length, t.id) for t in self.tracks])
        index = np.concatenate([np.arange(t.length) for t in self.tracks])
        return Spaces(quads, track_ids, index)

    def space_centers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Centres (309, 2) of every space, with the same track ids and indices as `all_spaces`."""
        quads, track_ids, index = self.all_spaces()
        return quads.mean(axis=1), track_ids, index

    @property
    def size(self) -> tuple[float, float]:
        """Width and height of the board in this template's units."""
        return (self.board_mm[0] * self.scale_xy[0], self.board_mm[1] * self.scale_xy[1])

    def to_pixels(self, px_per_mm: float | tuple[float, float]) -> "Template":
        """The same template in pixels of a flattened board image (`px_per_mm` as one figure or x, y).

        Pixel coordinates run from the image's outer edge (0 = the board's edge), so a point lies
        half a pixel away from OpenCV's pixel-centre coordinates: well under a millimetre at any
        size this is used at."""
        if self.units != "mm":
            raise ValueError("to_pixels works on a millimetre template")
        sx, sy = (px_per_mm, px_per_mm) if np.isscalar(px_per_mm) else px_per_mm
        s = np.array([sx, sy], dtype=float)
        return Template(
            board_mm=self.board_mm,
            cities={k: v * s for k, v in self.cities.items()},
            tracks=tuple(TrackTemplate(t.id, t.a, t.b, t.color, t.length, t.spaces * s, t.space_colors_lab)
                         for t in self.tracks),
            score_cells=self.score_cells * s,
            source=self.source, units="px", scale_xy=(float(sx), float(sy)),
        )

    def for_image(self, width: int, height: int) -> "Template":
        """The template in pixels of a flattened board image of `width` x `height`."""
        return self.to_pixels((width / self.board_mm[0], height / self.board_mm[1]))

    def to_dict(self) -> dict:
        """The JSON form (millimetres, rounded to 0.1 mm)."""
        if self.units != "mm":
            raise ValueError("only a millimetre template is saved")

        def r(a):
            return np.round(np.asarray(a, dtype=float), 1).tolist()

        out = {
            "board_mm": list(self.board_mm),
            "units": "mm",
            "source": self.source,
            "cities": {k: r(v) for k, v in self.cities.items()},
            "tracks": [{"id": t.id, "a": t.a, "b": t.b, "color": t.color, "length": t.length,
                        "spaces": r(t.spaces)} for t in self.tracks],
            "score_cells": r(self.score_cells),
        }
        if all(t.space_colors_lab is not None for t in self.tracks):
            out["space_colors_lab"] = [r(t.space_colors_lab) for t in self.tracks]
        return out

    def save(self, path: str | Path) -> None:
        text = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))
        # One track per line keeps diffs of the data file readable.
        text = text.replace('},{"id"', '},\n{"id"')
        Path(path).write_text(text + "\n", encoding="utf-8")


def template_from_dict(raw: dict, board: Board | None = None) -> Template:
    """Build and check a template from its JSON form. Raises TemplateError on any mismatch."""
    board = board or load_board()
    try:
        if raw.get("units", "mm") != "mm":
            raise TemplateError("template units must be mm")
        colors = raw.get("space_colors_lab")
        tracks = tuple(
            TrackTemplate(int(t["id"]), t["a"], t["b"], t["color"], int(t["length"]),
                          np.asarray(t["spaces"], dtype=float).reshape(-1, 4, 2),
                          None if colors is None else np.asarray(colors[i], dtype=float).reshape(-1, 3))
            for i, t in enumerate(raw["tracks"]))
        template = Template(
            board_mm=tuple(float(v) for v in raw["board_mm"]),
            cities={k: np.asarray(v, dtype=float).reshape(2) for k, v in raw["cities"].items()},
            tracks=tracks,
            score_cells=np.asarray(raw["score_cells"], dtype=float),
            source=str(raw.get("source", "")),
        )
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, TemplateError):
            raise
        raise TemplateError(f"template file is malformed ({type(e).__name__}: {e})") from None
    problems = check_template(template, board)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise TemplateError(f"template does not fit the board: {problems[0]}{more}")
    return template


def check_template(template: Template, board: Board | None = None) -> list[str]:
    """Every way the template disagrees with the board facts (empty list: it fits)."""
    board = board or load_board()
    problems = []
    if tuple(template.board_mm) != tuple(float(v) for v in board.board_mm):
        problems.append(f"board_mm {template.board_mm} is not {board.board_mm}")
    if set(template.cities) != set(board.cities):
        problems.append("cities differ from the board's 36")
    if len(template.tracks) != len(board.tracks):
        problems.append(f"{len(template.tracks)} tracks, expected {len(board.tracks)}")
    for t, b in zip(template.tracks, board.tracks):
        if (t.id, t.a, t.b, t.color, t.length) != (b.id, b.a, b.b, b.color, b.length):
            problems.append(f"track {t.id} is {t.a}-{t.b} {t.color} {t.length}, "
                            f"board says {b.a}-{b.b} {b.color} {b.length}")
    w, h = template.board_mm
    for t in template.tracks:
        s = t.spaces
        if not np.all(np.isfinite(s)) or s[..., 0].min() < 0 or s[..., 1].min() < 0 \
                or s[..., 0].max() > w or s[..., 1].max() > h:
            problems.append(f"track {t.id} {t.a}-{t.b} has a space outside the board")
    n_spaces = sum(t.length for t in template.tracks)
    if n_spaces != 309:
        problems.append(f"{n_spaces} spaces, expected 309")
    if template.score_cells.shape != (100, 2):
        problems.append(f"score_cells has shape {template.score_cells.shape}, expected (100, 2)")
    return problems


def load_template(path: str | Path | None = None) -> Template:
    """The packaged USA template, or a template file made by `ttr template measure`."""
    if path is None:
        return _packaged()
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TemplateError(f"no template file {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TemplateError(f"template file {path} is not JSON ({e})") from None
    return template_from_dict(raw)


@lru_cache(maxsize=None)
def _packaged() -> Template:
    text = resources.files("calibration").joinpath("data", "usa_template.json").read_text(encoding="utf-8")
    return template_from_dict(json.loads(text))
