"""Read one board photo: the steps in order, each one function with a typed result.

    photo  -> locate   vision.locate.locate_board        BoardLocation (or a typed refusal)
           -> flatten  vision.rectify.flatten            BoardView (+ where the camera stood)
           -> light    vision.light.light_board          LitBoard (light evened out, spaces registered, glare)
           -> sample   vision.spaces.sample_spaces       SpaceSamples (every space cut once)
           -> evidence vision.evidence: net, change, colour,   (N, 6) log-likelihoods each
                       the car-or-print check, the car-colour net
           -> refine   vision.refine: second look, lanes alone   the net's answers judged again
           -> fuse     vision.fuse.fuse                  SpaceEvidence
           -> decide   vision.decide.decide              Decision (the rules and the prior)
           -> doubt    vision.decide.doubt.doubt_tracks  TrackReading x 100
           -> Reading

With a user's calibration, the photo is read without it first; `check_calibration` then says whether
it fits the photo, and where it does the board is read again with it (light to fuse) before the
decision. A photo whose flash fired is read again (light to doubt) with the veil of added light
its print shows taken off (`vision.light.take_off_veil`). `Reader.trace` returns every stage's
result; `Reader.read` the Reading alone. All the settings are one tree, `vision.settings.ReaderSettings`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from calibration.template import load_template
from calibration.user import Calibration
from scoring.board import load_board
from vision.decide import Decision, decide_tracks
from vision.decide.doubt import doubt_warnings
from vision.evidence.change import AgainstCalibration, CalibrationMatch, change_loglik, check_calibration, isolated_cars
from vision.evidence.colour import ColourModel
from vision.evidence.net import Remembered, load_car_colour, load_classifier, load_occupancy
from vision.fuse import SpaceEvidence, fuse, space_probs
from vision.image_io import load_photo, read_header
from vision.light import LitBoard, light_board, print_contrast_loss, print_glare, take_off_veil, veil_map
from vision.locate import BoardMirrored, BoardNotFound, LocateConfig, locate_board, scale_location
from vision.quality import MSG_FLASH, photo_warnings
from vision.reading import PLAYER_COLORS, BoardLocation, Notice, Reading, TrackReading
from vision.rectify import camera_position, flatten, photo_px_per_mm
from vision.refine import BoardSpaces, lanes_alone, second_look
from vision.settings import DoubtSettings, FuseSettings, LightSettings, ReaderSettings, load_settings
from vision.spaces import CropGeometry, SpaceSamples, sample_spaces, soften_patches

DECODE_SIDE = 2000  # px of photo the reader needs: the board is flattened to ~1600 px wide
MAX_REDUCE = 8  # the largest JPEG decode reduction libjpeg offers


@dataclass(frozen=True)
class BoardView:
    """A photo's board as the reader sees it: located, flattened to the template frame, where the
    camera stood, and the photo's own scale over the board (its pixels per board millimetre, which
    says how fine a detail the photo can show)."""

    location: BoardLocation  # in the photo's pixels
    flattened: np.ndarray  # at ReaderSettings.px_per_mm
    camera_mm: np.ndarray | None = None  # see rectify.camera_position (None: as if from straight above)
    seen_px_per_mm: float | None = None  # None: as if sharp enough for every detail
    warnings: tuple = ()  # the locator's and the photo's quality warnings
    flash_fired: bool = False  # the photo file says its flash fired (its EXIF): doubted by its own standard

    @classmethod
    def of_flattened(cls, flattened: np.ndarray, camera_mm=None) -> "BoardView":
        """A board already flattened to the template frame (no photo: its corners are unknown)."""
        return cls(BoardLocation(np.zeros((4, 2)), 0, 1.0), flattened, camera_mm)


@dataclass(frozen=True)
class ReadingTrace:
    """Every stage's result for one photo (see the module doc), in the order they ran."""

    view: BoardView
    lit: LitBoard  # with a calibration used: the board put in its frame
    samples: SpaceSamples
    net_first: np.ndarray | None  # (N, 6) the net's first look (None: read without the net)
    evidence: SpaceEvidence
    decision: Decision
    tracks: list[TrackReading]
    reading: Reading
    calibration: CalibrationMatch | None = None  # how the calibration fit (None: none given)


