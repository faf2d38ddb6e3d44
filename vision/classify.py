"""Per-space evidence: what sits on each space, as log-likelihoods over SPACE_CLASSES.

Sources, fused by `fuse` in `vision.read.Reader.evidence` (with, given a calibration, the change
against the empty view, `change_loglik`):

1. `SpaceClassifier`: the YOLO classifier trained on rendered boards (`models/train.py`), run with
   onnxruntime on all 309 patches in one batch. Its preprocessing (patch geometry, size) comes from
   `models/space_classifier.json`, written by the training run, so it cannot drift.
2. `ColourModel`: colour evidence that needs no training. Per space, the light-normalised median
   Lab colour of its inner part is compared with (a) what that space looks like EMPTY (its printed
   colour: from the user's calibration when given, else the printed colour's class, each adapted
   to the photo) and (b) the five car colours, measured where a car on the space is seen. The photo adapts
   both: a few EM rounds re-estimate every mean from the spaces the current reading assigns to it,
   with a prior that keeps it near its start, so a warm or cold light shifts the models, not the
   answers. Car colours start from generic plastic colours (never from a photo).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import onnxruntime as ort

from scoring.errors import TtrError
from vision.reading import PLAYER_COLORS, SPACE_CLASSES

MODEL_NAME = "space_classifier"
MODEL_ENV = "TTR_SPACE_MODEL"  # another model for load_classifier (see there)

# Generic colours (OpenCV 8-bit Lab) after light normalisation, paper = (190, 190, 190) BGR
# (L 199, a 128, b 128). Cars: saturated moulded plastic; printed spaces: the board's inks.
CAR_LAB = {
    "red": (106.0, 165.0, 158.0),
    "blue": (83.0, 130.0, 93.0),
    "green": (85.0, 114.0, 133.0),
    "yellow": (188.0, 121.0, 190.0),
    "black": (28.0, 128.0, 130.0),
}
WHITE_LAB = np.array([255.0, 128.0, 128.0])  # the light itself, as glare on glossy print
PRINTED_LAB = {
    "red": (95.0, 165.0, 163.0),
    "blue": (100.0, 133.0, 84.0),
    "green": (133.0, 108.0, 176.0),
    "yellow": (202.0, 122.0, 193.0),
    "black": (50.0, 128.0, 127.0),
    "white": (192.0, 128.0, 129.0),
    "orange": (130.0, 154.0, 178.0),
    "pink": (124.0, 158.0, 126.0),
    "gray": (160.0, 129.0, 127.0),
}


# ----------------------------------------------------------------------------- the ONNX classifier

@dataclass(frozen=True)
class ClassifierConfig:
    """The training config saved beside the weights (only what reading needs is typed here)."""

    classes: tuple[str, ...]
    imgsz: int
    side_mm: float
    raw: dict = field(default_factory=dict, compare=False)

    @staticmethod
    def load(path: str | Path) -> "ClassifierConfig":
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return ClassifierConfig(classes=tuple(d["classes"]), imgsz=int(d["imgsz"]),
                                side_mm=float(d["crop"]["side_mm"]), raw=d)


def default_model_paths() -> tuple[Path, Path]:
    base = Path(str(resources.files("models")))
    return base / f"{MODEL_NAME}.onnx", base / f"{MODEL_NAME}.json"


class SpaceClassifier:
    """onnxruntime session over the exported classifier; one batch per board."""

    def __init__(self, onnx_path: str | Path, config: ClassifierConfig):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        so.log_severity_level = 3
        self.session = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name
        self.config = config
        self.occupancy = set(config.classes) == {"car", "empty"}
        # The model's class order -> SPACE_CLASSES order (an occupancy model: empty, then car).
        names = ("empty", "car") if self.occupancy else SPACE_CLASSES
        self._order = np.array([config.classes.index(c) for c in names])

    def predict(self, patches_bgr: np.ndarray) -> np.ndarray:
        """Class probabilities for (N, S, S, 3) BGR uint8 patches: (N, 2) P(empty), P(car) for an
        occupancy model, else (N, 6) in SPACE_CLASSES order."""
        s = self.config.imgsz
        if patches_bgr.shape[1:3] != (s, s):
            raise ValueError(f"patches are {patches_bgr.shape[1:3]}, the model wants {s}x{s}")
        probs = self.session.run(None, {self.input_name: model_input(patches_bgr)})[0]
        return probs[:, self._order]

    def loglik(self, probs: np.ndarray, floor: float = 1e-4, colour_trust: float = 0.3) -> np.ndarray:
        """(N, 6) log-likelihoods over SPACE_CLASSES from `predict`'s output.

        The net's empty-or-car answer is used as it is; its colour answer is tempered by
        `colour_trust` (0: the net only says whether a car is there, 1: it names the colour as
        surely as it says), since it learned plastic colours from renders."""
        p = np.clip(probs, floor, 1.0)
        if self.occupancy:
            lp = np.log(p)
            return np.concatenate([lp[:, :1], np.repeat(lp[:, 1:2], len(SPACE_CLASSES) - 1, axis=1)], axis=1)
        p_empty = p[:, 0]
        p_car = np.clip(1.0 - probs[:, 0], floor, 1.0)
        share = p[:, 1:] / p[:, 1:].sum(axis=1, keepdims=True)  # which colour, given a car
        colour = colour_trust * np.log(share * (len(SPACE_CLASSES) - 1))
        return np.concatenate([np.log(p_empty)[:, None], np.log(p_car)[:, None] + colour], axis=1)


def model_input(patches_bgr: np.ndarray) -> np.ndarray:
    """(N, S, S, 3) BGR uint8 patches -> the nets' input: (N, 3, S, S) RGB float32 in 0..1, contiguous
    (what Ultralytics trains on; `models.distill` feeds its student the same)."""
    return np.ascontiguousarray(patches_bgr[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / 255.0


@lru_cache(maxsize=2)
def load_classifier(onnx_path: str | None = None) -> SpaceClassifier | None:
    """The packaged classifier (or one at `onnx_path`, else at the environment's `TTR_SPACE_MODEL`:
    an ONNX file with its JSON config beside it, e.g. a model `ttr train` wrote elsewhere, read by
    `ttr detect` without replacing the packaged one), loaded once; None when none is installed."""
    if onnx_path is None and os.environ.get(MODEL_ENV):
        onnx_path = os.environ[MODEL_ENV]
        if not Path(onnx_path).is_file() or not Path(onnx_path).with_suffix(".json").is_file():
            raise TtrError(f"{MODEL_ENV}={onnx_path}: no such ONNX model with its .json config beside it")
    if onnx_path is None:
        onnx, cfg = default_model_paths()
    else:
        onnx = Path(onnx_path)
        cfg = onnx.with_suffix(".json")
    if not onnx.exists() or not cfg.exists():
        return None
    return SpaceClassifier(onnx, ClassifierConfig.load(cfg))


# ----------------------------------------------------------------------------- colour evidence

@dataclass(frozen=True)
class EmptyReference:
    """What each space looks like empty, in light-normalised Lab (from a calibration or the template)."""

    lab: np.ndarray  # (N, 3)
    spread: np.ndarray | None = None  # (N, 3) inter-quartile range, if measured
    source: str = ""


@dataclass(frozen=True)
class ColourModelConfig:
    sigma_empty: tuple[float, float, float] = (14.0, 6.0, 7.0)  # per-space reference, L a b
    sigma_empty_class: tuple[float, float, float] = (20.0, 8.0, 9.0)  # only the printed colour known
    sigma_car: tuple[float, float, float] = (22.0, 10.0, 12.0)
    prior_weight: float = 6.0  # pseudo-count keeping adapted means near their start
    rounds: int = 3
    floor: float = -12.0  # lowest log-likelihood of one space (a car half off its space, a glare)
    min_cover: float = 0.4  # a car may cover this share of its space and still count
    cover_penalty: float = 2.0  # log-likelihood cost of a car covering none of its space (linear)
    # Glossy print catches the light: an empty space may look like its print mixed with white, up
    # to this share, at this log-likelihood cost per unit share (cars too, see car_sheen).
    max_glare: float = 0.35
    glare_penalty: float = 1.0
    # Moulded cars have a sheen too: the tops of black cars under a broad window light show grey
    # (L ~75 on a real photo where the black print beside them measured 45). With it, a car too may
    # look mixed with white on any space, as print may; without it, only under glare, and glossy
    # black cars on black print read as glared print (El Paso-Los Angeles on a real photo).
    car_sheen: bool = True

    def scaled(self, scale: float) -> "ColourModelConfig":
        """The same model with every sigma (empty, empty by class, car) times `scale`."""
        return replace(self, **{k: tuple(scale * v for v in getattr(self, k))
                                for k in ("sigma_empty", "sigma_empty_class", "sigma_car")})


def _gauss_ll(x: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    z = (x - mu) / sigma
    return -0.5 * (z * z).sum(axis=-1) - np.log(sigma).sum(axis=-1)


class ColourModel:
    """Colour evidence per space (see module doc)."""

    def __init__(self, cfg: ColourModelConfig = ColourModelConfig()):
        self.cfg = cfg

    def loglik(self, lab: np.ndarray, printed: list[str], track_ids: np.ndarray,
               reference: EmptyReference | None = None, lab_car: np.ndarray | None = None,
               car_isolated: np.ndarray | None = None, glare: np.ndarray | None = None,
               other_ll: np.ndarray | None = None) -> np.ndarray:
        """(N, 6) log-likelihood of each space's colour under each class, after adapting to the photo.

        `lab` is each space's colour where it is printed, `lab_car` (default: the same) where a car
        on it is seen (a car's body stands above the board, so in a photo from the side it leans
        off its space). `printed` is each space's printed colour name; `track_ids` groups spaces
        into tracks (the adaptation weighs each space by its whole track's current reading, since
        tracks are claimed whole). `car_isolated` marks spaces whose `lab_car` is already the colour
        of what covers part of the space alone (the changed pixels against an empty view): there a
        car must show its own colour, not a mix with the print (a shadow is not part of a car).
        `glare` marks spaces under glare (spaces.paper_left_bright): there a car too may be mixed
        with the light's white (everywhere, with `car_sheen`), as print may everywhere, and the
        space says nothing of the photo's print and car colours (they are not adapted on it).
        `other_ll` (N, 6), the other evidence on each space (the net's first look, a calibration's
        change), joins the colours in saying which spaces show print and which cars when the
        photo's colours are learned (it is not part of the result): the colours alone, on a track
        of cars on print of their own colour, learn the print from the cars.
        """
        cfg = self.cfg
        lab = np.asarray(lab, dtype=float)
        lab_c = lab if lab_car is None else np.asarray(lab_car, dtype=float)
        # (N, K, 3): a car's colour measured at K places across its space (it may lie anywhere on it).
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
            empty0 = np.array([PRINTED_LAB[p] for p in printed], dtype=float)
            sig_e = np.broadcast_to(np.array(cfg.sigma_empty_class), (n, 3))
        car0 = np.array([CAR_LAB[c] for c in PLAYER_COLORS], dtype=float)
        sig_c = np.array(cfg.sigma_car)
        shift_e = np.zeros((len(PRINTED_LAB), 3))  # per printed colour: photo's offset from the start
        pnames = list(PRINTED_LAB)
        pidx = np.array([pnames.index(p) for p in printed])
        car = car0.copy()
        tids = np.asarray(track_ids)
        uniq, inv = np.unique(tids, return_inverse=True)
        glared = np.zeros(n, bool) if glare is None else np.asarray(glare, bool)
        for _ in range(cfg.rounds + 1):
            empty = empty0 + shift_e[pidx]
            ll = np.empty((n, len(SPACE_CLASSES)))
            # Empty: the print, or the print mixed with the light's white (glare), nearest point.
            g = WHITE_LAB - empty
            a = np.clip(((lab - empty) * g).sum(-1) / np.maximum((g * g).sum(-1), 1e-6), 0.0, cfg.max_glare)
            ll[:, 0] = _gauss_ll(lab, empty + a[:, None] * g, sig_e) - cfg.glare_penalty * a
            # A car covering a share t of its space shows (as a mean colour) between the print and
            # the car: the nearest point of that segment, t >= min_cover, explains the space.
            # Where the car is measured at several places across its space, the best explains it.
            v = car[None, None, :, :] - empty[:, None, None, :]  # (n, 1, 5, 3)
            t = ((lab_k[:, :, None, :] - empty[:, None, None, :]) * v).sum(-1) / np.maximum((v * v).sum(-1), 1e-6)
            t = np.clip(t, t_min[:, None, None], 1.0)  # (n, K, 5)
            point = empty[:, None, None, :] + t[..., None] * v
            ag = np.zeros(t.shape)  # sheen or glare: the car (and the print it leaves) mixed with white
            sheen = glared | cfg.car_sheen
            if sheen.any():
                gp = WHITE_LAB - point[sheen]
                ag[sheen] = np.clip(((lab_k[sheen][:, :, None, :] - point[sheen]) * gp).sum(-1)
                                    / np.maximum((gp * gp).sum(-1), 1e-6), 0.0, cfg.max_glare)
                point = point + ag[..., None] * (WHITE_LAB - point)
            ll_k = (_gauss_ll(lab_k[:, :, None, :], point, sig_c) - cfg.cover_penalty * (1 - t)
                    - cfg.glare_penalty * ag)
            best = ll_k.argmax(axis=1)  # (n, 5)
            ll[:, 1:] = np.take_along_axis(ll_k, best[:, None, :], axis=1)[:, 0]
            t = np.take_along_axis(t, best[:, None, :], axis=1)[:, 0]
            lab_best = np.take_along_axis(lab_k, best[..., None], axis=1)  # (n, 5, 3)
            ll = np.maximum(ll, ll.max(axis=1, keepdims=True) + cfg.floor)
            # Track-level responsibilities: a track is one hypothesis for all its spaces.
            tsum = np.zeros((len(uniq), len(SPACE_CLASSES)))
            np.add.at(tsum, inv, ll if other_ll is None else ll + other_ll)
            tsum /= 2.0
            tpost = np.exp(tsum - tsum.max(axis=1, keepdims=True))
            tpost /= tpost.sum(axis=1, keepdims=True)
            resp = tpost[inv]  # (n, 6)
            if _ == cfg.rounds:
                break
            # M-step with a prior: pseudo-count `prior_weight` at the start value.
            w = resp[:, 0] * ~glared
            for k in range(len(pnames)):
                m = pidx == k
                if m.any():
                    d = (lab[m] - empty0[m]) * w[m, None]
                    shift_e[k] = d.sum(axis=0) / (w[m].sum() + cfg.prior_weight)
            for c in range(len(PLAYER_COLORS)):
                wc = resp[:, 1 + c] * (t[:, c] > 0.8) * ~glared  # well-covered spaces show the car's colour
                car[c] = (car0[c] * cfg.prior_weight + (lab_best[:, c] * wc[:, None]).sum(axis=0)) / (cfg.prior_weight + wc.sum())
        return ll


CHANGE_MID = 7.0  # median Lab distance from the empty reference where car and empty are equally likely
CHANGE_SCALE = 2.5
CHANGE_CLIP = 4.0


def change_loglik(d50: np.ndarray) -> np.ndarray:
    """(N, 6) log-likelihoods from `vision.spaces.change_features`' median distance: a space that
    differs from its own empty look holds a car (of a colour this evidence cannot tell), one that
    does not is empty."""
    llr = np.clip((np.asarray(d50) - CHANGE_MID) / CHANGE_SCALE, -CHANGE_CLIP, CHANGE_CLIP)
    out = np.zeros((len(llr), len(SPACE_CLASSES)))
    out[:, 1:] = llr[:, None] / 2
    out[:, 0] = -llr / 2
    return out


def fuse(loglik_parts: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Weighted sum of (N, 6) log-likelihood arrays."""
    total = None
    for ll, w in loglik_parts:
        total = ll * w if total is None else total + ll * w
    return total
