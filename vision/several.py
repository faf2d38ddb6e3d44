"""Several photos of one board, read together: one reading from all of them.

Each photo is located, flattened and read on its own (`Reader.trace`) up to its fused per-space
evidence, in the board's frame. The photos' evidence is then combined per space, each photo
weighted by how well it sees that space (`view_weights`: the photo's resolution over the board, how
steeply it looks down on the space, glare on it, how sure its outline is) and by how
surely it reads that space's track on its own (`track_certainty`), and the rules decide once. A
track the photos read differently, each sure of its own reading, is doubtful and says so.

A photo that shows another game position (or another board) is refused, never mixed in: against
the reference photo (the one most others agree with, then the surest: `reference_photo`), it reads
more than `SeveralSettings.max_disagreeing` tracks otherwise, one photo at least sure of its
reading. A photo that cannot be read at all is refused with its error; the others are still read.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from scoring.errors import TtrError
from vision.decide import decide_tracks
from vision.decide.doubt import doubt_warnings
from vision.fuse import space_probs
from vision.read import Reader, ReadingTrace
from vision.reading import Reading, TrackReading
from vision.settings import SeveralSettings
from vision.spaces import space_frames


@dataclass
class PhotoPart:
    """One photo's part in a reading of several: its own trace, or why it was refused."""

    image: str
    trace: ReadingTrace | None = None
    error: str = ""

    @property
    def read(self) -> bool:
        return self.trace is not None


@dataclass
class SameBoardReading:
    """The reading of one board from several photos."""

    reading: Reading  # the combined reading (location and flattened board: the photo that sees most)
    photos: list[PhotoPart] = field(default_factory=list)

    @property
    def images(self) -> list[str]:
        return [p.image for p in self.photos]

    def to_dict(self) -> dict:
        """`ttr detect --json`'s object for the board, with `images` and each photo's part."""
        d = self.reading.to_dict()
        d["images"] = self.images
        d["photos"] = []
        for p in self.photos:
            if p.read:
                one = p.trace.reading.to_dict()
                d["photos"].append({"image": p.image, "board": one["board"],
                                    "warnings": [str(w) for w in p.trace.view.warnings]})
            else:
                d["photos"].append({"image": p.image, "error": p.error})
        return d


def view_weights(trace: ReadingTrace, cfg: SeveralSettings = SeveralSettings()) -> np.ndarray:
    """(N,) how well a photo sees each space of the board (see SeveralSettings)."""
    view = trace.view
    n = len(trace.lit.quads_px)
    res = 1.0 if view.seen_px_per_mm is None else float(
        np.clip(view.seen_px_per_mm / cfg.sharp_px_per_mm, cfg.min_resolution_weight, 1.0))
    w = np.full(n, res * max(float(view.location.confidence), cfg.min_outline_weight))
    if view.camera_mm is not None:
        centres_mm = space_frames(trace.lit.template_px)[0] / trace.lit.px_per_mm
        cam = np.asarray(view.camera_mm, float)
        to_cam = np.column_stack([cam[:2] - centres_mm, np.full(n, cam[2])])
        cos_tilt = cam[2] / np.linalg.norm(to_cam, axis=1)
        w = w * cos_tilt ** cfg.tilt_power
    if trace.evidence.glare is not None:
        w = np.where(trace.evidence.glare, w * cfg.glare_weight, w)
    return w


def track_certainty(trace: ReadingTrace, reader: Reader) -> np.ndarray:
    """(N,) how surely a photo reads each space's track: its own calibrated confidence in that
    track's reading (never quite 0, so that photos unsure alike still count as they see)."""
    return np.maximum(np.array([t.confidence for t in trace.tracks])[reader.track_ids], 1e-3)


def read_same_board(reader: Reader, photos: list[str]) -> SameBoardReading:
    """One reading of the board from all of `photos` (see the module doc). Raises TtrError when no
    photo could be read (its message names each photo's error)."""
    parts = []
    for photo in photos:
        try:
            parts.append(PhotoPart(photo, reader.trace_path(photo)))
        except TtrError as e:
            parts.append(PhotoPart(photo, error=str(e)))
    return combine(reader, parts)


