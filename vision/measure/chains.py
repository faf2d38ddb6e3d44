"""Assign the space candidates to tracks: for every track the chain of candidates from its city a
to its city b with the right number of spaces of the right colour (a beam search per track)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from scoring.board import PRINTED_COLORS, Board
from vision.measure.spaces import SpaceCandidates


# ----------------------------------------------------------------------------------------------
@dataclass
class _Chain:
    cost: float
    picks: list  # candidate index, or -1 for a space placed between found ones
    centers: list
    axes: list  # unit vectors pointing from city a towards city b
    steps: list = field(default_factory=list)  # centre-to-centre distances between found spaces


def _hermite(p0, t0, p1, t1, f: float) -> tuple[np.ndarray, np.ndarray]:
    """Point and unit tangent at fraction f of the smooth curve from p0 (tangent t0) to p1 (t1)."""
    d = float(np.hypot(*(p1 - p0)))
    h00, h10, h01, h11 = 2 * f ** 3 - 3 * f ** 2 + 1, f ** 3 - 2 * f ** 2 + f, -2 * f ** 3 + 3 * f ** 2, f ** 3 - f ** 2
    p = h00 * p0 + h10 * d * t0 + h01 * p1 + h11 * d * t1
    g00, g10, g01, g11 = 6 * f ** 2 - 6 * f, 3 * f ** 2 - 4 * f + 1, -6 * f ** 2 + 6 * f, 3 * f ** 2 - 2 * f
    tan = g00 * p0 + g10 * d * t0 + g01 * p1 + g11 * d * t1
    return p, tan / max(float(np.hypot(*tan)), 1e-9)


def _off_axis(c, u, city) -> float:
    """How far a city lies to the side of the line through a space's long axis (mm)."""
    d = city - c
    return abs(d[0] * u[1] - d[1] * u[0])


def _track_chains(t, A, B, cand: SpaceCandidates, space_long: float, beam: int = 40) -> list[_Chain]:
    """Chains of `t.length` spaces from city A to city B, cheapest first (a beam search).

    A chain steps from space to space: the next one lies about one space length (plus the track's
    own gap) further along, in line with both spaces' long axes. Spaces no detector found are
    placed on the smooth curve between found ones (a step over up to two) or beyond the last
    found one; each placed space costs more than a found one, so found spaces win."""
    n = t.length
    AB = B - A
    dist_ab = float(np.hypot(*AB))
    rel = cand.centers - A
    along = rel @ AB / dist_ab ** 2
    closest = A + np.clip(along, 0, 1)[:, None] * AB
    near = np.hypot(*(cand.centers - closest).T) <= 0.22 * dist_ab + 8
    idx = [int(i) for i in np.nonzero(near)[0]]
    step_lo, step_hi, step_guess = 0.92 * space_long, 1.45 * space_long, 1.1 * space_long
    end_lo, end_hi, end_best = 0.5 * space_long + 1.0, 0.5 * space_long + 34.0, 0.5 * space_long + 8.0
    PLACED = 2.0

    def colour_cost(i):
        got = PRINTED_COLORS[cand.colors[i]]
        if got == t.color:
            return 0.0
        if {got, t.color} <= {"gray", "white"}:
            return 0.8
        return 3.0

    def oriented(u, d):
        return u if u @ d >= 0 else -u

    def step_of(ch):
        return float(np.mean(ch.steps)) if ch.steps else step_guess

    levels: list[list[_Chain]] = [[] for _ in range(n + 1)]
    # First found space j after r placed ones, seen from city A.
    for j in idx:
        cj = cand.centers[j]
        D = float(np.hypot(*(cj - A)))
        dirA = (cj - A) / max(D, 1e-9)
        uj = oriented(cand.axes[j], B - A if D < 1e-9 else dirA)
        if uj @ (B - cj) < -0.3 * float(np.hypot(*(B - cj))):
            continue
        aim = abs(uj @ dirA)
        for r in range(0, min(3, n)):
            e = D - r * step_guess
            if not end_lo <= e <= end_hi or aim < (0.6 if r == 0 else 0.85) or _off_axis(cj, uj, A) > 8 + 0.3 * D:
                continue
            cs = [cj - uj * step_guess * (r - m) for m in range(r)] + [cj]
            cost = abs(e - end_best) / 10.0 + colour_cost(j) + (1 - aim) * 4 + PLACED * r
            levels[r + 1].append(_Chain(cost, [-1] * r + [j], cs, [uj] * (r + 1)))
    done: list[_Chain] = []
    for k in range(1, n + 1):
        levels[k].sort(key=lambda ch: ch.cost)
        for ch in levels[k][:beam]:
            c, u = ch.centers[-1], ch.axes[-1]
            st = step_of(ch)
            # Finish: the rest placed straight on, then city B.
            r = n - k
            if r <= 2:
                DB = float(np.hypot(*(B - c)))
                e = DB - r * st
                if end_lo <= e <= end_hi and _off_axis(c, u, B) <= 8 + 0.3 * DB:
                    cs = [c + u * st * (m + 1) for m in range(r)]
                    done.append(_Chain(ch.cost + abs(e - end_best) / 10.0 + PLACED * r, ch.picks + [-1] * r,
                                       ch.centers + cs, ch.axes + [u] * r, ch.steps))
            if k == n:
                continue
            options = []
            for j in idx:
                if j in ch.picks:
                    continue
                d = cand.centers[j] - c
                D = float(np.hypot(*d))
                if D < 1e-6 or d @ u <= 0:
                    continue
                uj = oriented(cand.axes[j], u)
                turn = float(u @ uj)
                if turn < 0.7:  # bends of up to about 45 degrees (Omaha-Chicago, Seattle-Calgary)
                    continue
                mid = (u + uj) / np.hypot(*(u + uj))
                lateral = abs(d[0] * mid[1] - d[1] * mid[0])
                for m in range(1, min(3, n - k) + 1):
                    sm = D / m
                    if not step_lo <= sm <= step_hi or lateral > 3.0 + 1.5 * (m - 1):
                        continue
                    var = abs(sm - st) / 2.0 if ch.steps else 0.0
                    if ch.steps and abs(sm - st) > 0.12 * space_long:
                        continue
                    cost = colour_cost(j) + lateral / 1.5 + (1 - turn) * 5 + var + PLACED * (m - 1)
                    options.append((cost, j, m, uj, D))
            options.sort(key=lambda o: o[0])
            for cost, j, m, uj, D in options[:4]:
                cj = cand.centers[j]
                placed = [_hermite(c, u, cj, uj, f / m) for f in range(1, m)]
                levels[k + m].append(_Chain(
                    ch.cost + cost, ch.picks + [-1] * (m - 1) + [j],
                    ch.centers + [p for p, _ in placed] + [cj], ch.axes + [tn for _, tn in placed] + [uj],
                    ch.steps + [D / m]))
    if not done:  # nothing fits: a straight chain, all placed, as a last resort
        u = AB / dist_ab
        span = dist_ab - 2 * end_best
        st = span / max(n - 1, 1)
        cs = [A + u * (end_best + st * k) for k in range(n)] if n > 1 else [A + AB / 2]
        done.append(_Chain(100.0 + PLACED * n, [-1] * n, cs, [u] * n))
    done.sort(key=lambda ch: ch.cost)
    return done[:beam]


