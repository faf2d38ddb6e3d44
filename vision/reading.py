"""Typed results the photo reader hands on: where the board is, and who owns each track.

Coordinates: `corners_xy` are in the photo's displayed pixels (EXIF orientation applied), in the
board's own order top-left, top-right, bottom-right, bottom-left (score-track corner "20" is the
board's top-left, "0/100" its bottom-left). Board coordinates elsewhere are millimetres from the
board's top-left outer corner, x right, y down (the board is 795 x 525 mm).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scoring.rules import PLAYER_COLORS  # (re-exported: the reader's five colours are the rules')

# What a space can hold, as the space classifier's classes (index order is fixed).
SPACE_CLASSES = ("empty",) + PLAYER_COLORS

# Codes of the warnings a program acts on (`Notice.code`).
DOUBTFUL_TRACKS = "doubtful_tracks"  # names the tracks the reader is unsure of (`Reading.doubtful`)
CALIBRATION_SET_ASIDE = "calibration_set_aside"  # the calibration does not fit this photo: read without it


@dataclass(frozen=True)
class Notice:
    """A warning with a code to match on: `str(notice)` is its text, what people read and what
    `ttr detect --json` lists. A reading's other warnings are plain text (code "")."""

    code: str  # e.g. DOUBTFUL_TRACKS
    text: str

    def __str__(self) -> str:
        return self.text

    @classmethod
    def of(cls, warning: "str | Notice") -> "Notice":
        """A warning as a Notice (plain text gets code "")."""
        return warning if isinstance(warning, Notice) else cls("", str(warning))


@dataclass(frozen=True)
class BoardLocation:
    """Where the board lies in a photo."""

    corners_xy: np.ndarray  # (4, 2) float, photo pixels, board order TL, TR, BR, BL
    orientation: int  # 0, 90, 180 or 270: clockwise turn of the board in the photo (nearest)
    confidence: float  # 0..1
    warnings: tuple[str, ...] = ()

    def __post_init__(self):
        if np.asarray(self.corners_xy).shape != (4, 2):
            raise ValueError("corners_xy must have shape (4, 2)")


@dataclass(frozen=True)
class TrackReading:
    """Who owns one of the 100 tracks, and how sure the reader is."""

    track_id: int  # index into scoring.board.load_board().tracks
    a: str
    b: str
    color: str  # printed colour
    length: int
    owner: str | None  # a PLAYER_COLORS entry or None
    confidence: float  # 0..1, for the owner given
    space_probs: np.ndarray  # (length, len(SPACE_CLASSES)) class probabilities per space
    doubtful: bool = False
    reason: str = ""  # why it is doubtful, one short line for a player ("" when it is not)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "color": self.color, "length": self.length,
                "owner": self.owner, "confidence": round(float(self.confidence), 4),
                "doubtful": bool(self.doubtful), "reason": self.reason}


@dataclass
class Reading:
    """The whole reading of one photo."""

    image: str
    location: BoardLocation
    tracks: list[TrackReading]  # all 100, in track_id order
    flattened: np.ndarray  # the board flattened to the template frame, BGR uint8
    px_per_mm: float  # scale of `flattened`
    warnings: list[str | Notice] = field(default_factory=list)  # str(w) is each one's text
    elapsed_ms: float = 0.0
    space_quads_px: np.ndarray | None = None  # (309, 4, 2) where each space was read in `flattened`

    @property
    def doubtful(self) -> list[TrackReading]:
        return [t for t in self.tracks if t.doubtful]

    def claims(self) -> dict[str, list[int]]:
        """Track ids per player colour."""
        out: dict[str, list[int]] = {}
        for t in self.tracks:
            if t.owner:
                out.setdefault(t.owner, []).append(t.track_id)
        return out

    def to_dict(self) -> dict:
        """The `ttr detect --json` object for this photo."""
        return {
            "image": self.image,
            "board": {"corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.location.corners_xy],
                      "orientation": int(self.location.orientation),
                      "confidence": round(float(self.location.confidence), 4)},
            "tracks": [t.to_dict() for t in self.tracks],
            "warnings": [str(w) for w in self.warnings],
            "elapsed_ms": round(self.elapsed_ms),
        }
