"""Settle every space on its printed outline: found spaces are moved onto the outline map, missing
ones are tracked on from a settled neighbour or a city, and overlapping ones pushed apart."""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from scoring.board import PRINTED_COLORS
from vision.measure.chains import _Chain, _hermite
from vision.measure.spaces import PX_PER_MM, SpaceCandidates


# ----------------------------------------------------------------------------------------------
def outline_map(board_bgr: np.ndarray) -> np.ndarray:
    """Dark thin lines (a space's printed outline, a gray space's frame) as a float map, 0..1."""
    L = cv2.cvtColor(cv2.GaussianBlur(board_bgr, (3, 3), 0), cv2.COLOR_BGR2LAB)[..., 0]
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (int(2.5 * PX_PER_MM) | 1,) * 2)
    bh = cv2.morphologyEx(L, cv2.MORPH_BLACKHAT, k).astype(np.float32)
    return np.minimum(bh / 30.0, 1.0)


@dataclass
class _Maps:
    """What the fitting samples: the outline map (0..1) and the photo in Lab (float), both at
    PX_PER_MM; and the spaces already settled (centres, axes, in mm), which new ones must avoid."""

    lines: np.ndarray
    lab: np.ndarray
    space_mm: tuple[float, float] = (25.0, 8.0)
    occupied: list = field(default_factory=list)  # (centre, axis) of settled spaces

    def overlap(self, centers: np.ndarray, axes: np.ndarray) -> np.ndarray:
        """(h,) share of 27 points spread over each hypothesis that fall inside a settled space."""
        if not self.occupied:
            return np.zeros(len(centers))
        a, b = self.space_mm[0] / 2, self.space_mm[1] / 2
        oc = np.array([c for c, _ in self.occupied])
        ou = np.array([u for _, u in self.occupied])
        near = np.hypot(*(oc[None] - centers.mean(0)).T.reshape(2, -1)) <= 2 * a + \
            np.hypot(*(centers - centers.mean(0)).T).max()
        oc, ou = oc[near], ou[near]
        if not len(oc):
            return np.zeros(len(centers))
        ti, tj = np.meshgrid(np.linspace(-0.45, 0.45, 9) * 2 * a, np.linspace(-0.4, 0.4, 3) * 2 * b)
        nrm = np.stack([-axes[:, 1], axes[:, 0]], 1)
        pts = centers[:, None, :] + ti.ravel()[None, :, None] * axes[:, None, :] + tj.ravel()[None, :, None] * nrm[:, None, :]
        d = pts[:, :, None, :] - oc[None, None]  # (h, 27, m, 2)
        along = np.abs((d * ou[None, None]).sum(-1))
        across = np.abs(d[..., 0] * -ou[None, None, :, 1] + d[..., 1] * ou[None, None, :, 0])
        inside = ((along < a - 0.3) & (across < b - 0.3)).any(-1)
        return inside.mean(axis=1)


