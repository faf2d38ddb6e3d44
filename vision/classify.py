"""Per-space evidence: what sits on each space, as log-likelihoods over SPACE_CLASSES.

Two independent sources, fused in `space_evidence`:

1. `SpaceClassifier`: the YOLO classifier trained on rendered boards (`models/train.py`), run with
   onnxruntime on all 309 patches in one batch. Its preprocessing (patch geometry, size) comes from
   `models/space_classifier.json`, written by the training run, so it cannot drift.
2. `ColourModel`: colour evidence that needs no training. Per space, the light-normalised median
   Lab colour of its inner part is compared with (a) what that space looks like EMPTY (its printed
   colour: from the user's calibration when given, else the template's measured colour, else the
   printed colour's class, each adapted to the photo) and (b) the five car colours. The photo adapts
   both: a few EM rounds re-estimate every mean from the spaces the current reading assigns to it,
   with a prior that keeps it near its start, so a warm or cold light shifts the models, not the
   answers. Car colours start from generic plastic colours (never from a photo).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from vision.reading import PLAYER_COLORS, SPACE_CLASSES

MODEL_NAME = "space_classifier"

# Generic colours (OpenCV 8-bit Lab) after light normalisation, paper = (190, 190, 190) BGR
# (L 199, a 128, b 128). Cars: saturated moulded plastic; printed spaces: the board's inks.
CAR_LAB = {
    "red": (106.0, 165.0, 158.0),
    "blue": (83.0, 130.0, 93.0),
    "green": (85.0, 114.0, 133.0),
    "yellow": (188.0, 121.0, 190.0),
    "black": (28.0, 128.0, 130.0),
}
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
        import onnxruntime as ort

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
        x = patches_bgr[..., ::-1].transpose(0, 3, 1, 2).astype(np.float32) / 255.0
        probs = self.session.run(None, {self.input_name: np.ascontiguousarray(x)})[0]
        return probs[:, self._order]

    def loglik(self, probs: np.ndarray, floor: float = 1e-4) -> np.ndarray:
        """(N, 6) log-likelihoods over SPACE_CLASSES from `predict`'s output; an occupancy model
        gives every car colour the same P(car) (it says whether, not which)."""
        p = np.log(np.clip(probs, floor, 1.0))
        if self.occupancy:
            return np.concatenate([p[:, :1], np.repeat(p[:, 1:2], len(SPACE_CLASSES) - 1, axis=1)], axis=1)
        return p


@lru_cache(maxsize=2)
def load_classifier(onnx_path: str | None = None) -> SpaceClassifier | None:
    """The packaged classifier (or one at `onnx_path`), loaded once; None when none is installed."""
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


def _gauss_ll(x: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    z = (x - mu) / sigma
    return -0.5 * (z * z).sum(axis=-1) - np.log(sigma).sum(axis=-1)


class ColourModel:
    """Colour evidence per space (see module doc)."""

    def __init__(self, cfg: ColourModelConfig = ColourModelConfig()):
        self.cfg = cfg

    def loglik(self, lab: np.ndarray, printed: list[str], track_ids: np.ndarray,
               reference: EmptyReference | None = None, track_weights=None) -> np.ndarray:
        """(N, 6) log-likelihood of each space's colour under each class, after adapting to the photo.

        `printed` is each space's printed colour name; `track_ids` groups spaces into tracks (the
        adaptation weighs each space by its whole track's current reading, since tracks are claimed
        whole).
        """
        cfg = self.cfg
        lab = np.asarray(lab, dtype=float)
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
        for _ in range(cfg.rounds + 1):
            empty = empty0 + shift_e[pidx]
            ll = np.empty((n, len(SPACE_CLASSES)))
            ll[:, 0] = _gauss_ll(lab, empty, sig_e)
            ll[:, 1:] = _gauss_ll(lab[:, None, :], car[None], sig_c[None, None, :])
            ll = np.maximum(ll, ll.max(axis=1, keepdims=True) + cfg.floor)
            # Track-level responsibilities: a track is one hypothesis for all its spaces.
            tsum = np.zeros((len(uniq), len(SPACE_CLASSES)))
            np.add.at(tsum, inv, ll)
            tsum /= 2.0
            tpost = np.exp(tsum - tsum.max(axis=1, keepdims=True))
            tpost /= tpost.sum(axis=1, keepdims=True)
            resp = tpost[inv]  # (n, 6)
            if _ == cfg.rounds:
                break
            # M-step with a prior: pseudo-count `prior_weight` at the start value.
            w = resp[:, 0]
            for k in range(len(pnames)):
                m = pidx == k
                if m.any():
                    d = (lab[m] - empty0[m]) * w[m, None]
                    shift_e[k] = d.sum(axis=0) / (w[m].sum() + cfg.prior_weight)
            for c in range(len(PLAYER_COLORS)):
                wc = resp[:, 1 + c]
                car[c] = (car0[c] * cfg.prior_weight + (lab * wc[:, None]).sum(axis=0)) / (cfg.prior_weight + wc.sum())
        return ll


CHANGE_MID = 7.0  # median Lab distance from the empty reference where car and empty are equally likely
CHANGE_SCALE = 2.5
CHANGE_CLIP = 4.0


def change_loglik(change: np.ndarray) -> np.ndarray:
    """(N, 6) log-likelihoods from `vision.spaces.change_features`: a space that differs from its
    own empty look holds a car (of a colour this evidence cannot tell), one that does not is empty."""
    llr = np.clip((np.asarray(change)[:, 0] - CHANGE_MID) / CHANGE_SCALE, -CHANGE_CLIP, CHANGE_CLIP)
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
