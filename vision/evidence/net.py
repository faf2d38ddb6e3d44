"""The space classifier's evidence: a small net looks at each space's patch and answers
P(empty) and P(each car colour), turned into log-likelihoods over SPACE_CLASSES.

The net (`models/`, trained on rendered boards by `models/train.py`) runs with onnxruntime on all
the patches of a board in one batch. Its preprocessing (patch geometry, size) comes from
`models/space_classifier.json`, written by the training run beside the weights, so reading and
training cannot drift.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

# Before the import: onnxruntime's 1DS telemetry writes a device id and event store under ~/.cache at import.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
import onnxruntime as ort  # noqa: E402

from scoring.errors import TtrError
from vision.reading import SPACE_CLASSES
from vision.settings import NetSettings

MODEL_NAME = "space_classifier"
MODEL_ENV = "TTR_SPACE_MODEL"  # another model for load_classifier (see there)
OCCUPANCY_NAME = "space_occupancy"  # the car-or-print check (models/occupancy.py)
OCCUPANCY_ENV = "TTR_OCCUPANCY_MODEL"  # another one for load_occupancy; "none": read without it
CAR_COLOUR_NAME = "space_car_colour"  # the car-colour net (models/car_colour.py)
CAR_COLOUR_ENV = "TTR_CAR_COLOUR_MODEL"  # another one for load_car_colour; "none": read without it
ERRORS_ONLY = 3  # onnxruntime's log severity: its warnings are about its own graph, not the photo


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


def default_model_paths(name: str = MODEL_NAME) -> tuple[Path, Path]:
    base = Path(str(resources.files("models")))
    return base / f"{name}.onnx", base / f"{name}.json"


class SpaceClassifier:
    """onnxruntime session over the exported classifier; one batch per board."""

    def __init__(self, onnx_path: str | Path, config: ClassifierConfig, threads: int = NetSettings().threads):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.log_severity_level = ERRORS_ONLY
        # A reading runs two nets in turn between numpy work; an idle worker left spinning after
        # its run takes a core from whatever runs next (measured: ~0.035 s a photo on two cores).
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
        self.path = Path(onnx_path)
        self.input_name = self.session.get_inputs()[0].name
        self.config = config
        self.occupancy = set(config.classes) == {"car", "empty"}
        self.car_colour = set(config.classes) == set(SPACE_CLASSES[1:])
        # The model's class order -> SPACE_CLASSES order (an occupancy model: empty, then car; a
        # car-colour model: the player colours).
        names = ("empty", "car") if self.occupancy else SPACE_CLASSES[1:] if self.car_colour else SPACE_CLASSES
        self._order = np.array([config.classes.index(c) for c in names])

    def predict(self, patches_bgr: np.ndarray) -> np.ndarray:
        """Class probabilities for (N, S, S, 3) BGR uint8 patches: (N, 2) P(empty), P(car) for an
        occupancy model, (N, 5) the player colours for a car-colour model, else (N, 6) in
        SPACE_CLASSES order."""
        s = self.config.imgsz
        if patches_bgr.shape[1:3] != (s, s):
            raise ValueError(f"patches are {patches_bgr.shape[1:3]}, the model wants {s}x{s}")
        probs = self.session.run(None, {self.input_name: model_input(patches_bgr)})[0]
        return probs[:, self._order]

    def loglik(self, probs: np.ndarray, cfg: NetSettings = NetSettings()) -> np.ndarray:
        """(N, 6) log-likelihoods over SPACE_CLASSES from `predict`'s output.

        The net's empty-or-car answer is used as it is (held to `cfg.floor`); its colour answer is
        tempered by `cfg.colour_trust`."""
        floor = cfg.floor
        p = np.clip(probs, floor, 1.0)
        if self.car_colour:
            # Which colour, given a car; of whether a car is there it says nothing: empty scores as
            # its likeliest colour, so it can never make print (a colour it knows) a car.
            lp = np.log(p)
            return np.concatenate([np.zeros((len(p), 1)), lp - lp.max(axis=1, keepdims=True)], axis=1)
        if self.occupancy:
            lp = np.log(p)
            return np.concatenate([lp[:, :1], np.repeat(lp[:, 1:2], len(SPACE_CLASSES) - 1, axis=1)], axis=1)
        p_empty = p[:, 0]
        p_car = np.clip(1.0 - probs[:, 0], floor, 1.0)
        share = p[:, 1:] / p[:, 1:].sum(axis=1, keepdims=True)  # which colour, given a car
        colour = cfg.colour_trust * np.log(share * (len(SPACE_CLASSES) - 1))
        return np.concatenate([np.log(p_empty)[:, None], np.log(p_car)[:, None] + colour], axis=1)


class Remembered:
    """A net that gives again, without asking it, its answer for a patch it was shown before: a
    board read twice where only part of it changed pays the net for that part alone. Everything
    else is the net's."""

    def __init__(self, net: SpaceClassifier):
        self.net = net
        self._answers: dict[bytes, np.ndarray] = {}

    def __getattr__(self, name):
        return getattr(self.net, name)

    def predict(self, patches_bgr: np.ndarray) -> np.ndarray:
        if len(patches_bgr) == 0:
            return self.net.predict(patches_bgr)  # nothing to remember: the net's own empty answer
        keys = [hashlib.blake2b(p.tobytes(), digest_size=16).digest() for p in patches_bgr]
        new = [i for i, k in enumerate(keys) if k not in self._answers]
        if new:
            for i, answer in zip(new, self.net.predict(np.ascontiguousarray(patches_bgr[new]))):
                self._answers[keys[i]] = answer
        return np.stack([self._answers[k] for k in keys])


