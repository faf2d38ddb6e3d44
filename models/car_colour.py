"""The car-colour net's recipe (`ttr train --car-colour --real DIR [--copies COPIES] [--leave-out
STATES]`): a small net asked only which of the five plastic colours a car on a space shows, trained
on real cars.

Why: every copy of the board is printed in its own run, but the cars are the same plastic in every
box. The space classifier learnt the cars' colours from renders; asked about the real cars it is
unsure between dark ones (black, blue, green) in dim light, and the colour evidence mixes a car with
its neighbours. Trained on the development photos' own cars, and on them laid on the empty boards'
spaces of every print (`models.paste`), with the light, white balance, saturation and contrast
moved (not the hue: that is the answer), it tells them apart where the other sources were close.
The reader asks it about the spaces the other sources give a car a chance and counts its answer
only among the car colours (`vision.evidence.net.SpaceClassifier.loglik`: empty scores as the
likeliest colour): whether a car is there is the others' to say, so print of a player's colour can
never turn into cars by it.

In:  as the car-or-print check (`models.occupancy.training_patches`): DIR's photos but the states
     `--leave-out` names, `paste` patches of their cars laid on their empty boards, and `count`
     rendered boards; of them, the car patches only. With `--copies`, also the photos of COPIES
     (DIR's photos re-lit by `benchmarks/relight.py`) whose flash fired, as real photos of their
     source's state. Why: no development photo was taken with a flash, and under one the real cars
     lose their colour to the hot spot and the warm fall-off; the re-lit copies show the same real
     cars so (`docs/ablation.md`).
Out: `space_car_colour.onnx` (dynamic batch; out: P(red), P(blue), P(green), P(yellow), P(black);
     its convolutions in 8-bit integers) and `space_car_colour.json` beside it.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from models.occupancy import DEFAULTS as CHECK_DEFAULTS
from models.occupancy import SMOKE as CHECK_SMOKE
from models.occupancy import (
    crop_record,
    fit,
    flash_fired,
    occupancy_net,
    quantize,
    real_record,
    recipe_setup,
    relit,
    to_onnx,
    training_patches,
    write_config,
)
from models.real import labelled_folder, real_photos
from scoring.errors import TtrError
from scoring.rules import PLAYER_COLORS
from vision.evidence.net import CAR_COLOUR_NAME

# The check's settings but for the net's size: naming one of five plastic colours takes less than
# telling a car from print, and the reader asks it on most spaces of a played board, so it is
# narrower and looks once (two looks, width 24: the same tracks on the folds at three times the cost;
# `docs/ablation.md`).
DEFAULTS = dict(CHECK_DEFAULTS, width=16, looks=1)
SMOKE = dict(CHECK_SMOKE)
CLASSES = tuple(PLAYER_COLORS)


def colour_net(width: int):
    """The check's layers (`models.occupancy.occupancy_net`) with one output per car colour."""
    import torch.nn as nn

    net = occupancy_net(width)
    net.out = nn.Linear(4 * width, len(CLASSES))

    class ColourNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features, self.out = net.features, net.out

        def forward(self, x):  # (B, 3, S, S) RGB in 0..1 -> (B, 5) logits
            return self.out(self.features(x).mean((2, 3)))

    return ColourNet()


def train(x: np.ndarray, colour: np.ndarray, weight: np.ndarray, p: dict, log=print):
    """The net trained on (N, S, S, 3) BGR car patches, `colour` 0..4 (CLASSES) and each patch's loss
    weight, as the check is (`models.occupancy.fit`) but in other light only: the hue is the answer."""
    import torch
    import torch.nn.functional as F

    return fit(lambda: colour_net(p["width"]), x, torch.from_numpy(colour).long(), weight, p,
               lambda batch, gen: relit(batch, gen, saturation=0.2, white_balance=0.08), F.cross_entropy,
               "car colour", log)


def export(net, out_onnx: Path, imgsz: int, looks: int = DEFAULTS["looks"]) -> None:
    """ONNX with a dynamic batch: in (B, 3, S, S) RGB 0..1, out (B, 5) the colours' probabilities,
    from the logits on the patch (with `looks` 2, and on it turned half round, averaged)."""
    import torch

    class Looks(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            logits = self.net(x) if looks == 1 else 0.5 * (self.net(x) + self.net(x.flip(2).flip(3)))
            return torch.softmax(logits, 1)

    to_onnx(Looks(net).eval(), out_onnx, imgsz)


def copies_folder(value: str | None) -> Path | None:
    """`--copies DIR` checked: a folder of re-lit photos with their truth in gt/, some under a flash."""
    if value is None:
        return None
    folder = labelled_folder("--copies", value, " (benchmarks/relight.py makes one)")
    if not any(flash_fired(photo) for photo, _ in real_photos(folder)):
        raise TtrError(f"--copies {value}: none of its photos says its flash fired (the net learns only those)")
    return folder


def make_car_colour(args) -> int:
    """The recipe, as `ttr train --car-colour` asks for it; returns the exit status."""
    p, real = recipe_setup(args, "--car-colour needs --real DIR: the net learns the real cars from it",
                           DEFAULTS, SMOKE, ("count", "epochs", "paste"))
    out_dir = Path(args.out)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="ttr_car_colour_"))
    copies = copies_folder(args.copies)
    data = training_patches(real, args.leave_out, p, work, copies)
    y = np.concatenate([data["y_real"], data["y_render"]])
    weight = np.concatenate([np.ones(len(data["y_real"])), np.full(len(data["y_render"]), p["render_weight"])])
    cars = y > 0
    x, colour, weight = data["x"][cars], (y[cars] - 1).astype(np.int64), weight[cars].astype(np.float32)
    t0 = time.time()
    net = train(x, colour, weight, p)
    seconds = dict(data["seconds"], train=time.time() - t0)
    onnx_path = out_dir / f"{CAR_COLOUR_NAME}.onnx"
    export(net, onnx_path, p["imgsz"], p["looks"])
    measured = quantize(onnx_path, x, p["seed"])
    config = {
        "classes": list(CLASSES), "imgsz": p["imgsz"], "task": "car colour", "crop": crop_record(p),
        "model": f"models.car_colour.colour_net(width={p['width']}), trained in other lights (see its doc)",
        "quantized": {"format": "onnxruntime static QDQ, the convolutions only",
                      "ranges_from_training_patches": measured},
        "recipe": {k: v for k, v in p.items() if k not in ("imgsz", "side_mm", "draws")},
        "patches": {"real_cars": int(cars[:len(data["y_real"])].sum()),
                    "rendered_cars": int(cars[len(data["y_real"]):].sum())},
        "real": {**real_record(real, data["left_out"], data["kept"], data["photos"]), "paste": data["pasted"],
                 "flash_copies": None if copies is None else str(copies)},
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
    }
    return write_config(out_dir, CAR_COLOUR_NAME, config, args, work)