def _outline_scores(maps: _Maps, centers: np.ndarray, axes: np.ndarray, long_mm: float,
                    short_mm: float, want_lab=None) -> np.ndarray:
    """How well rectangles (centres (h, 2), unit axes (h, 2), mm) sit on printed outlines: the
    weaker long side plus the weaker short side, less the inside (all means of the outline map);
    with `want_lab`, less a penalty for an inside of another colour."""
    lines = maps.lines
    s = PX_PER_MM
    inset = 0.5  # the printed outline lies just inside the space's edge
    a = long_mm / 2 - inset
    b = short_mm / 2 - inset
    tl = np.linspace(-a + 1, a - 1, 16)
    ts = np.linspace(-b + 0.8, b - 0.8, 6)
    u = axes[:, None, :]
    n = np.stack([-axes[:, 1], axes[:, 0]], 1)[:, None, :]
    c = centers[:, None, :]

    def mean_at(pts, image=lines):
        p = pts * s
        xi = np.clip(np.round(p[..., 0]).astype(int), 0, lines.shape[1] - 1)
        yi = np.clip(np.round(p[..., 1]).astype(int), 0, lines.shape[0] - 1)
        return image[yi, xi].mean(axis=1)

    side1 = mean_at(c + tl[None, :, None] * u + b * n)
    side2 = mean_at(c + tl[None, :, None] * u - b * n)
    end1 = mean_at(c + a * u + ts[None, :, None] * n)
    end2 = mean_at(c - a * u + ts[None, :, None] * n)
    gi, gj = np.meshgrid(np.linspace(-a + 3, a - 3, 8), np.linspace(-b + 2, b - 2, 3))
    inner_pts = c + gi.ravel()[None, :, None] * u + gj.ravel()[None, :, None] * n
    score = np.minimum(side1, side2) + 0.5 * np.minimum(end1, end2) - 0.5 * mean_at(inner_pts)
    if want_lab is not None:
        lab = mean_at(inner_pts, maps.lab)
        distance = np.sqrt(((lab - np.asarray(want_lab, float)) ** 2).sum(-1))
        score = score - 0.5 * np.minimum(distance, 60) / 60
    return score


