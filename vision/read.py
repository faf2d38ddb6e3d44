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
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from calibration.template import FLAT_PX_PER_MM, load_template
from calibration.user import Calibration
from scoring.board import load_board
from vision.classify import CHANGE_MID, PRINTED_LAB, ColourModel, ColourModelConfig, EmptyReference, change_loglik, fuse, load_classifier
from vision.decide import DecideConfig, decide_tracks, double_ids
from vision.image_io import load_photo, read_header
from vision.locate import locate_board
from vision.quality import photo_warnings
from vision.reading import CALIBRATION_SET_ASIDE, DOUBTFUL_TRACKS, PLAYER_COLORS, BoardLocation, Notice, Reading, TrackReading
from vision.rectify import camera_position, flatten, parallax_mm, photo_px_per_mm
from vision.spaces import (
    INNER,
    CropGeometry,
    LitBoard,
    SpacePatches,
    align_to_reference,
    change_features,
    crop_spaces,
    cut_spaces,
    inner_mean_lab,
    light_board,
    paint_spaces,
    paper_left_bright,
    space_frames,
    space_normals_px,
)

PX_PER_MM = FLAT_PX_PER_MM  # (the scale boards are flattened at; its home is the template)


@dataclass(frozen=True)
class CalibrationConfig:
    """When a user's calibration is used on a photo (see `Reader._against_calibration`).

    A calibration's empty view helps only on photos in its light and from near its angle: in other
    light its print colours and its pixels differ from the photo's empty spaces, and its evidence
    then reads print as cars (on the development photos, a calibration made on one evening read a
    board on a stone table and one on a blanket 3-9 tracks worse). So each photo is first read
    without it, and the view is used only where its change evidence agrees with that reading on
    the spaces the reader is already sure are empty (the tracks it reads unclaimed and not
    doubtful): where the view sees a car on more than `max_false_change` of them, the photo is read
    without it, with a warning."""

    # Fitted on rendered boards (benchmarks/fit_calibration_gate.py: one print per board, calibrated
    # from two empty photos in one light, read in that light and in others), none of the real photos.
    max_false_change: float = 0.05
    # Fewer sure-empty spaces than this (a board crowded with cars) cannot show the view matches
    # (one space is then over 5 % of them): the photo is read without the calibration.
    min_judged_spaces: int = 20


@dataclass(frozen=True)
class ReaderConfig:
    """Every setting of the reader (the classifier's patch geometry comes with its weights)."""

    px_per_mm: float = FLAT_PX_PER_MM  # the flattened board's scale
    register: bool = True  # fine-register the flattened board on the template's spaces (spaces.light_board)
    # Weights of the evidence sources in the fused per-space log-likelihood.
    w_colour: float = 1.0
    w_classifier: float = 1.0
    w_change: float = 1.0  # against the user's empty board (a calibration)
    classifier_floor: float = 0.02  # probabilities below this are clipped (a net is never that sure off its data)
    classifier_colour_trust: float = 0.5  # see SpaceClassifier.loglik
    colour_learns_from_net: bool = True  # see Reader._fused
    colour_sigma_scale: float = 1.0  # on every sigma of ColourModelConfig
    # Where a car is seen: its roof stands ~6 mm above the board and its side towards the camera fills
    # the view below that, so what a photo shows of a car centres about 4 mm up. From ~70 cm that
    # leans up to ~2.5 mm off the space at the board's edges (see rectify.camera_position).
    colour_seen_height_mm: float = 4.0
    lane_alone: bool = True  # judge a lane beside a claimed lane of its double with that lane shown bare (Reader._judge_lanes_alone)
    car_across_steps: int = 2  # a car's colour is measured at 2 k + 1 places across its space (0: its middle)
    # A space is under glare where the paper around it stays brighter than this once the light was
    # evened out (spaces.paper_left_bright): PAPER_LEVEL + 15, where evened-out paper's median
    # stays below ~197 around every space of 95 % of the doubt fit's rendered photos (median 184).
    glare_paper_level: float = 205.0
    decide: DecideConfig = field(default_factory=DecideConfig)
    calibration: CalibrationConfig = field(default_factory=CalibrationConfig)


