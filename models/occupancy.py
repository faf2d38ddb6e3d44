"""The occupancy net's recipe: a net asked only whether a car stands on a space, blind to colour.

The space classifier names a space's colour, and with it learns that a yellow patch on yellow print
is often a yellow car: on another copy of the board, or in warm light, print of a player's colour
then reads as that player's cars, and a black car on black print as print. This net is shown the
same patches (`models.train.render_patches`, the reader's own cut) with two answers only, `car` and
`empty`, and every patch's hue turned at random through the whole circle, its saturation and
brightness changed strongly (`JITTER`), so that colour tells it nothing: it must answer from the
shape (a raised car with a lit top and a shadow, the printed outline and icon it hides). Half its
boards are rendered in other homes' worlds (`vision.synth.world`). The reader adds its answer to
its other evidence (`vision.read`, `FuseSettings.occupancy`).

    ttr train --occupancy-only --out models/     # this net alone (~15 min on two CPUs)
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from models.train import _version, render_patches, train_and_export

NAME = "occupancy"  # models/occupancy.onnx and .json (vision.evidence.net.load_occupancy)
CLASSES = ("car", "empty")
# Hue turned through the whole circle (0.5), saturation and brightness changed by up to 70 % and 50 %.
JITTER = (0.5, 0.7, 0.5)
DEFAULTS = {"count": 64, "seed": 20000, "epochs": 8, "varied_share": 0.5, "architecture": "space_student.yaml"}
SMOKE = {"count": 2, "epochs": 1}


def pool_occupancy(patches: Path, data: Path) -> dict:
    """Hard-link the space classifier's class folders (`render_patches`) into `car` and `empty`."""
    counts: dict = {}
    for split in ("train", "val"):
        for c in CLASSES:
            (data / split / c).mkdir(parents=True, exist_ok=True)
        for cls in sorted((patches / split).iterdir()):
            label = "empty" if cls.name == "empty" else "car"
            for f in sorted(cls.iterdir()):
                target = data / split / label / f"{cls.name}_{f.name}"
                if not target.exists():
                    os.link(f, target)
                counts.setdefault(split, {}).setdefault(label, 0)
                counts[split][label] += 1
    return counts


def make_occupancy(out_dir: Path, work: Path, p: dict, command: str, smoke: bool = False, device: str = "cpu",
                   log=print) -> dict:
    """Render, pool, train and export the occupancy net to out_dir/occupancy.{onnx,json}; returns
    its config. `p` holds the patch geometry and rendering of `models.train.DEFAULTS` (imgsz,
    side_mm, photo_wh, corner_jitter, batch) and this module's DEFAULTS."""
    seconds = {}
    t0 = time.time()
    patches, data = work / "occupancy_patches", work / "occupancy_data"
    for d in (patches, data):
        if d.exists():
            shutil.rmtree(d)
    render_patches(patches, p["count"], p["seed"], p["imgsz"], p["side_mm"], p["photo_wh"], p["corner_jitter"],
                   wider_plastic=True, car_seen_height_mm=p["car_seen_height_mm"], varied_share=p["varied_share"])
    counts = pool_occupancy(patches, data)
    seconds["render"] = round(time.time() - t0, 1)
    t0 = time.time()
    metrics = train_and_export(data, work / "occupancy_run", out_dir, p["epochs"], p["imgsz"], p["batch"], p["seed"],
                               device, jitter=JITTER, architecture=p["architecture"], name=NAME)
    seconds["train_export"] = round(time.time() - t0, 1)
    config = {
        "classes": metrics.pop("classes"),
        "imgsz": p["imgsz"],
        "crop": {"side_mm": p["side_mm"], "px_per_mm": 2.0, "light": "paper-normalised (vision.spaces)",
                 "axis": "space long axis horizontal, centred",
                 "car_seen_height_mm": p["car_seen_height_mm"]},
        "input": "RGB float 0..1, NCHW",
        "task": "occupancy",
        "architecture": p["architecture"],
        "model": f"{p['architecture']} (from scratch)",
        "augment": {"hsv_h": JITTER[0], "hsv_s": JITTER[1], "hsv_v": JITTER[2], "flips": "both ways"},
        "render": {"count": p["count"], "seeds": [[p["seed"], p["seed"] + p["count"] - 1]],
                   "photo_wh": list(p["photo_wh"]), "corner_jitter": p["corner_jitter"], "wider_plastic": True,
                   "varied_share": p["varied_share"]},
        "epochs": p["epochs"], "batch": p["batch"], "smoke": smoke, "device": device,
        "patches": counts, "metrics": metrics, "seconds": seconds,
        "versions": {"ultralytics": _version("ultralytics"), "torch": _version("torch")},
        "command": command,
    }
    (out_dir / f"{NAME}.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {out_dir / (NAME + '.onnx')} and {NAME}.json (top1 {metrics.get('top1', float('nan')):.3f}, "
        + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()) + ")")
    return config
