"""Distil several trained space classifiers (the teachers) into one smaller net (the student).

Why: nets trained by the same recipe from other seeds disagree most where the reader needs them
most, on a car standing on a space printed in its own colour, and on real photos one run may read
a print as cars where the next does not. The teachers' averaged answer is steadier than any one of
them, but running several nets per photo costs their sum in time; a student trained to give the
averaged answer keeps one net's speed, or better: a narrower net than any teacher learns their
averaged answer as well (Hinton et al., "Distilling the knowledge in a neural network", 2015), and
the reader runs it on every photo.

In:  the teachers' ONNX files and folders of labelled patches (`models.train.render_patches`' layout:
     `<dir>/{train,val}/<class>/*.png`).
Out: the student's ONNX file (same input, output and class order as a teacher's) and its metrics.

Targets: per patch, the mean over teachers of their answer on the patch and on its half-turned copy
(the reader averages the two on spaces printed in a player's colour), mixed with the true label
(`label_weight`) so the student never learns a teacher's mistake outright. Loss: cross-entropy with
these soft targets. Augmentation as the teachers' (`models.train.train_and_export`): flips both
ways, light and saturation gains, a slight random crop; never a hue shift.
Needs torch and ultralytics (the train extra); runs on the CPU or a CUDA GPU. Not repeatable bit for
bit: run again from the same teachers in a fresh process, it gave a different net (models/README.md).
"""
from __future__ import annotations

import contextlib
import shutil
import time
from pathlib import Path

import cv2
import numpy as np

from vision.evidence.net import ClassifierConfig, SpaceClassifier, model_input
from vision.reading import SPACE_CLASSES as CLASSES


def load_patches(dirs: list[Path], split: str) -> tuple[np.ndarray, np.ndarray]:
    """(N, S, S, 3) BGR uint8 patches and (N,) class indices (CLASSES order) of one split, read in a
    fixed order (folder, class, file name) so a run is repeatable."""

    images, labels = [], []
    for d in dirs:
        for k, name in enumerate(CLASSES):
            for f in sorted((Path(d) / split / name).glob("*.png")):
                images.append(cv2.imread(str(f), cv2.IMREAD_COLOR))
                labels.append(k)
    if not images:
        return np.zeros((0, 1, 1, 3), np.uint8), np.zeros(0, int)
    return np.stack(images), np.asarray(labels)


def teacher_targets(teacher_onnx: list[Path], patches: np.ndarray, batch: int = 512) -> np.ndarray:
    """(N, 6) mean answer of the teachers (CLASSES order) on each patch and its half-turned copy."""

    total = np.zeros((len(patches), len(CLASSES)))
    for path in teacher_onnx:
        clf = SpaceClassifier(path, ClassifierConfig.load(Path(path).with_suffix(".json")))
        for i in range(0, len(patches), batch):
            x = patches[i:i + batch]
            total[i:i + batch] += clf.predict(x) + clf.predict(np.ascontiguousarray(x[:, ::-1, ::-1]))
    return total / (2 * len(teacher_onnx))


def _augment(x, gen):
    """Teachers' augmentation on a float (B, 3, S, S) RGB batch in 0..1 (see the module doc)."""
    import torch
    import torch.nn.functional as F

    b = x.shape[0]
    flip_h = torch.rand(b, generator=gen) < 0.5
    flip_v = torch.rand(b, generator=gen) < 0.5
    x = torch.where(flip_h[:, None, None, None], x.flip(3), x)
    x = torch.where(flip_v[:, None, None, None], x.flip(2), x)
    # Light and saturation gains in 0.65..1.35, as hsv_v / hsv_s 0.35 in the teachers' recipe.
    grey = x.mean(dim=1, keepdim=True)
    sat = 1 + (torch.rand(b, 1, 1, 1, generator=gen) * 2 - 1) * 0.35
    val = 1 + (torch.rand(b, 1, 1, 1, generator=gen) * 2 - 1) * 0.35
    x = ((grey + (x - grey) * sat) * val).clamp(0, 1)
    # A random crop of 90-100 % of the area, resized back (the teachers' scale 0.1).
    side = torch.sqrt(0.9 + 0.1 * torch.rand(b, generator=gen))
    shift = (1 - side)[:, None] * (torch.rand(b, 2, generator=gen) * 2 - 1)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0] = side
    theta[:, 1, 1] = side
    theta[:, :, 2] = shift
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def _to_tensor(patches_bgr: np.ndarray):
    import torch

    return torch.from_numpy(model_input(patches_bgr))


