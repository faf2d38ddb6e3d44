"""A user's calibration as evidence: each space against its own empty look on the user's board.

`check_calibration` decides whether the calibration fits a photo: its empty view helps only on
photos in its light and from near its angle (in other light its print colours and its pixels
differ from the photo's empty spaces, and it then reads print as cars), so each photo is read
without it first, and the view is used only where its change evidence agrees with that reading on
the spaces the reader is already sure are empty. `change_loglik` is the evidence itself.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.user import Calibration
from vision.evidence.colour import EmptyReference
from vision.light import LitBoard
from vision.reading import CALIBRATION_SET_ASIDE, SPACE_CLASSES, Notice
from vision.settings import CalibrationGate, ChangeSettings
from vision.spaces import space_grid

WHITE_LAB = (255.0, 128.0, 128.0)  # the light itself: glare mixes the print with it
ECC_GAUSS = 5  # the ECC's gradient filter size


@dataclass(frozen=True)
class SpaceChange:
    """How each space differs from its own empty look (see `change_features`)."""

    d50: np.ndarray  # (N,) median per-pixel Lab distance (glare taken out)
    changed_share: np.ndarray  # (N,) share of the pixels that changed (distance > ChangeSettings.changed_lab)
    changed_lab: np.ndarray  # (N, 3) median Lab of the changed pixels (of all pixels if none changed)


@dataclass(frozen=True)
class CalibrationMatch:
    """How the calibration's empty view nearest a photo's light fits that photo."""

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
class AgainstCalibration:
    """What reading with a calibration's view needs: the board in the view's frame (the
    template's), what changed on each space, and each space's empty colours."""

    lit: LitBoard
    change: SpaceChange
    reference: EmptyReference


def check_calibration(calibration: Calibration, lit: LitBoard, lab: np.ndarray, sure_empty: np.ndarray,
                      gate: CalibrationGate = CalibrationGate(), cfg: ChangeSettings = ChangeSettings()
                      ) -> tuple[CalibrationMatch, AgainstCalibration | None]:
    """The user's empty board nearest this photo's light (`lab`: each space's colour), lined up with
    the photo's board and checked on the spaces a reading without it is sure are empty
    (`sure_empty`, (N,) bool): the view must see no car on more than `gate.max_false_change` of
    them. Returns the match, and what reading with the view needs where it is used (else None)."""
    view = calibration.nearest_view(lab)
    judged = int(np.count_nonzero(sure_empty))
    aligned, score = (align_to_reference(lit.board, view.board_bgr, lit.px_per_mm, cfg)
                      if view.board_bgr.shape == lit.board.shape else (lit.board, 0.0))
    if score <= 0:
        return CalibrationMatch(view.photo, judged, 0, "not aligned"), None
    lit = LitBoard(aligned, lit.template_px, lit.template_px, lit.px_per_mm, score, lit.glare)
    change = change_features(lit.board, view.board_bgr, lit.quads_px, cfg)
    false = int(np.count_nonzero(change.d50[sure_empty] > cfg.mid))  # where change_loglik favours a car
    verdict = ("too few empty" if judged < gate.min_judged_spaces else
               "changes on empty" if false > gate.max_false_change * judged else "used")
    match = CalibrationMatch(view.photo, judged, false, verdict)
    if not match.used:
        return match, None
    reference = EmptyReference(view.lab if view.mean is None else view.mean, view.spread)
    return match, AgainstCalibration(lit, change, reference)


def change_loglik(change: SpaceChange, cfg: ChangeSettings = ChangeSettings()) -> np.ndarray:
    """(N, 6) log-likelihoods from the median distance: a space that differs from its own empty look
    holds a car (of a colour this evidence cannot tell), one that does not is empty."""
    llr = np.clip((np.asarray(change.d50) - cfg.mid) / cfg.scale, -cfg.clip, cfg.clip)
    out = np.zeros((len(llr), len(SPACE_CLASSES)))
    out[:, 1:] = llr[:, None] / 2
    out[:, 0] = -llr / 2
    return out


def isolated_cars(change: SpaceChange, cfg: ChangeSettings = ChangeSettings()) -> np.ndarray:
    """(N,) bool: spaces a car covers in part, where its changed pixels alone are its colour."""
    lo, hi = cfg.isolated_share
    return (change.changed_share >= lo) & (change.changed_share < hi)


def align_to_reference(board_norm: np.ndarray, reference_norm: np.ndarray, px_per_mm: float,
                       cfg: ChangeSettings = ChangeSettings()) -> tuple[np.ndarray, float]:
    """Warp `board_norm` onto `reference_norm` (same frame, both light-normalised) by the homography
    that best matches their map drawings (ECC on a small grey copy). Returns (warped board, ECC score);
    the board unchanged and score 0 when no match is found.

    Why: corners found a few millimetres off move every space a little; the empty reference of the
    same board is the best ruler to put each space back exactly where it was measured.
    """
    h, w = reference_norm.shape[:2]
    f = cfg.align_px_per_mm / px_per_mm
    small = lambda im: cv2.GaussianBlur(  # noqa: E731
        cv2.cvtColor(cv2.resize(im, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA),
                     cv2.COLOR_BGR2GRAY).astype(np.float32), (3, 3), 0)
    a, b = small(reference_norm), small(board_norm)
    warp = np.eye(3, dtype=np.float32)
    try:
        score, warp = cv2.findTransformECC(a, b, warp, cv2.MOTION_HOMOGRAPHY,
                                           (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, cfg.align_iterations,
                                            cfg.align_eps), None, ECC_GAUSS)
    except cv2.error:
        return board_norm, 0.0
    s = np.diag([f, f, 1.0])
    full = np.linalg.inv(s) @ warp.astype(np.float64) @ s  # reference px -> board px
    pts = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], float).T
    moved = full @ pts
    moved = moved[:2] / moved[2]
    if np.abs(moved - pts[:2]).max() > cfg.align_max_shift_mm * px_per_mm:
        return board_norm, 0.0
    out = cv2.warpPerspective(board_norm, full, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_REPLICATE)
    return out, float(score)


def change_features(board_norm: np.ndarray, reference_norm: np.ndarray, quads_px: np.ndarray,
                    cfg: ChangeSettings = ChangeSettings()) -> SpaceChange:
    """How much each space differs from its empty reference, pixel by pixel over its inner part, at
    the shift (up to `cfg.shift_px`, what alignment leaves) that makes it differ least; and the colour
    of what changed: a car that covers half its space shows as half the pixels changed, in its colour."""
    shift_px = cfg.shift_px
    pts = space_grid(quads_px, cfg.inner, cfg.grid)
    n = len(pts)
    xs = np.clip(np.round(pts[..., 0]).astype(int), shift_px, board_norm.shape[1] - 1 - shift_px).reshape(n, -1)
    ys = np.clip(np.round(pts[..., 1]).astype(int), shift_px, board_norm.shape[0] - 1 - shift_px).reshape(n, -1)

    def lab_at(img, yy, xx):
        px = img[yy, xx].reshape(-1, 1, 3)
        return cv2.cvtColor(px, cv2.COLOR_BGR2LAB).reshape(yy.shape + (3,)).astype(np.float32)

    ref = lab_at(reference_norm, ys, xs)
    toward_white = np.array(WHITE_LAB, np.float32) - ref
    white_norm2 = np.maximum((toward_white ** 2).sum(-1), 1.0)
    m = ys.shape[1]
    best = np.full(n, np.inf, np.float32)
    best_obs = np.zeros((n, m, 3), np.float32)
    best_dist = np.zeros((n, m), np.float32)
    for dy in range(-shift_px, shift_px + 1):
        for dx in range(-shift_px, shift_px + 1):
            obs = lab_at(board_norm, ys + dy, xs + dx)
            diff = obs - ref
            # Glare mixes the printed colour with the light's white: take that part out (only
            # towards white, never darker), since a glossy print catches it and stays a print.
            alpha = np.clip((diff * toward_white).sum(-1) / white_norm2, 0.0, 1.0)
            dist = np.linalg.norm(diff - alpha[..., None] * toward_white, axis=-1)
            d = np.sort(dist, axis=1)
            better = d[:, m // 2] < best
            best[better] = d[better, m // 2]
            best_obs[better] = obs[better]
            best_dist[better] = dist[better]
    changed = best_dist > cfg.changed_lab
    share = changed.mean(axis=1)
    changed_lab = np.median(best_obs, axis=1)
    for k in np.flatnonzero(changed.any(axis=1)):
        changed_lab[k] = np.median(best_obs[k][changed[k]], axis=0)
    return SpaceChange(best, share.astype(np.float32), changed_lab)