def refine_space(maps: _Maps, center, axis, long_mm: float, short_mm: float,
                 reach_mm: tuple[float, float, float], want_lab=None,
                 avoid: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """Move a space (within reach: along, across in mm, turn in degrees) onto its printed outline.
    Returns the centre, axis and the outline score there."""
    ra, rl, rt = reach_mm
    da = np.arange(-ra, ra + 1e-6, 0.25)
    dl = np.arange(-rl, rl + 1e-6, 0.25)
    dt = np.deg2rad(np.arange(-rt, rt + 1e-6, 1.0))
    A, Lo, T = np.meshgrid(da, dl, dt, indexing="ij")
    u0 = np.asarray(axis, float)
    n0 = np.array([-u0[1], u0[0]])
    cs = np.asarray(center, float) + A.ravel()[:, None] * u0 + Lo.ravel()[:, None] * n0
    ang = np.arctan2(u0[1], u0[0]) + T.ravel()
    us = np.stack([np.cos(ang), np.sin(ang)], 1)
    score = _outline_scores(maps, cs, us, long_mm, short_mm, want_lab)
    if avoid:
        score = score - 2.0 * maps.overlap(cs, us)
    # Small preference for staying put: ties go to the chain's own estimate.
    score = score - 0.004 * (np.abs(A.ravel()) + np.abs(Lo.ravel()))
    best = int(np.argmax(score))
    return cs[best], us[best], float(score[best])


# ----------------------------------------------------------------------------------------------
def _quad(center, axis, long_mm, short_mm) -> np.ndarray:
    """Corners of a space: near-a end first side, far end, far end other side, near end other side."""
    u = np.asarray(axis, float)
    n = np.array([-u[1], u[0]])
    hl, hs = u * long_mm / 2, n * short_mm / 2
    c = np.asarray(center, float)
    return np.array([c - hl - hs, c + hl - hs, c + hl + hs, c - hl + hs])


def _settle_found(ch: _Chain):
    """The chain's found spaces stay where their detectors put them (nudging them onto outlines
    or faces made them worse: on a drawn board with known spaces, and against the printed spaces
    of the played photos). Returns centres, axes and which are settled."""
    centers = [np.asarray(c, float) for c in ch.centers]
    axes = [np.asarray(u, float) for u in ch.axes]
    return centers, axes, [p >= 0 for p in ch.picks]


def _place_missing(maps: _Maps, centers, axes, settled, A, B, long_mm: float, short_mm: float, want_lab):
    """Spaces no detector found, placed on the print: one between two settled neighbours is
    fitted near the smooth curve between them; one beside a settled neighbour is tracked on from
    it (any bend up to 80 degrees, gap up to 4 mm); a track with nothing found is tracked from a
    city. New spaces avoid the spaces already settled anywhere on the board."""
    n = len(centers)
    centers, axes, settled = list(centers), list(axes), list(settled)
    while not all(settled):
        progress = False
        for k in range(n):
            if settled[k]:
                continue
            before = k > 0 and settled[k - 1]
            after = k < n - 1 and settled[k + 1]
            if before and after:
                p, tn = _hermite(centers[k - 1], axes[k - 1], centers[k + 1], axes[k + 1], 0.5)
                centers[k], axes[k] = _settle(maps, p, tn, long_mm, short_mm, (3.0, 2.0, 8.0), want_lab, avoid=True)
            elif before or after:
                j = k - 1 if before else k + 1
                sign = 1.0 if before else -1.0
                centers[k], axes[k] = _track_next(maps, centers[j], axes[j] * sign, long_mm, short_mm, want_lab)
                axes[k] = axes[k] * sign
            else:
                continue
            maps.occupied.append((centers[k], axes[k]))
            settled[k] = progress = True
        if not progress:  # nothing found on this track: follow the print from a city
            centers, axes = _track_from_city(maps, A, B, n, long_mm, short_mm, want_lab)
            maps.occupied.extend(zip(centers, axes))
            break
    return centers, axes


def _track_from_city(maps: _Maps, A, B, n: int, long_mm: float, short_mm: float, want_lab):
    """A track no detector found: tracked from either city (the first space the best outline fit
    a little way out towards the other city, each next one tracked on), whichever fits better."""
    best = None
    for start, end, backwards in ((A, B, False), (B, A, True)):
        centers, axes = _track_one_way(maps, start, end, n, long_mm, short_mm, want_lab)
        cs, us = np.array(centers), np.array(axes)
        fit = float((_outline_scores(maps, cs, us, long_mm, short_mm, want_lab) - 2.0 * maps.overlap(cs, us)).sum())
        if backwards:
            centers, axes = centers[::-1], [-u for u in axes[::-1]]
        if best is None or fit > best[0]:
            best = (fit, centers, axes)
    return best[1], best[2]


def _track_one_way(maps: _Maps, A, B, n: int, long_mm: float, short_mm: float, want_lab):
    AB = B - A
    base = np.arctan2(AB[1], AB[0])
    hc, hu, prior = [], [], []
    for dirn in np.deg2rad(np.arange(-60, 60.1, 3)):
        r = np.array([np.cos(base + dirn), np.sin(base + dirn)])
        for tilt in np.deg2rad(np.arange(-15, 15.1, 5)):
            v = np.array([np.cos(base + dirn + tilt), np.sin(base + dirn + tilt)])
            for d in np.arange(0.5 * long_mm + 2, 0.5 * long_mm + 22, 1.0):
                hc.append(A + r * d)
                hu.append(v)
                prior.append(0.1 * abs(dirn) / np.deg2rad(60))
    hc, hu = np.array(hc), np.array(hu)
    score = _outline_scores(maps, hc, hu, long_mm, short_mm, want_lab) - np.array(prior) - 2.0 * maps.overlap(hc, hu)
    best = int(np.argmax(score))
    centers, axes = [hc[best]], [hu[best]]
    for _ in range(n - 1):
        c, u = _track_next(maps, centers[-1], axes[-1], long_mm, short_mm, want_lab)
        centers.append(c)
        axes.append(u)
    return centers, axes


def _settle(maps, c, u, long_mm, short_mm, reach, want_lab=None, avoid=False):
    c2, u2, _ = refine_space(maps, c, u, long_mm, short_mm, reach, want_lab, avoid)
    return c2, (u2 if u2 @ u >= 0 else -u2)


def _track_next(maps, c, u, long_mm: float, short_mm: float, want_lab):
    """The space after the one at centre c (axis u pointing onwards): best outline fit among
    spaces that start 0.5..4 mm beyond its end, turned by up to 80 degrees either way (Raleigh-
    Charleston bends by about 70)."""
    nrm = np.array([-u[1], u[0]])
    end = c + u * long_mm / 2
    hyps_c, hyps_u, prior = [], [], []
    for turn in np.deg2rad(np.arange(-80, 80.1, 3)):
        v = np.array([np.cos(turn) * u[0] - np.sin(turn) * u[1], np.sin(turn) * u[0] + np.cos(turn) * u[1]])
        # A bend pivots about a corner of the two spaces, so the new space's near end may sit up
        # to a width to either side.
        for shift in np.linspace(-short_mm, short_mm, 9):
            for gap in np.arange(0.5, 4.01, 0.5):
                hyps_c.append(end + nrm * shift + v * (gap + long_mm / 2))
                hyps_u.append(v)
                # Most tracks run straight or gently curved: bends and offsets must earn their place.
                prior.append(0.1 * abs(turn) / np.deg2rad(45) + 0.02 * abs(shift))
    hc, hu = np.array(hyps_c), np.array(hyps_u)
    score = _outline_scores(maps, hc, hu, long_mm, short_mm, want_lab) - np.array(prior) - 2.0 * maps.overlap(hc, hu)
    best = int(np.argmax(score))
    return _settle(maps, hc[best], hu[best], long_mm, short_mm, (1.0, 1.0, 3.0), want_lab, avoid=True)


def _penetration(c1, u1, c2, u2, a: float, b: float) -> tuple[float, np.ndarray]:
    """How deep two equal rectangles (half sizes a, b) overlap, and the unit direction that
    separates them fastest (from 1 to 2); depth <= 0 when they do not overlap."""
    best = (np.inf, None)
    d = c2 - c1
    for axis in (u1, np.array([-u1[1], u1[0]]), u2, np.array([-u2[1], u2[0]])):
        r1 = a * abs(u1 @ axis) + b * abs(u1[0] * -axis[1] + u1[1] * axis[0])
        r2 = a * abs(u2 @ axis) + b * abs(u2[0] * -axis[1] + u2[1] * axis[0])
        depth = r1 + r2 - abs(d @ axis)
        if depth < best[0]:
            best = (depth, axis if d @ axis >= 0 else -axis)
    return best


def _separate(placed: dict, fixed: dict, long_mm: float, short_mm: float, rounds: int = 20) -> None:
    """Move overlapping spaces apart in place (placed: track id -> (centres, axes))."""
    keys = [(tid, k) for tid, (cs, _) in placed.items() for k in range(len(cs))]
    a, b = long_mm / 2, short_mm / 2
    for _ in range(rounds):
        moved = False
        centers = np.array([placed[t][0][k] for t, k in keys])
        for i, j in zip(*np.nonzero(np.triu(np.hypot(*(centers[:, None] - centers[None]).transpose(2, 0, 1)) < 2 * a, 1))):
            (ti, ki), (tj, kj) = keys[i], keys[j]
            ci, ui = placed[ti][0][ki], placed[ti][1][ki]
            cj, uj = placed[tj][0][kj], placed[tj][1][kj]
            depth, away = _penetration(ci, ui, cj, uj, a, b)
            if depth <= 0.05:
                continue
            fi, fj = fixed[ti][ki], fixed[tj][kj]
            share_i = 0.5 if fi == fj else (0.0 if fi else 1.0)
            step = depth + 0.05
            placed[ti][0][ki] = ci - away * step * share_i
            placed[tj][0][kj] = cj + away * step * (1 - share_i)
            moved = True
        if not moved:
            return


def _median_lab(cand: SpaceCandidates, colour: str, protos) -> np.ndarray:
    sel = cand.colors == PRINTED_COLORS.index(colour)
    return np.median(cand.lab[sel], axis=0) if sel.sum() >= 3 else np.asarray(protos[colour], float)