def distil(teacher_onnx: list[Path], patch_dirs: list[Path], out_onnx: Path, work: Path, epochs: int = 3,
           batch: int = 64, seed: int = 1000, label_weight: float = 0.2, lr: float = 1e-3, log=print,
           device: str = "cpu", model_yaml: str = "yolo11n-cls.yaml") -> dict:
    """Train the student (built from `model_yaml`: the recipe's is models/space_student.yaml, narrower
    than its teachers) on `patch_dirs` towards the teachers' averaged
    answer and export it to `out_onnx`. Returns metrics: top-1 against the true labels and agreement
    with the teachers on the validation patches, and the seconds spent. `device` "0" (a CUDA
    device) is much faster than the CPU."""
    import torch
    from ultralytics.nn.tasks import ClassificationModel

    t0 = time.time()
    torch.manual_seed(seed)
    dev = torch.device("cpu" if device == "cpu" else f"cuda:{device}" if device.isdigit() else device)
    if dev.type == "cpu":
        torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(seed)
    x_train, y_train = load_patches(patch_dirs, "train")
    x_val, y_val = load_patches(patch_dirs, "val")
    soft = teacher_targets(teacher_onnx, x_train)
    target = torch.from_numpy((1 - label_weight) * soft + label_weight * np.eye(len(CLASSES))[y_train]).float()
    t_targets = time.time() - t0
    log(f"student: {len(x_train)} training patches, teacher targets in {t_targets:.0f} s")

    model = ClassificationModel(model_yaml, nc=len(CLASSES), verbose=False).to(dev)
    decay, no_decay = [], []
    for p in model.parameters():
        (decay if p.ndim > 1 else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.999))
    steps = epochs * int(np.ceil(len(x_train) / batch))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 1 - 0.99 * i / max(steps, 1))  # linear to lr / 100
    images = _to_tensor(x_train)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(images), generator=gen)
        total = 0.0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            logits = model(_augment(images[idx], gen).to(dev))
            loss = -(target[idx].to(dev) * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        log(f"student epoch {epoch + 1}/{epochs}: loss {total / len(images):.4f} ({time.time() - t0:.0f} s)")

    model.eval()
    metrics = {"teachers": len(teacher_onnx), "label_weight": label_weight, "epochs": epochs}
    if len(x_val):
        with torch.no_grad():
            probs = torch.cat([model(_to_tensor(x_val[i:i + 512]).to(dev))[0].cpu()
                               for i in range(0, len(x_val), 512)]).numpy()
        ens = teacher_targets(teacher_onnx, x_val)
        metrics["top1"] = float((probs.argmax(1) == y_val).mean())
        metrics["teachers_top1"] = float((ens.argmax(1) == y_val).mean())
        metrics["agreement_with_teachers"] = float((probs.argmax(1) == ens.argmax(1)).mean())
    _export(model.cpu(), out_onnx, images.shape[-1], work, model_yaml)
    metrics["seconds"] = round(time.time() - t0, 1)
    return metrics


def _export(model, out_onnx: Path, imgsz: int, work: Path, model_yaml: str = "yolo11n-cls.yaml") -> None:
    """Export through Ultralytics, exactly as a teacher is exported (dynamic batch, softmax out)."""

    from ultralytics import YOLO

    wrapper = YOLO(model_yaml, task="classify")
    model.names = {i: n for i, n in enumerate(CLASSES)}
    model.args = {"imgsz": imgsz, "data": None}
    model.task = "classify"
    wrapper.model = model
    work.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(work):  # the exporter writes next to the model's yaml name, here
        path = Path(wrapper.export(format="onnx", dynamic=True, imgsz=imgsz, simplify=True, verbose=False)).resolve()
    out_onnx.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, out_onnx)