@dataclass(frozen=True)
class CalibrationMatch:
    """How the calibration's empty view nearest a photo's light fits that photo (see CalibrationConfig)."""

    view: str  # the view's photo
    judged: int  # spaces the reader, without the calibration, is sure are empty
    false_change: int  # of them, those the view's change evidence holds a car on
    verdict: str  # one of VERDICTS

    VERDICTS = ("used", "not aligned", "too few empty", "changes on empty")

    def __post_init__(self):
        if self.verdict not in self.VERDICTS:
            raise ValueError(f"verdict must be one of {self.VERDICTS}")

    @property
    def used(self) -> bool:
        return self.verdict == "used"

    @property
    def false_share(self) -> float:
        return self.false_change / self.judged if self.judged else 1.0

    def warning(self) -> Notice | None:
        """What a player is told when the calibration was set aside (None when it was used)."""
        without = "this photo was read without it"
        if self.verdict == "used":
            return None
        if self.verdict == "too few empty":
            return Notice(CALIBRATION_SET_ASIDE, f"the board is too full to check the calibration against it (only "
                                                 f"{self.judged} spaces are clearly empty); {without}")
        why = ("its empty board does not line up with this photo's" if self.verdict == "not aligned" else
               f"against it, {self.false_change} of the {self.judged} clearly empty spaces look changed")
        return Notice(CALIBRATION_SET_ASIDE, f"the calibration was made in other light or from another angle ({why}); "
                      f"{without}. Calibrate with photos of the empty board taken where you play to use one.")


@dataclass(frozen=True)
class SpaceEvidence:
    """Everything measured on the spaces of one flattened board (for decide, draw and calibrate)."""

    quads_px: np.ndarray  # (309, 4, 2)
    track_ids: np.ndarray
    lab: np.ndarray  # (309, 3)
    lab_spread: np.ndarray
    loglik: np.ndarray  # (309, 6) fused
    probs: np.ndarray  # (309, 6) per-space probabilities (normalised fused likelihood)
    classifier_probs: np.ndarray | None  # (309, 2) P(empty), P(car) or (309, 6), see SpaceClassifier
    calibration: CalibrationMatch | None = None  # how the calibration fit the photo (None: no calibration)
    glare: np.ndarray | None = None  # (309,) bool: the space is under glare (ReaderConfig.glare_paper_level)

    def __post_init__(self):
        n = len(self.track_ids)
        if self.quads_px.shape != (n, 4, 2) or self.loglik.shape != (n, 6) or self.probs.shape != (n, 6):
            raise ValueError("SpaceEvidence fields must have one row per space")
        if self.glare is not None and np.shape(self.glare) != (n,):
            raise ValueError("SpaceEvidence.glare must have one entry per space")


@dataclass(frozen=True)
class BoardView:
    """A photo's board as the reader sees it: located, flattened to the template frame, where the
    camera stood, and the photo's own scale over the board (its pixels per board millimetre, which
    says how fine a detail the photo can show)."""

    location: BoardLocation  # in the pixels of the image read
    flattened: np.ndarray  # at ReaderConfig.px_per_mm
    camera_mm: np.ndarray  # see rectify.camera_position
    seen_px_per_mm: float
    warnings: tuple  # the locator's and the photo's quality warnings