def half_turned(patches_bgr: np.ndarray) -> np.ndarray:
    """Each patch turned half round: the same space seen from its other end."""
    return np.ascontiguousarray(patches_bgr[:, ::-1, ::-1])


def model_input(patches_bgr: np.ndarray) -> np.ndarray:
    """(N, S, S, 3) BGR uint8 patches -> the nets' input: (N, 3, S, S) RGB float32 in 0..1, contiguous
    (what Ultralytics trains on; `models.distill` feeds its student the same)."""
    return np.ascontiguousarray(patches_bgr[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / np.iinfo(np.uint8).max


@lru_cache(maxsize=2)
def load_classifier(onnx_path: str | None = None) -> SpaceClassifier | None:
    """The packaged classifier (or one at `onnx_path`, else at the environment's `TTR_SPACE_MODEL`:
    an ONNX file with its JSON config beside it, e.g. a model `ttr train` wrote elsewhere, read by
    `ttr detect` without replacing the packaged one), loaded once; None when none is installed."""
    return _open(*_model_files(onnx_path, MODEL_NAME, MODEL_ENV))


def load_occupancy(onnx_path: str | None = None) -> SpaceClassifier | None:
    """The packaged car-or-print check (an occupancy model: P(empty), P(car)), or one at `onnx_path`,
    else at the environment's `TTR_OCCUPANCY_MODEL` ("none": none), loaded once; None when none is
    installed. The environment is read at each call (a test may switch the check off)."""
    return _open_unless_none(onnx_path, OCCUPANCY_NAME, OCCUPANCY_ENV)


def load_car_colour(onnx_path: str | None = None) -> SpaceClassifier | None:
    """The packaged car-colour net (P(each player colour), given a car), or one at `onnx_path`, else
    at the environment's `TTR_CAR_COLOUR_MODEL` ("none": none), loaded once; None when none is
    installed."""
    return _open_unless_none(onnx_path, CAR_COLOUR_NAME, CAR_COLOUR_ENV)


def _open_unless_none(onnx_path: str | None, name: str, env: str) -> SpaceClassifier | None:
    """The model `_model_files` finds, or None where the environment's `env` says "none" (and no
    `onnx_path` is given) or none is installed."""
    if onnx_path is None and os.environ.get(env, "").lower() == "none":
        return None
    return _open(*_model_files(onnx_path, name, env))


def _model_files(onnx_path: str | None, name: str, env: str) -> tuple[Path, Path]:
    """(ONNX, JSON config) of a model: at `onnx_path`, else the environment's `env` (which must name
    one), else the packaged `name`."""
    if onnx_path is None and os.environ.get(env):
        onnx_path = os.environ[env]
        if not Path(onnx_path).is_file() or not Path(onnx_path).with_suffix(".json").is_file():
            raise TtrError(f"{env}={onnx_path}: no such ONNX model with its .json config beside it")
    if onnx_path is None:
        return default_model_paths(name)
    return Path(onnx_path), Path(onnx_path).with_suffix(".json")


@lru_cache(maxsize=8)  # a classifier and a check, and the checks benchmarks read folds with
def _open(onnx: Path, cfg: Path) -> SpaceClassifier | None:
    if not onnx.exists() or not cfg.exists():
        return None
    return SpaceClassifier(onnx, ClassifierConfig.load(cfg))