def combine(reader: Reader, parts: list[PhotoPart], anchor: int | None = None) -> SameBoardReading:
    """The reading of one board from its photos' traces (`parts`; a photo of another position is
    refused here, against the reference photo: `parts[anchor]` when given (the app's game photo),
    else `reference_photo`'s choice)."""
    cfg = reader.settings.several
    read = [p for p in parts if p.read]
    if not read:
        raise TtrError("no photo could be read: " + "; ".join(f"{p.image}: {p.error}" for p in parts))
    parts = [replace(p) for p in parts]  # the callers' parts stay as they were
    ref = parts[anchor] if anchor is not None and parts[anchor].read else reference_photo(
        [p for p in parts if p.read], reader)
    for p in parts:
        if p.read and p is not ref:
            differ = disagreeing_tracks(ref.trace.tracks, p.trace.tracks, reader)
            if len(differ) > cfg.max_disagreeing:
                shown = ", ".join(f"{t.a}-{t.b}" for t in differ[:3])
                p.error = (f"it shows another game position than {ref.image} ({len(differ)} tracks differ, e.g. "
                           f"{shown}): if it is the same board, one of them is misread; photograph it again, "
                           f"or read it on its own")
                p.trace = None
    read = [p for p in parts if p.read]
    weights = np.stack([view_weights(p.trace, cfg) for p in read])  # (photos, N)
    lls = np.stack([p.trace.evidence.loglik for p in read])  # (photos, N, 6)
    share = weights * np.stack([track_certainty(p.trace, reader) for p in read]) if cfg.by_certainty else weights
    share = share / np.maximum(share.sum(axis=0, keepdims=True), 1e-9)
    ll = (share[..., None] * lls).sum(axis=0)
    rows = reader.rows
    glare = np.all(np.stack([p.trace.evidence.glare for p in read]), axis=0)  # under glare in every photo
    # The flash photos' standard while every photo's flash fired; once one was taken without, the
    # usual one (each photo's share already follows how surely it reads each track).
    doubt = reader.doubt_settings(all(p.trace.view.flash_fired for p in read))
    probs = space_probs(ll)
    _, tracks = decide_tracks([ll[r] for r in rows], reader.board, [probs[r] for r in rows],
                              [glare[r] for r in rows], reader.settings.decide, doubt)
    tracks = [_disagreement(t, [p.trace.tracks[t.track_id] for p in read]) for t in tracks]
    best = read[int(np.argmax(weights.sum(axis=1)))]
    base = best.trace.reading
    warnings = [f"{p.image}: {w}" if len(read) > 1 else w for p in read for w in p.trace.view.warnings]
    warnings += [f"{p.image}: not read with the others: {p.error}" for p in parts if not p.read]
    warnings += doubt_warnings(tracks, doubt)
    reading = Reading(image=base.image, location=base.location, tracks=tracks, flattened=base.flattened,
                      px_per_mm=base.px_per_mm, warnings=list(dict.fromkeys(warnings)),
                      elapsed_ms=sum(p.trace.reading.elapsed_ms for p in read), space_quads_px=base.space_quads_px)
    return SameBoardReading(reading, parts)


def reference_photo(read: list[PhotoPart], reader: Reader) -> PhotoPart:
    """The photo the others are checked against: the one most others agree with (within
    `max_disagreeing` tracks), then the one that expects to read the most tracks right (the sum of
    its tracks' calibrated confidences), so that a photo misread throughout is the one set aside,
    whichever order the photos came in."""
    limit = reader.settings.several.max_disagreeing

    def standing(p: PhotoPart) -> tuple[int, float]:
        agree = sum(len(disagreeing_tracks(p.trace.tracks, q.trace.tracks, reader)) <= limit
                    for q in read if q is not p)
        return agree, sum(t.confidence for t in p.trace.tracks)
    return max(read, key=standing)


def disagreeing_tracks(a: list[TrackReading], b: list[TrackReading], reader: Reader) -> list[TrackReading]:
    """The tracks two readings of a board give different claims, one of them at least sure of its
    own (not doubtful): a photo sure of a claim the other photo does not see is a contradiction,
    however unsure the other is (the lanes of a moved double, seen coarsely, are often doubtful in
    one photo). The lanes of a double printed alike count as a pair: the same owners swapped
    between them are the same claim."""
    board = reader.board
    out = []
    for t in board.tracks:
        x, y = a[t.id], b[t.id]
        if (x.doubtful and y.doubtful) or x.owner == y.owner:
            continue
        o = board.double_ids[t.id]
        if o >= 0 and board.tracks[o].color == t.color and sorted(map(str, (x.owner, a[o].owner))) == sorted(
                map(str, (y.owner, b[o].owner))):
            continue
        out.append(x)
    return out


def _disagreement(track: TrackReading, seen: list[TrackReading]) -> TrackReading:
    """The combined reading of a track, doubtful where a photo sure of its own reading reads it
    otherwise (where the photos that are sure agree with it, they settle the others' doubts). Its
    confidence is then the photos' mean chance for the owner read: each photo gives it its own
    confidence where it read that owner, else what its confidence leaves over."""
    sure = {t.owner for t in seen if not t.doubtful}
    if not sure or sure == {track.owner}:
        return track
    said = " in one, ".join("nobody" if o is None else f"{o} cars" for o in sorted({t.owner for t in seen}, key=str))
    chance = float(np.mean([t.confidence if t.owner == track.owner else 1.0 - t.confidence for t in seen]))
    return replace(track, doubtful=True, confidence=min(track.confidence, chance),
                   reason=f"the photos disagree: {said} in the other")