class Reader:
    """Loads the template and the classifier once; `read(image)` per photo.

    A photo's way through it, each step one function with a typed result:
    photo -> `locate_board` (BoardLocation) -> `flatten` (the board in the template frame) ->
    `evidence` (SpaceEvidence: light_board, cut_spaces, the colour, calibration and classifier
    evidence) -> `decide` (TrackReading per track) -> Reading."""

    def __init__(self, calibration: Calibration | None = None, use_classifier: bool = True,
                 model_path: str | None = None, config: ReaderConfig = ReaderConfig(), template=None):
        self.config = config
        self.board = load_board()
        self.template = template if template is not None else load_template()
        self.calibration = calibration
        self.classifier = load_classifier(model_path) if use_classifier else None
        self.geometry = (CropGeometry(self.classifier.config.imgsz, self.classifier.config.side_mm)
                         if self.classifier else CropGeometry())
        # The classifier's patches are cut as it was trained: where a car this high is seen, or
        # (0, as in models that do not say) centred on the space.
        crop = self.classifier.config.raw.get("crop", {}) if self.classifier else {}
        self.patch_seen_height_mm = float(crop.get("car_seen_height_mm", 0.0))
        self.spaces = self.template.all_spaces()
        self.quads_mm, self.track_ids, self.index = self.spaces
        self.space_width_mm = float(np.median(space_frames(self.quads_mm)[3]))
        self.printed = [self.board.tracks[t].color for t in self.track_ids]
        self.player_printed = np.isin(self.printed, PLAYER_COLORS)
        self.colour = ColourModel(ColourModelConfig().scaled(config.colour_sigma_scale))
        # The other lane of each space's double route, as a track id (-1 on single routes).
        self.other_lane = np.asarray(double_ids(self.board))[self.track_ids]

    # -- the photo's way through ----------------------------------------------------------------
    def read_path(self, path: str) -> Reading:
        """Load a photo file (EXIF applied; a large JPEG decoded reduced) and read it."""
        t0 = time.perf_counter()
        w, h = read_header(path).size_wh
        img = load_photo(path, reduce=decode_reduction(w, h))
        return self.read(img, image_name=str(path), t_start=t0, scale_to_photo=w / img.shape[1])

    def read(self, image_bgr: np.ndarray, image_name: str = "", t_start: float | None = None,
             scale_to_photo: float = 1.0) -> Reading:
        """Locate the board in a photo and read it. `scale_to_photo` maps image pixels to the
        photo's displayed pixels (when the image was decoded reduced)."""
        t_start = time.perf_counter() if t_start is None else t_start
        view = self.view(image_bgr)
        loc = view.location
        if scale_to_photo != 1.0:
            loc = BoardLocation(np.asarray(loc.corners_xy, float) * scale_to_photo, loc.orientation,
                                loc.confidence, loc.warnings)
        return self.read_flattened(view.flattened, loc, image_name, t_start, list(view.warnings), view.camera_mm,
                                   view.seen_px_per_mm)

    def view(self, image_bgr: np.ndarray) -> BoardView:
        """The board in a photo as the reader sees it (raises BoardNotFound and the like)."""
        loc = locate_board(image_bgr)
        warnings = list(loc.warnings)
        warnings.extend(w for w in photo_warnings(image_bgr, loc) if w not in warnings)
        return BoardView(loc, flatten(image_bgr, loc.corners_xy, px_per_mm=self.config.px_per_mm),
                         camera_position(loc.corners_xy, image_bgr.shape[1::-1]), photo_px_per_mm(loc.corners_xy),
                         tuple(warnings))

    def view_evidence(self, view: BoardView) -> SpaceEvidence:
        """`evidence` of a board as `view` saw it."""
        return self.evidence(view.flattened, view.camera_mm, view.seen_px_per_mm)

    def read_flattened(self, flattened: np.ndarray, location: BoardLocation, image_name: str = "",
                       t_start: float | None = None, warnings: list[str | Notice] | None = None, camera_mm=None,
                       seen_px_per_mm: float | None = None) -> Reading:
        """Read a board already flattened to the template frame at `config.px_per_mm` (`camera_mm`:
        where the camera stood, see rectify.camera_position; None reads as if from straight above;
        `seen_px_per_mm`: the photo's own scale over the board, None as if sharp enough)."""
        t_start = time.perf_counter() if t_start is None else t_start
        ev = self.evidence(flattened, camera_mm, seen_px_per_mm)
        tracks = self.decide(ev)
        set_aside = ev.calibration.warning() if ev.calibration is not None else None
        warnings = list(warnings or []) + ([set_aside] if set_aside else []) + doubt_warnings(tracks)
        return Reading(image=image_name, location=location, tracks=tracks, flattened=flattened,
                       px_per_mm=self.config.px_per_mm, warnings=warnings,
                       elapsed_ms=(time.perf_counter() - t_start) * 1000.0, space_quads_px=ev.quads_px)

    def evidence(self, flattened: np.ndarray, camera_mm=None, seen_px_per_mm: float | None = None) -> SpaceEvidence:
        """What every space of a flattened board shows, from each source of evidence, fused. With a
        calibration, the board is read without it first, and again with it where it fits the photo
        (see CalibrationConfig); `SpaceEvidence.calibration` says which."""
        cfg = self.config
        lit = light_board(flattened, self.quads_mm, cfg.px_per_mm, cfg.register)
        glare = paper_left_bright(lit) > cfg.glare_paper_level
        spaces = cut_spaces(lit, self.geometry, self.track_ids, self.index)
        plain = self._fused(lit, spaces, camera_mm, seen_px_per_mm, glare=glare)
        if self.calibration is None:
            return plain
        match, against = self._against_calibration(lit, spaces, plain)
        if not match.used:
            return replace(plain, calibration=match)
        lit, spaces, change, ref = against
        return replace(self._fused(lit, spaces, camera_mm, seen_px_per_mm, change, ref, glare), calibration=match)

    def _fused(self, lit: LitBoard, spaces: SpacePatches, camera_mm, seen_px_per_mm=None, change=None,
               ref=None, glare=None) -> SpaceEvidence:
        """The evidence of the colour model, the change against an empty view (`change`, with that
        view's colours `ref`; None: no calibration) and the classifier, fused (`glare`: the spaces
        under glare, see ColourModel.loglik)."""
        cfg = self.config
        # The net's first look, on every space, goes into the colour model's adaptation: the
        # photo's print and car colours are learned from the spaces all the evidence reads as
        # them, not the colours alone (with a track of cars on print of their own colour, the
        # colours alone learn the print from the cars).
        patches, seen = self._net_patches(lit, spaces, camera_mm) if self.classifier is not None else (None, None)
        first = self.classifier.predict(patches) if patches is not None else None
        others = []
        if change is not None:
            others.append((change_loglik(change.d50), cfg.w_change))
        if first is not None and cfg.colour_learns_from_net:
            others_ll = fuse(others + [(self._classifier_loglik(first), cfg.w_classifier)])
        else:
            others_ll = None
        parts = [(self._colour_loglik(lit, spaces, camera_mm, seen_px_per_mm, change, ref, glare, others_ll),
                  cfg.w_colour)] + others
        cprobs = None
        if self.classifier is not None:
            cprobs = self._classifier_probs(lit, spaces, parts, patches, seen, first)
            parts.append((self._classifier_loglik(cprobs), cfg.w_classifier))
        ll = fuse(parts)
        p = np.exp(ll - ll.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return SpaceEvidence(lit.quads_px, self.track_ids, spaces.lab, spaces.lab_spread, ll, p, cprobs, glare=glare)

    def decide(self, ev: SpaceEvidence) -> list[TrackReading]:
        per_track_ll = [ev.loglik[self.track_ids == t.id] for t in self.board.tracks]
        per_track_p = [ev.probs[self.track_ids == t.id] for t in self.board.tracks]
        glare = None if ev.glare is None else [ev.glare[self.track_ids == t.id] for t in self.board.tracks]
        return decide_tracks(per_track_ll, per_track_p, self.board, self.config.decide, space_glare=glare)

    # -- the evidence's sources -----------------------------------------------------------------
    def _against_calibration(self, lit: LitBoard, spaces: SpacePatches, plain: SpaceEvidence):
        """The user's empty board nearest this photo's light, lined up with the photo's board and
        checked against the reading without it (`plain`): on the spaces that reading is sure are
        empty, the view must see no car on more than `CalibrationConfig.max_false_change` of them.
        Returns (CalibrationMatch, (lit, spaces, change, reference) for reading with the view, or
        None where it is not used): the board in the view's frame (which is the template's), what
        changed on each space, and each space's empty colours."""
        cfg = self.config.calibration
        view = self.calibration.nearest_view(spaces.lab)
        sure = self._sure_empty(plain)
        judged = int(np.count_nonzero(sure))
        aligned, score = (align_to_reference(lit.board, view.board_bgr, lit.px_per_mm)
                          if view.board_bgr.shape == lit.board.shape else (lit.board, 0.0))
        if score <= 0:
            return CalibrationMatch(view.photo, judged, 0, "not aligned"), None
        lit = LitBoard(aligned, lit.template_px, lit.template_px, lit.px_per_mm, score)
        change = change_features(lit.board, view.board_bgr, lit.quads_px)
        false = int(np.count_nonzero(change.d50[sure] > CHANGE_MID))  # where change_loglik favours a car
        verdict = ("too few empty" if judged < cfg.min_judged_spaces else
                   "changes on empty" if false > cfg.max_false_change * judged else "used")
        match = CalibrationMatch(view.photo, judged, false, verdict)
        if not match.used:
            return match, None
        ref = EmptyReference(view.lab if view.mean is None else view.mean, view.spread, "calibration")
        return match, (lit, cut_spaces(lit, self.geometry, self.track_ids, self.index), change, ref)

    def _sure_empty(self, ev: SpaceEvidence) -> np.ndarray:
        """(N,) the spaces of the tracks `ev` reads unclaimed and not doubtful."""
        empty = [t.track_id for t in self.decide(ev) if t.owner is None and not t.doubtful]
        return np.isin(self.track_ids, empty)

    def _colour_loglik(self, lit: LitBoard, spaces: SpacePatches, camera_mm, seen_px_per_mm, change, ref,
                       glare=None, other_ll=None) -> np.ndarray:
        """(N, 6) the colour evidence. The mean colour mixes linearly when a car covers part of its
        space (see ColourModel); print is measured on the space, a car where it is seen (parallax)."""
        shift = car_offsets_px(self.quads_mm, camera_mm, self.config.colour_seen_height_mm, lit.px_per_mm)
        # A car lies anywhere across its space (hands place it a few millimetres off its middle, and
        # the side turned away from the light is dark): its colour is measured at places across the
        # space, from its middle to where the measured strip meets the space's edge.
        across = space_normals_px(lit.quads_px)
        reach = 0.5 - INNER[1] / 2
        steps = self._across_steps(reach, seen_px_per_mm)
        colour_car = np.stack([inner_mean_lab(lit.board, lit.quads_px + shift + across * (reach * k / max(steps, 1)))
                               for k in range(-steps, steps + 1)], axis=1)  # (N, 2 steps + 1, 3)
        isolated = None
        if change is not None:
            # With the empty view, what changed is the car: its own colour when it covers part of
            # the space (a fully covered space is read whole: its changed pixels include shadow).
            # The print is still judged on the whole space.
            isolated = (change.changed_share >= 0.3) & (change.changed_share < 0.8)
            colour_car = np.where(isolated[:, None, None], change.changed_lab[:, None, :], colour_car)
        return self.colour.loglik(spaces.lab_mean, self.printed, self.track_ids, ref, colour_car, isolated, glare,
                                  other_ll)

    def _across_steps(self, reach: float, seen_px_per_mm: float | None) -> int:
        """How many places each side of the middle a car's colour is looked for: at most
        `car_across_steps`, and no closer together than a pixel of the photo (on a small board,
        places closer than that see the same pixels, and the best of them is only noise)."""
        steps = self.config.car_across_steps
        if seen_px_per_mm is None:
            return steps
        reach_px = reach * self.space_width_mm * float(seen_px_per_mm)
        return int(np.clip(np.floor(reach_px), 0, steps))

    def _classifier_loglik(self, cprobs: np.ndarray) -> np.ndarray:
        return self.classifier.loglik(cprobs, self.config.classifier_floor, self.config.classifier_colour_trust)

    def _net_patches(self, lit: LitBoard, spaces: SpacePatches, camera_mm) -> tuple[np.ndarray, np.ndarray]:
        """(patches, offsets): each space's patch for the net, cut as it was trained, where a car
        on it is seen (offsets (N, 1, 2) px from the space, see car_offsets_px)."""
        seen = car_offsets_px(self.quads_mm, camera_mm, self.patch_seen_height_mm, lit.px_per_mm)
        patches = spaces.patches if not np.any(seen) else cut_spaces(
            lit, self.geometry, self.track_ids, self.index, seen).patches
        return patches, seen

    def _classifier_probs(self, lit: LitBoard, spaces: SpacePatches, parts: list, patches: np.ndarray,
                          seen: np.ndarray, first: np.ndarray) -> np.ndarray:
        """(N, 6) the classifier's answer on each space's patch (`patches` and `seen` from
        _net_patches; `first`: its first look at them); lanes beside a claimed lane of their double
        judged again with that lane shown bare."""
        cprobs = self._classify(patches, self.player_printed, fuse(parts), first)
        if self.config.lane_alone:
            reading = fuse(parts + [(self._classifier_loglik(cprobs), self.config.w_classifier)])
            self._judge_lanes_alone(lit.board, lit.quads_px + seen, spaces.lab, reading, cprobs, lit.px_per_mm)
        return cprobs

    def _classify(self, patches: np.ndarray, player_printed: np.ndarray, colour_ll: np.ndarray | None = None,
                  probs: np.ndarray | None = None) -> np.ndarray:
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
        probs = self.classifier.predict(patches) if probs is None else probs.copy()
        again = np.array(player_printed, bool)
        if colour_ll is not None:
            again |= (probs[:, 0] < 0.5) != (colour_ll[:, 1:].max(axis=1) > colour_ll[:, 0])
        if again.any():
            turned = self.classifier.predict(np.ascontiguousarray(patches[again][:, ::-1, ::-1]))
            probs[again] = (probs[again] + turned) / 2
        return probs

    def _judge_lanes_alone(self, norm: np.ndarray, quads_px: np.ndarray, lab: np.ndarray, loglik: np.ndarray,
                           cprobs: np.ndarray, px_per_mm: float) -> None:
        """Judge again each lane beside a claimed lane of its double (`loglik`: the first reading;
        `lab`: each space's measured colour) with the claimed lane painted in its bare print;
        updates `cprobs` in place.

        Its patch shows the other lane's cars too, and the net, which saw an empty lane beside cars
        seldom in training, may take them for cars of its own (a black lane beside yellow cars read
        black; empty grey lanes beside black cars read black, P 0.74, and green). The lower track
        ids of such doubles go first, then the others, so that a lane is never painted over while
        it is the one judged. (Judged only where the lane was printed in a player's colour or
        looked like its neighbour's cars, with the net before the narrow student: judging every
        such lane cost that net 3 tracks of the seed-2026 renders; models/README.md.)"""
        p_empty = np.exp(loglik[:, 0] - np.logaddexp.reduce(loglik, axis=1))
        track_empty = {t: float(p_empty[self.track_ids == t].mean()) for t in np.unique(self.track_ids)}
        beside = np.array([o >= 0 and track_empty[o] < 0.5 for o in self.other_lane])
        if not beside.any():
            return
        print_bgr = self._print_bgr(lab, p_empty > 0.5)
        for lower in (True, False):
            k = np.flatnonzero(beside & ((self.track_ids < self.other_lane) == lower))
            if len(k):
                painted = np.isin(self.track_ids, self.other_lane[k])
                board = paint_spaces(norm, quads_px[painted], print_bgr[painted])
                alone = crop_spaces(board, quads_px[k], px_per_mm, self.geometry, self.track_ids[k], self.index[k])
                cprobs[k] = self._classify(alone.patches, self.player_printed[k])

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


def doubt_warnings(tracks: list[TrackReading]) -> list[Notice]:
    """The warning that names the doubtful tracks, least sure first, each with why (none when no
    track is doubtful)."""
    doubtful = sorted((t for t in tracks if t.doubtful), key=lambda t: t.confidence)
    if not doubtful:
        return []
    names = "; ".join(f"{t.a}-{t.b} ({t.color}): {t.reason}" if t.reason else f"{t.a}-{t.b} ({t.color})"
                      for t in doubtful[:6])
    more = f"; and {len(doubtful) - 6} more" if len(doubtful) > 6 else ""
    return [Notice(DOUBTFUL_TRACKS, f"{len(doubtful)} doubtful track(s), please check: {names}{more}")]


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


def read_board(image_bgr: np.ndarray, calibration: Calibration | None = None, image_name: str = "") -> Reading:
    """Read one photo (use `Reader` for many photos: this keeps one reader while the calibration is the same)."""
    if not _LAST or _LAST[0][0] is not calibration:
        _LAST[:] = [(calibration, Reader(calibration))]
    return _LAST[0][1].read(image_bgr, image_name)


_LAST: list = []  # [(calibration, its Reader)] of the last read_board call
