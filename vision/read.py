"""Read one board photo: locate -> flatten -> cut spaces -> per-space evidence -> decide tracks.

In:  a photo (BGR uint8, as displayed) and optionally a `calibration.user.Calibration` of the user's
     own empty board.
Out: `vision.reading.Reading` (corners, the 100 tracks with owners and confidences, the flattened
     board, warnings, elapsed time).

`Reader` holds what is loaded once (template, classifier session) so a batch of photos pays for it
once; `read_board` is the one-call form.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.template import load_template
from scoring.board import load_board
from vision.classify import PRINTED_LAB, ColourModel, EmptyReference, change_loglik, fuse, load_classifier
from vision.decide import DecideConfig, decide_tracks, double_ids
from vision.image_io import load_photo, read_header
from vision.locate import locate_board
from vision.quality import photo_warnings
from vision.reading import PLAYER_COLORS, BoardLocation, Reading
from vision.rectify import camera_position, flatten, parallax_mm
from vision.spaces import (
    CropGeometry,
    align_to_reference,
    change_features,
    crop_spaces,
    inner_mean_lab,
    normalise_light,
    paint_spaces,
    register_to_template,
)

PX_PER_MM = 2.0
# Weights of the two evidence sources in the fused per-space log-likelihood.
W_COLOUR = 1.0
W_CLASSIFIER = 1.0
W_CHANGE = 1.0
REGISTER = True  # fine-register the flattened board on the template's spaces (see spaces.register_to_template)
CLASSIFIER_FLOOR = 0.02  # probabilities below this are clipped (a net is never that sure off its data)
CLASSIFIER_COLOUR_TRUST = 0.5  # see SpaceClassifier.loglik
# Where a car is seen: its roof stands ~6 mm above the board and its side towards the camera fills
# the view below that, so what a photo shows of a car centres about 4 mm up. From ~70 cm that
# leans up to ~2.5 mm off the space at the board's edges (see rectify.camera_position).
COLOUR_SEEN_HEIGHT_MM = 4.0
LANE_ALONE = True  # judge a lane beside a claimed lane of its double with that lane shown bare (Reader.evidence)


@dataclass
class SpaceEvidence:
    """Everything measured on the spaces of one flattened board (for decide, draw and calibrate)."""

    quads_px: np.ndarray  # (309, 4, 2)
    track_ids: np.ndarray
    lab: np.ndarray  # (309, 3)
    lab_spread: np.ndarray
    loglik: np.ndarray  # (309, 6) fused
    probs: np.ndarray  # (309, 6) per-space probabilities (normalised fused likelihood)
    classifier_probs: np.ndarray | None  # (309, 2) P(empty), P(car) or (309, 6), see SpaceClassifier


class Reader:
    """Loads the template and the classifier once; `read(image)` per photo."""

    def __init__(self, calibration=None, use_classifier: bool = True, model_path: str | None = None,
                 decide_cfg: DecideConfig = DecideConfig(), template=None):
        self.board = load_board()
        self.template = template if template is not None else load_template()
        self.calibration = calibration
        self.classifier = load_classifier(model_path) if use_classifier else None
        self.geometry = (CropGeometry(self.classifier.config.imgsz, self.classifier.config.side_mm)
                         if self.classifier else CropGeometry())
        self.decide_cfg = decide_cfg
        # The classifier's patches are cut as it was trained: where a car this high is seen, or
        # (0, as in models that do not say) centred on the space.
        crop = self.classifier.config.raw.get("crop", {}) if self.classifier else {}
        self.patch_seen_height_mm = float(crop.get("car_seen_height_mm", 0.0))
        quads, tids, idx = self.template.all_spaces()
        self.quads_mm, self.track_ids, self.index = quads, tids, idx
        self.printed = [self.board.tracks[t].color for t in tids]
        self.player_printed = np.isin(self.printed, PLAYER_COLORS)
        self.colour = ColourModel()
        # The other lane of each space's double route, as a track id (-1 on single routes).
        self.other_lane = np.asarray(double_ids(self.board))[tids]

    # -- stages -------------------------------------------------------------------------------
    def quads_px(self, px_per_mm: float = PX_PER_MM) -> np.ndarray:
        """Every space's quad in flattened-image pixels."""
        # Flattened pixel (u, v) shows the board point ((u + 0.5) / ppm, (v + 0.5) / ppm) mm.
        return self.quads_mm * px_per_mm - 0.5

    def evidence(self, flattened: np.ndarray, px_per_mm: float = PX_PER_MM, camera_mm=None) -> SpaceEvidence:
        shift = car_offsets_px(self.quads_mm, camera_mm, COLOUR_SEEN_HEIGHT_MM, px_per_mm)
        patch_shift = car_offsets_px(self.quads_mm, camera_mm, self.patch_seen_height_mm, px_per_mm)
        template_px = quads_px = self.quads_px(px_per_mm)
        norm = normalise_light(flattened, quads_px, px_per_mm)
        if REGISTER:
            quads_px, _ = register_to_template(norm, quads_px, px_per_mm)
        sp = crop_spaces(norm, quads_px, px_per_mm, self.geometry, self.track_ids, self.index)
        ref = None
        change = None
        if self.calibration is not None and px_per_mm == PX_PER_MM:
            view = self.calibration.nearest_view(sp.lab)
            if view.board_bgr.shape == norm.shape:
                aligned, score = align_to_reference(norm, view.board_bgr, px_per_mm)
                if score > 0:
                    # Now in the view's frame, which is the template's.
                    norm, quads_px = aligned, template_px
                    change = change_features(norm, view.board_bgr, quads_px)
                    sp = crop_spaces(norm, quads_px, px_per_mm, self.geometry, self.track_ids, self.index)
            ref = EmptyReference(view.lab if view.mean is None else view.mean, view.spread, "calibration")
        # The mean colour mixes linearly when a car covers part of its space (see ColourModel).
        # Print is measured on the space, a car where it is seen (camera parallax).
        colour, colour_car, isolated = sp.lab_mean, sp.lab_mean, None
        if np.any(shift):
            colour_car = inner_mean_lab(norm, quads_px + shift)
        if change is not None:
            # With the empty view, what changed is the car: its own colour when it covers part of
            # the space (a fully covered space is read whole: its changed pixels include shadow).
            # The print is still judged on the whole space.
            isolated = (change.changed_share >= 0.3) & (change.changed_share < 0.8)
            colour_car = np.where(isolated[:, None], change.changed_lab, colour_car)
        parts = [(self.colour.loglik(colour, self.printed, self.track_ids, ref, colour_car, isolated), W_COLOUR)]
        if change is not None:
            parts.append((change_loglik(change.d50), W_CHANGE))
        cprobs = None
        if self.classifier is not None:
            if not np.any(patch_shift):
                patches = sp.patches
            else:
                patches = crop_spaces(norm, quads_px + patch_shift, px_per_mm, self.geometry, self.track_ids,
                                      self.index).patches
            cprobs = self._classify(patches, self.player_printed, fuse(parts))
            if LANE_ALONE:
                first = fuse(parts + [(self.classifier.loglik(cprobs, CLASSIFIER_FLOOR, CLASSIFIER_COLOUR_TRUST),
                                       W_CLASSIFIER)])
                self._judge_lanes_alone(norm, quads_px + patch_shift, sp.lab, first, cprobs, px_per_mm)
            parts.append((self.classifier.loglik(cprobs, CLASSIFIER_FLOOR, CLASSIFIER_COLOUR_TRUST), W_CLASSIFIER))
        ll = fuse(parts)
        p = np.exp(ll - ll.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return SpaceEvidence(quads_px, self.track_ids, sp.lab, sp.lab_spread, ll, p, cprobs)

    def _classify(self, patches: np.ndarray, player_printed: np.ndarray, colour_ll: np.ndarray | None = None) -> np.ndarray:
        """The classifier's (N, 6) answer on `patches`, averaged with its answer on the half-turned
        patch wherever the reading may turn on the net: where the print is a player's colour
        (`player_printed`: colour cannot tell a car from the print) and where the colour evidence
        (`colour_ll`, (N, 6); None: by print alone) and the net's first look disagree on whether a
        car is there.

        A space looks the same from either end and the net was trained towards the mean of both
        (models/distill.py), yet one look leans on where in the patch things stand: on a car set
        ~3 mm off its space, its dark side in the patch's middle, the net said P(empty) 0.89 on one
        look and 0.70 on the other (a real photo). On every space, a second look changed no track
        of the development photos or the rendered sets over this, and cost ~40 ms a photo more."""
        probs = self.classifier.predict(patches)
        again = np.array(player_printed, bool)
        if colour_ll is not None:
            again |= (probs[:, 0] < 0.5) != (colour_ll[:, 1:].max(axis=1) > colour_ll[:, 0])
        if again.any():
            turned = self.classifier.predict(np.ascontiguousarray(patches[again][:, ::-1, ::-1]))
            probs[again] = (probs[again] + turned) / 2
        return probs

    def _judge_lanes_alone(self, norm: np.ndarray, quads_px: np.ndarray, lab: np.ndarray, loglik: np.ndarray,
                           cprobs: np.ndarray, px_per_mm: float) -> None:
        """Judge again each lane printed in a player's colour beside a claimed lane of its double
        (`loglik`: the first reading; `lab`: each space's measured colour), with that lane painted in
        its bare print; updates `cprobs` in place.

        Its patch shows the other lane's cars too, and the net, which saw an empty lane beside cars
        seldom in training, may take them for its own (a black lane beside yellow cars read black).
        The lower track ids of such doubles go first, then the others, so that a lane is never
        painted over while it is the one judged."""
        p_empty = np.exp(loglik[:, 0] - np.logaddexp.reduce(loglik, axis=1))
        track_empty = {t: float(p_empty[self.track_ids == t].mean()) for t in np.unique(self.track_ids)}
        # Only where colour cannot tell a car from the print is the net's answer decisive.
        beside = np.array([o >= 0 and track_empty[o] < 0.5 for o in self.other_lane]) & self.player_printed
        if not beside.any():
            return
        print_bgr = self._print_bgr(lab, p_empty > 0.5)
        for lower in (True, False):
            k = np.flatnonzero(beside & ((self.track_ids < self.other_lane) == lower))
            if len(k):
                painted = np.isin(self.track_ids, self.other_lane[k])
                board = paint_spaces(norm, quads_px[painted], print_bgr[painted])
                alone = crop_spaces(board, quads_px[k], px_per_mm, self.geometry, self.track_ids[k], self.index[k])
                cprobs[k] = self._classify(alone.patches, self.player_printed[k])  # all player-printed: two looks

    def _print_bgr(self, lab: np.ndarray, empty: np.ndarray) -> np.ndarray:
        """(N, 3) each space's print colour on this board: the median of the measured colours `lab`
        of the spaces printed in its colour and read `empty`, or the printed colour's generic value
        where fewer than 3 of them are (at the end of a game most grey spaces hold cars)."""
        out = np.empty((len(lab), 3))
        printed = np.asarray(self.printed)
        for colour in np.unique(printed):
            m = printed == colour
            out[m] = np.median(lab[m & empty], axis=0) if np.count_nonzero(m & empty) >= 3 else PRINTED_LAB[colour]
        return cv2.cvtColor(np.clip(out, 0, 255).astype(np.uint8)[None], cv2.COLOR_LAB2BGR)[0].astype(float)

    def decide(self, ev: SpaceEvidence):
        per_track_ll = [ev.loglik[self.track_ids == t.id] for t in self.board.tracks]
        per_track_p = [ev.probs[self.track_ids == t.id] for t in self.board.tracks]
        return decide_tracks(per_track_ll, per_track_p, self.board, self.decide_cfg)

    def read_flattened(self, flattened: np.ndarray, location: BoardLocation, image_name: str = "",
                       px_per_mm: float = PX_PER_MM, t_start: float | None = None,
                       warnings: list[str] | None = None, camera_mm=None) -> Reading:
        """Read a board already flattened to the template frame (`camera_mm`: where the camera
        stood, see rectify.camera_position; None reads as if from straight above)."""
        t_start = time.perf_counter() if t_start is None else t_start
        ev = self.evidence(flattened, px_per_mm, camera_mm)
        tracks = self.decide(ev)
        warnings = list(warnings or [])
        doubtful = [t for t in tracks if t.doubtful]
        if doubtful:
            names = ", ".join(f"{t.a}-{t.b} ({t.color})" for t in doubtful[:6])
            more = f" and {len(doubtful) - 6} more" if len(doubtful) > 6 else ""
            warnings.append(f"{len(doubtful)} doubtful track(s), please check: {names}{more}")
        return Reading(image=image_name, location=location, tracks=tracks, flattened=flattened,
                       px_per_mm=px_per_mm, warnings=warnings,
                       elapsed_ms=(time.perf_counter() - t_start) * 1000.0, space_quads_px=ev.quads_px)

    def read(self, image_bgr: np.ndarray, image_name: str = "", t_start: float | None = None,
             scale_to_photo: float = 1.0) -> Reading:
        """Locate the board in a photo and read it. `scale_to_photo` maps image pixels to the
        photo's displayed pixels (when the image was decoded reduced)."""

        t_start = time.perf_counter() if t_start is None else t_start

        loc = locate_board(image_bgr)
        warnings = list(loc.warnings)
        warnings.extend(w for w in photo_warnings(image_bgr, loc) if w not in warnings)
        flat = flatten(image_bgr, loc.corners_xy, px_per_mm=PX_PER_MM)
        camera = camera_position(loc.corners_xy, image_bgr.shape[1::-1])
        if scale_to_photo != 1.0:
            loc = BoardLocation(np.asarray(loc.corners_xy, float) * scale_to_photo, loc.orientation,
                                loc.confidence, loc.warnings)
        return self.read_flattened(flat, loc, image_name, PX_PER_MM, t_start, warnings, camera)

    def read_path(self, path: str) -> Reading:
        """Load a photo file (EXIF applied; a large JPEG decoded reduced) and read it."""

        t0 = time.perf_counter()
        w, h = read_header(path).size_wh
        img = load_photo(path, reduce=decode_reduction(w, h))
        scale = w / img.shape[1]
        return self.read(img, image_name=str(path), t_start=t0, scale_to_photo=scale)


def car_offsets_px(quads_mm: np.ndarray, camera_mm, height_mm: float, px_per_mm: float) -> np.ndarray:
    """(N, 1, 2) offsets, in flattened-board pixels, from each space to where a car standing on it
    is seen from `camera_mm` (None or a height of 0: no offset). Add to the spaces' quads."""
    quads_mm = np.asarray(quads_mm, dtype=float)
    if camera_mm is None or height_mm <= 0:
        return np.zeros((len(quads_mm), 1, 2))
    return (parallax_mm(quads_mm.mean(axis=1), camera_mm, height_mm) * px_per_mm)[:, None, :]


def decode_reduction(width: int, height: int) -> int:
    """JPEG decode reduction (1, 2, 4, 8) for a photo: the board is flattened to ~1600 px wide, so
    ~2000 px of photo is all the reader needs."""
    reduce = 1
    while max(width, height) / (reduce * 2) >= 2000 and reduce < 8:
        reduce *= 2
    return reduce


def read_board(image_bgr: np.ndarray, calibration=None, image_name: str = "") -> Reading:
    """Read one photo with a fresh reader (use `Reader` for many photos)."""
    return _reader(calibration).read(image_bgr, image_name)


_READERS: dict = {}


def _reader(calibration) -> Reader:
    key = id(calibration)
    if key not in _READERS:
        _READERS.clear()
        _READERS[key] = Reader(calibration)
    return _READERS[key]
