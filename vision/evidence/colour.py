"""The colour evidence: what each space's colour says it holds, needing no training.

Per space, the light-normalised Lab colour of its inner part is compared with (a) what that space
looks like empty (its printed colour: from the user's calibration when given, else the printed
colour's class) and (b) the five car colours, measured where a car on the space is seen. The photo
adapts both: a few EM rounds re-estimate every mean from the spaces the current reading assigns to
it, with a prior that keeps it near its start, so a warm or cold light shifts the models, not the
answers. Car colours start from generic plastic colours (never from a photo).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.reading import PLAYER_COLORS, SPACE_CLASSES
from vision.settings import ColourSettings


@dataclass(frozen=True)
class EmptyReference:
    """What each space looks like empty, in light-normalised Lab (from a calibration)."""

    lab: np.ndarray  # (N, 3)
    spread: np.ndarray | None = None  # (N, 3) inter-quartile range, if measured


def _gauss_ll(x: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    z = (x - mu) / sigma
    return -0.5 * (z * z).sum(axis=-1) - np.log(sigma).sum(axis=-1)


class ColourModel:
    """Colour evidence per space (see module doc)."""

    def __init__(self, cfg: ColourSettings = ColourSettings()):
        self.cfg = cfg
        self.car_lab = dict(cfg.car_lab)
        self.printed_lab = dict(cfg.printed_lab)

    def loglik(self, lab: np.ndarray, printed: list[str], track_ids: np.ndarray,
               reference: EmptyReference | None = None, lab_car: np.ndarray | None = None,
               car_isolated: np.ndarray | None = None, glare: np.ndarray | None = None,
               other_ll: np.ndarray | None = None) -> np.ndarray:
        """(N, 6) log-likelihood of each space's colour under each class, after adapting to the photo.

        `lab` is each space's colour where it is printed, `lab_car` (default: the same) where a car
        on it is seen, at one or K places across it ((N, 3) or (N, K, 3): the best place explains
        the space). `printed` is each space's printed colour name; `track_ids` groups spaces into
        tracks (the adaptation weighs each space by its whole track's current reading, since
        tracks are claimed whole). `car_isolated` marks spaces whose `lab_car` is already the colour
        of what covers part of the space alone (the changed pixels against an empty view): there a
        car must show its own colour, not a mix with the print (a shadow is not part of a car).
        `glare` marks spaces under glare (`vision.light`): there a car too may be mixed with the
        light's white, as print may everywhere, and the space says
        nothing of the photo's print and car colours (they are not adapted on it). `other_ll`
        (N, 6), the other evidence on each space (the net's first look, a calibration's change),
        joins the colours in saying which spaces show print and which cars when the photo's colours
        are learned (it is not part of the result): the colours alone, on a track of cars on print
        of their own colour, learn the print from the cars. With `first_from_others` it alone says
        so in the first round (the colours there are still the generic ones).
        """
        cfg = self.cfg
        white = np.array(cfg.white_lab)
        lab = np.asarray(lab, dtype=float)
        lab_c = lab if lab_car is None else np.asarray(lab_car, dtype=float)
        lab_k = lab_c[:, None, :] if lab_c.ndim == 2 else lab_c
        t_min = np.full(len(lab), cfg.min_cover)
        if car_isolated is not None:
            t_min[np.asarray(car_isolated, bool)] = 1.0
        n = len(lab)
        printed = np.asarray(printed)
        if reference is not None:
            empty0 = np.asarray(reference.lab, dtype=float)
            sig_e = np.broadcast_to(np.array(cfg.sigma_empty), (n, 3))
        else:
            empty0 = np.array([self.printed_lab[p] for p in printed], dtype=float)
            sig_e = np.broadcast_to(np.array(cfg.sigma_empty_class), (n, 3))
        car0 = np.array([self.car_lab[c] for c in PLAYER_COLORS], dtype=float)
        sig_c = np.array(cfg.sigma_car)
        shift_e = np.zeros((len(self.printed_lab), 3))  # per printed colour: photo's offset from the start
        pnames = list(self.printed_lab)
        pidx = np.array([pnames.index(p) for p in printed])
        car = car0.copy()
        tids = np.asarray(track_ids)
        uniq, inv = np.unique(tids, return_inverse=True)
        glared = np.zeros(n, bool) if glare is None else np.asarray(glare, bool)
        for round_ in range(cfg.rounds + 1):
            empty = empty0 + shift_e[pidx]
            ll = np.empty((n, len(SPACE_CLASSES)))
            # Empty: the print, or the print mixed with the light's white (glare), nearest point.
            g = white - empty
            a = np.clip(((lab - empty) * g).sum(-1) / np.maximum((g * g).sum(-1), 1e-6), 0.0, cfg.max_glare)
            ll[:, 0] = _gauss_ll(lab, empty + a[:, None] * g, sig_e) - cfg.glare_penalty * a
            # A car covering a share t of its space shows (as a mean colour) between the print and
            # the car: the nearest point of that segment, t >= min_cover, explains the space.
            # Where the car is measured at several places across its space, the best explains it.
            v = car[None, None, :, :] - empty[:, None, None, :]  # (n, 1, 5, 3)
            t = ((lab_k[:, :, None, :] - empty[:, None, None, :]) * v).sum(-1) / np.maximum((v * v).sum(-1), 1e-6)
            t = np.clip(t, t_min[:, None, None], 1.0)  # (n, K, 5)
            point = empty[:, None, None, :] + t[..., None] * v
            ag = np.zeros(t.shape)  # glare: the car (and the print it leaves) mixed with white
            if glared.any():
                gp = white - point[glared]
                ag[glared] = np.clip(((lab_k[glared][:, :, None, :] - point[glared]) * gp).sum(-1)
                                     / np.maximum((gp * gp).sum(-1), 1e-6), 0.0, cfg.max_glare)
                point = point + ag[..., None] * (white - point)
            ll_k = (_gauss_ll(lab_k[:, :, None, :], point, sig_c) - cfg.cover_penalty * (1 - t)
                    - cfg.glare_penalty * ag)
            best = ll_k.argmax(axis=1)  # (n, 5)
            ll[:, 1:] = np.take_along_axis(ll_k, best[:, None, :], axis=1)[:, 0]
            t = np.take_along_axis(t, best[:, None, :], axis=1)[:, 0]
            lab_best = np.take_along_axis(lab_k, best[..., None], axis=1)  # (n, 5, 3)
            ll = np.maximum(ll, ll.max(axis=1, keepdims=True) + cfg.floor)
            if round_ == cfg.rounds:
                break  # the colours as learnt: nothing more to learn from them
            # Track-level responsibilities: a track is one hypothesis for all its spaces.
            tsum = np.zeros((len(uniq), len(SPACE_CLASSES)))
            if other_ll is None:
                said = ll
            elif round_ == 0 and cfg.first_from_others:
                said = other_ll  # the first round: the colours are not yet the photo's own
            else:
                said = ll + other_ll
            np.add.at(tsum, inv, said)
            tsum /= cfg.track_temperature
            tpost = np.exp(tsum - tsum.max(axis=1, keepdims=True))
            tpost /= tpost.sum(axis=1, keepdims=True)
            resp = tpost[inv]  # (n, 6)
            # M-step with a prior: pseudo-count `prior_weight` at the start value.
            w = resp[:, 0] * ~glared
            for k in range(len(pnames)):
                m = pidx == k
                if m.any():
                    d = (lab[m] - empty0[m]) * w[m, None]
                    shift_e[k] = d.sum(axis=0) / (w[m].sum() + cfg.prior_weight)
            for c in range(len(PLAYER_COLORS)):
                wc = resp[:, 1 + c] * (t[:, c] > cfg.well_covered) * ~glared  # well-covered spaces show the car's colour
                car[c] = (car0[c] * cfg.prior_weight + (lab_best[:, c] * wc[:, None]).sum(axis=0)) / (cfg.prior_weight + wc.sum())
        return ll