class Reader:
    """Loads the template, the board's facts and the net once; `read(photo)` per photo."""

    def __init__(self, calibration: Calibration | None = None, use_classifier: bool = True,
                 model_path: str | None = None, settings: ReaderSettings | None = None, template=None,
                 geometry: CropGeometry | None = None, net_seen_height_mm: float | None = None,
                 occupancy_path: str | None = None, car_colour_path: str | None = None):
        """`geometry` and `net_seen_height_mm`: how the net's patches are cut (default: as its
        config says it was trained; without a net, the default geometry, centred). `occupancy_path`,
        `car_colour_path`: another car-or-print check, car-colour net, than the packaged one (each
        read only with a net)."""
        self.net = load_classifier(model_path) if use_classifier else None
        self.settings = settings if settings is not None else load_settings(self.net.path if self.net else None)
        self.board = load_board()
        self.template = template if template is not None else load_template()
        self.calibration = calibration
        if geometry is None:
            geometry = CropGeometry(self.net.config.imgsz, self.net.config.side_mm) if self.net else CropGeometry()
        self.geometry = geometry
        # The net's patches are cut as it was trained: where a car this high is seen, or (0, as in
        # models that do not say) centred on the space.
        if net_seen_height_mm is None:
            net_seen_height_mm = self.net.config.raw.get("crop", {}).get("car_seen_height_mm", 0.0) if self.net else 0.0
        self.net_seen_height_mm = float(net_seen_height_mm)
        # The car-or-print check looks at the net's own patches: only where they are cut as it was trained.
        self.occupancy = self._cut_alike(load_occupancy(occupancy_path) if self.net is not None else None)
        self.car_colour = self._cut_alike(load_car_colour(car_colour_path) if self.net is not None else None)
        self.quads_mm, self.track_ids, self.index = self.template.all_spaces()
        printed = np.array([self.board.tracks[t].color for t in self.track_ids])
        self.spaces = BoardSpaces(self.track_ids, self.index, printed, np.isin(printed, PLAYER_COLORS),
                                  np.asarray(self.board.double_ids)[self.track_ids])
        self.colour = ColourModel(self.settings.colour)
        self.rows = [np.flatnonzero(self.track_ids == t.id) for t in self.board.tracks]  # each track's spaces
        self.centres_mm = self.template.space_centers()[0]
        self.printed_lab = self._printed_lab(printed)

    def _cut_alike(self, model):
        """`model` (a net on the classifier's patches), or None where its patches are cut otherwise."""
        if model is not None and (
                CropGeometry(model.config.imgsz, model.config.side_mm) != self.geometry
                or model.config.raw["crop"].get("car_seen_height_mm", 0.0) != self.net_seen_height_mm):
            return None
        return model

    # -- the photo's way through ----------------------------------------------------------------
    def read_path(self, path: str) -> Reading:
        """Load a photo file (EXIF applied; a large JPEG decoded reduced) and read it."""
        return self.trace_path(path).reading

    def trace_path(self, path: str) -> ReadingTrace:
        t0 = time.perf_counter()
        return self.trace_view(self.view_path(path), image_name=str(path), t_start=t0)

    def view_path(self, path: str) -> BoardView:
        """Load a photo file (EXIF applied; a large JPEG decoded reduced), locate and flatten its
        board; the location is in the photo file's pixels. Where the reduced photo shows no board,
        the photo at full size is tried: the reduction assumes a board filling the frame, and a
        board small in a large photo may need every pixel for its outline and city dots."""
        header = read_header(path)
        w, h = header.size_wh
        reduce = decode_reduction(w, h)
        img = load_photo(path, reduce=reduce)
        try:
            view = self.view(img, scale_to_photo=w / img.shape[1])
        except BoardNotFound as e:
            if reduce == 1 or isinstance(e, BoardMirrored):
                raise
            # The colour cast was evened out on the reduced photo already (`LocateConfig.cast_reach`);
            # at full size that search would cost a photo with no board seconds more.
            view = self.view(load_photo(path), locate=replace(LocateConfig(), cast_reach=0.0))
        if header.flash_fired:
            view = replace(view, warnings=(*view.warnings, MSG_FLASH), flash_fired=True)
        return view

    def read(self, image_bgr: np.ndarray, image_name: str = "") -> Reading:
        return self.trace(image_bgr, image_name).reading

    def trace(self, image_bgr: np.ndarray, image_name: str = "", t_start: float | None = None,
              scale_to_photo: float = 1.0) -> ReadingTrace:
        """Every stage's result on a photo (BGR, as displayed). `scale_to_photo` maps the image's
        pixels to the photo's (when it was decoded reduced)."""
        t_start = time.perf_counter() if t_start is None else t_start
        return self.trace_view(self.view(image_bgr, scale_to_photo), image_name, t_start)

    def view(self, image_bgr: np.ndarray, scale_to_photo: float = 1.0,
             locate: LocateConfig = LocateConfig()) -> BoardView:
        """Locate (by `locate`) and flatten: the board in a photo as the reader sees it (raises
        BoardNotFound and the like). Its location is in the photo's pixels (`scale_to_photo` times
        the image's)."""
        return self.view_at(image_bgr, locate_board(image_bgr, locate), scale_to_photo)

    def view_at(self, image_bgr: np.ndarray, loc: BoardLocation, scale_to_photo: float = 1.0) -> BoardView:
        """The board at a known location (in the image's pixels) flattened, as `view` does after
        locating it."""
        warnings = list(loc.warnings)
        warnings.extend(w for w in photo_warnings(image_bgr, loc) if w not in warnings)
        flat = flatten(image_bgr, loc.corners_xy, px_per_mm=self.settings.px_per_mm)
        camera = camera_position(loc.corners_xy, image_bgr.shape[1::-1])
        seen = photo_px_per_mm(loc.corners_xy)
        if scale_to_photo != 1.0:
            loc = scale_location(loc, scale_to_photo)
        return BoardView(loc, flat, camera, seen, tuple(warnings))

    def read_view(self, view: BoardView, image_name: str = "") -> Reading:
        return self.trace_view(view, image_name).reading

    def trace_view(self, view: BoardView, image_name: str = "", t_start: float | None = None) -> ReadingTrace:
        """Light to Reading on a located, flattened board (see the module doc)."""
        t_start = time.perf_counter() if t_start is None else t_start
        s = self.settings
        lit = light_board(view.flattened, self.quads_mm, s.px_per_mm, s.light)
        veiled = view.flash_fired and s.light.flash_veil
        # A flash photo may be read twice, its second reading differing only under the veil.
        nets = tuple(None if n is None else Remembered(n) for n in (self.net, self.occupancy, self.car_colour)
                     ) if veiled else None
        samples, first, evidence = self._evidence(lit, view, nets=nets)
        doubt = self.doubt_settings(view.flash_fired)
        match, against = None, None
        if self.calibration is not None:
            sure_empty = self._sure_empty(evidence, doubt)
            match, against = check_calibration(self.calibration, lit, samples.printed.lab, sure_empty,
                                               s.calibration, s.change)
            if against is not None:
                lit = against.lit
                samples, first, evidence = self._evidence(lit, view, against)
        decision, tracks = self.decide_evidence(evidence, doubt)
        if veiled and against is None:
            lit, samples, first, evidence, decision, tracks = self._veil_off(lit, view, samples, first, evidence,
                                                                             decision, tracks, doubt, nets)
        set_aside = match.warning() if match is not None else None
        warnings: list[str | Notice] = list(view.warnings) + ([set_aside] if set_aside else [])
        warnings += doubt_warnings(tracks, doubt)
        reading = Reading(image=image_name, location=view.location, tracks=tracks, flattened=view.flattened,
                          px_per_mm=s.px_per_mm, warnings=warnings,
                          elapsed_ms=(time.perf_counter() - t_start) * 1000.0, space_quads_px=evidence.quads_px)
        return ReadingTrace(view, lit, samples, first, evidence, decision, tracks, reading, match)

    def _veil_off(self, lit: LitBoard, view: BoardView, samples: SpaceSamples, first, evidence: SpaceEvidence,
                  decision: Decision, tracks: list[TrackReading], doubt: DoubtSettings, nets: tuple | None = None):
        """A flash photo read again with the veil its print shows taken off (`LightSettings.flash_veil`;
        a calibration's view is not). A track doubtful as first read stays so, and one read otherwise
        now is doubtful: the stretched contrast is surer where the glare was, not everywhere."""
        s = self.settings.light
        loss, telling = print_contrast_loss(samples.printed.lab, self.printed_lab, self.spaces.printed,
                                            self._empty(evidence.loglik), s)
        veil = veil_map(loss, telling, self.centres_mm, lit.board.shape[:2], lit.px_per_mm, s)
        if not np.any(veil > 0):
            return lit, samples, first, evidence, decision, tracks
        lit = take_off_veil(lit, veil, s)
        samples, first, evidence = self._evidence(lit, view, nets=nets)
        decision, again = self.decide_evidence(evidence, doubt)
        before = {t.track_id: t for t in tracks}
        marked = []
        for t in again:
            was = before[t.track_id]
            if not t.doubtful and was.owner != t.owner:
                t = replace(t, doubtful=True, reason=f"under the flash's glare it reads as {_said(was.owner)}, "
                                                     f"with the glare taken off as {_said(t.owner)}")
            elif not t.doubtful and was.doubtful:
                t = replace(t, doubtful=True, reason=was.reason)
            marked.append(t)
        return lit, samples, first, evidence, decision, marked

    def _empty(self, loglik: np.ndarray) -> np.ndarray:
        """(N,) bool: the spaces of the tracks the evidence `loglik` reads empty (each track judged whole)."""
        per_track = np.zeros((len(self.board.tracks), loglik.shape[1]))
        np.add.at(per_track, self.track_ids, loglik)
        return per_track.argmax(axis=1)[self.track_ids] == 0

    # -- the stages between light and decide ------------------------------------------------------
    def _evidence(self, lit: LitBoard, view: BoardView, against: AgainstCalibration | None = None,
                  nets: tuple | None = None) -> tuple[SpaceSamples, np.ndarray | None, SpaceEvidence]:
        """sample -> evidence (net, change, colour) -> refine -> fuse, on one lit board (`against`:
        a calibration's view to read it with; `nets`: the space classifier, the car-or-print check
        and the car-colour net to ask, else the reader's)."""
        s = self.settings
        weights = self.fuse_settings(view.flash_fired)
        net, occupancy, car_colour = nets if nets is not None else (self.net, self.occupancy, self.car_colour)
        samples = sample_spaces(lit, self.geometry, self.track_ids, self.index, self.quads_mm, view.camera_mm,
                                view.seen_px_per_mm, self.net_seen_height_mm, s.sample)
        first = net.predict(samples.net_patches) if net is not None else None
        others = [(change_loglik(against.change, s.change), weights.change)] if against is not None else []
        check = None
        if first is not None and occupancy is not None and weights.occupancy:
            check_patches = soften_patches(samples.net_patches, view.seen_px_per_mm, s.net.check_px_per_mm,
                                           s.px_per_mm)
            check = (occupancy.loglik(occupancy.predict(check_patches), s.net), weights.occupancy)
        learn_from = None
        if first is not None and s.colour.learns_from_net:
            teachers = [(net.loglik(first, s.net), weights.net)]
            if check is not None and s.colour.learns_from_check:
                teachers.append(check)
            learn_from = fuse(others + teachers)
        parts = [(self._colour(lit, samples, against, learn_from), weights.colour)] + others
        names = ["colour"] + (["change"] if against is not None else [])
        probs = first
        if first is not None:
            if s.refine.second_look:
                probs = second_look(net, samples, probs, self.spaces, fuse(parts))
            if s.refine.lanes_alone:
                reading_ll = fuse(parts + [(net.loglik(probs, s.net), weights.net)])
                probs = lanes_alone(net, lit, samples, probs, self.spaces, reading_ll, self.geometry,
                                    s.colour, s.refine)
            parts.append((net.loglik(probs, s.net), weights.net))
            names.append("net")
            if check is not None:
                parts.append(check)
                names.append("occupancy")
            if car_colour is not None and weights.car_colour:
                asked = self._car_colour(car_colour, samples.net_patches, fuse(parts), weights.car_colour_from)
                parts.append((asked, weights.car_colour))
                names.append("car colour")
        ll = fuse(parts)
        glare = self.glare(lit.glare, samples.printed.lab, ll)
        if s.light.print_glare_colours and glare is not None and np.any(glare & ~self._glared(lit)):
            # Glare the print shows washes the cars under it out as the paper's glare does: the
            # colours read again, letting cars there be mixed with the light's white (the net's
            # answers, refined already, kept).
            parts[0] = (self._colour(replace(lit, glare=glare), samples, against, learn_from), weights.colour)
            ll = fuse(parts)
        sources = {name: ll_w * w for name, (ll_w, w) in zip(names, parts)}
        evidence = SpaceEvidence(lit.quads_px, self.track_ids, samples.printed.lab, ll, space_probs(ll), probs,
                                 glare, sources)
        return samples, first, evidence

    def _car_colour(self, car_colour, patches: np.ndarray, loglik: np.ndarray, ask_from: float) -> np.ndarray:
        """(N, 6) the car-colour net's (`car_colour`) log-likelihoods, asked only where the evidence `loglik` so far
        gives a car at least the chance `ask_from` (`FuseSettings.car_colour_from`); 0, no say, elsewhere."""
        out = np.zeros_like(loglik)
        ask = np.flatnonzero(1.0 - space_probs(loglik)[:, 0] >= ask_from)
        if len(ask):
            out[ask] = car_colour.loglik(car_colour.predict(patches[ask]), self.settings.net)
        return out

    @staticmethod
    def _glared(lit: LitBoard) -> np.ndarray:
        return np.zeros(len(lit.quads_px), bool) if lit.glare is None else np.asarray(lit.glare, bool)

    def _printed_lab(self, printed: np.ndarray) -> np.ndarray:
        """(N, 3) each space's print colour as the template measured it (the art under a track
        lightens or darkens its print), else its colour's start (`ColourSettings.printed_lab`)."""
        labs = [t.space_colors_lab for t in self.template.tracks]  # in `all_spaces` order
        if any(lab is None for lab in labs):
            return np.array([self.colour.printed_lab[c] for c in printed])
        return np.concatenate(labs).astype(float)

    def glare(self, paper_glare: np.ndarray | None, lab: np.ndarray, loglik: np.ndarray,
              light: LightSettings | None = None) -> np.ndarray | None:
        """(N,) bool, the spaces under glare: where the paper around them stays too bright once
        the light was evened out (`paper_glare`, `LitBoard.glare`), or where the print of the empty
        spaces around them lost its contrast (`print_glare` on the spaces' printed colour `lab`;
        empty: on the tracks the evidence `loglik` reads so). `light`: other settings than the reader's."""
        light = self.settings.light if light is None else light
        if light.print_glare_loss <= 0:
            return paper_glare
        by_print = print_glare(lab, self.printed_lab, self.spaces.printed, self._empty(loglik), self.centres_mm, light)
        return by_print if paper_glare is None else np.asarray(paper_glare, bool) | by_print

    def _colour(self, lit: LitBoard, samples: SpaceSamples, against: AgainstCalibration | None,
                learn_from: np.ndarray | None) -> np.ndarray:
        """(N, 6) the colour evidence: print measured on the space, a car where it is seen; with a
        calibration, what changed is the car where it covers part of its space."""
        car_lab, isolated, reference = samples.car_lab, None, None
        if against is not None:
            isolated = isolated_cars(against.change, self.settings.change)
            car_lab = np.where(isolated[:, None, None], against.change.changed_lab[:, None, :], car_lab)
            reference = against.reference
        return self.colour.loglik(samples.printed.lab_mean, self.spaces.printed, self.track_ids, reference, car_lab,
                                  isolated, lit.glare, learn_from)

    def fuse_settings(self, flash_fired: bool) -> FuseSettings:
        """The sources' weights: their own for photos whose flash fired."""
        return self.settings.fuse_flash if flash_fired else self.settings.fuse

    def doubt_settings(self, flash_fired: bool) -> DoubtSettings:
        """The standard tracks are doubted by: their own for photos whose flash fired."""
        return self.settings.doubt_flash if flash_fired else self.settings.doubt

    def decide_evidence(self, evidence: SpaceEvidence, doubt: DoubtSettings) -> tuple[Decision, list[TrackReading]]:
        """decide -> doubt on the fused evidence."""
        glare = None if evidence.glare is None else [evidence.glare[r] for r in self.rows]
        return decide_tracks([evidence.loglik[r] for r in self.rows], self.board,
                             [evidence.probs[r] for r in self.rows], glare, self.settings.decide, doubt)

    def _sure_empty(self, evidence: SpaceEvidence, doubt: DoubtSettings) -> np.ndarray:
        """(N,) the spaces of the tracks `evidence` reads unclaimed and not doubtful."""
        empty = [t.track_id for t in self.decide_evidence(evidence, doubt)[1] if t.owner is None and not t.doubtful]
        return np.isin(self.track_ids, empty)


def decode_reduction(width: int, height: int) -> int:
    """JPEG decode reduction (1, 2, 4, 8) for a photo: ~DECODE_SIDE px of it is all the reader needs."""
    reduce = 1
    while max(width, height) / (reduce * 2) >= DECODE_SIDE and reduce < MAX_REDUCE:
        reduce *= 2
    return reduce


def _said(owner: str | None) -> str:
    return f"{owner} cars" if owner else "empty"