def assign_tracks(cand: SpaceCandidates, cities: dict[str, np.ndarray], board: Board, space_long: float):
    """The chain of spaces for every track; returns {track id: _Chain}."""
    options = {t.id: _track_chains(t, cities[t.a], cities[t.b], cand, space_long) for t in board.tracks}
    chosen: dict[int, _Chain] = {}
    used: set[int] = set()

    def free(ch):
        return not any(p in used for p in ch.picks if p >= 0)

    def disjoint(c1, c2):
        return not (set(p for p in c1.picks if p >= 0) & set(p for p in c2.picks if p >= 0))

    # Most confident tracks first: the cheapest best chain, and the clearest over its runner-up.
    groups = []
    seen = set()
    for t in board.tracks:
        if t.id in seen:
            continue
        other = board.double_of(t)
        if other is not None and other.color == t.color:
            groups.append((t.id, other.id))
            seen |= {t.id, other.id}
        else:
            groups.append((t.id,))
            seen.add(t.id)

    def group_cost(g):
        return sum(options[i][0].cost for i in g) / len(g)

    for g in sorted(groups, key=group_cost):
        if len(g) == 1:
            pick = next((ch for ch in options[g[0]] if free(ch)), options[g[0]][-1])
            chosen[g[0]] = pick
        else:
            opts = [ch for ch in options[g[0]] if free(ch)]
            best = None
            for c1, c2 in itertools.combinations(opts[:25], 2):
                if disjoint(c1, c2) and _lanes_apart(c1, c2):
                    if best is None or c1.cost + c2.cost < best[0]:
                        best = (c1.cost + c2.cost, c1, c2)
            if best is None:
                c1 = opts[0] if opts else options[g[0]][0]
                best = (0, c1, _offset_lane(c1))
            lanes = sorted(best[1:], key=lambda ch: _lane_key(ch, board.tracks[g[0]], cities))
            chosen[g[0]], chosen[g[1]] = lanes
        for i in g:
            used |= {p for p in chosen[i].picks if p >= 0}
    return chosen


def _lanes_apart(c1: _Chain, c2: _Chain) -> bool:
    """Two lanes of a double run side by side: matching spaces 5..12 mm apart."""
    d = [float(np.hypot(*(a - b))) for a, b in zip(c1.centers, c2.centers)]
    return all(5.0 <= x <= 12.0 for x in d)


def _offset_lane(c1: _Chain) -> _Chain:
    cs = []
    for c, u in zip(c1.centers, c1.axes):
        cs.append(c + np.array([-u[1], u[0]]) * 8.5)
    return _Chain(c1.cost + 50, [-1] * len(cs), cs, list(c1.axes), list(c1.steps))


def _lane_key(chain: _Chain, track, cities) -> float:
    """Which lane of a one-colour double gets the lower track id: the upper lane, or for a track
    running more up-down than across, the left lane."""
    AB = cities[track.b] - cities[track.a]
    mean = np.mean(chain.centers, axis=0)
    return mean[0] if abs(AB[1]) > abs(AB[0]) else mean[1]
