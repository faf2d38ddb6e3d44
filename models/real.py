"""Real cars for the space classifier: patches of the real development photos, cut by the reader, and
a fine-tune of a trained classifier on them (`ttr train --real DIR [--leave-out STATE]`).

In:  a folder of real photos with their truth, `DIR/<photo>` and `DIR/gt/<photo stem>.json` (the
     layout of `../shared/real/dev`, see its README: each track's owner, the board state), passed
     as a path (nothing of it is committed: no photos, no patches).
Out: labelled patches (in memory, cached under the run's work folder), and a fine-tuned ONNX model.

The patches are the reader's own: each photo is read by `vision.read.Reader.trace_path` (decode,
`vision.locate.locate_board`, flatten, light normalisation, registration on the template's spaces,
the camera-parallax shift of the model's `crop.car_seen_height_mm`) and the patches the reader hands
its net first (`ReadingTrace.samples.net_patches`, all 309 spaces) are kept. So training sees exactly what
the reader will show the net, whatever the locator or the cutting does, now or after a change.

Labels: a space's class is its track's owner in the truth (`empty` when none). The truth names a
double route's two lanes by the same city pair, so where both lanes are printed alike and only one
(or two different players) hold them, which lane holds which is taken from the reader's own reading
when it agrees with the truth as a pair, else from the classifier's answer if it is clear, else the
pair's spaces are left out.

Fine-tune (`finetune`): the starting net's weights are read from its ONNX file into the graph of
the same layers (its config's `architecture`) in fused form (convolutions with their batch norm folded in, as the export
wrote them), then trained on the real patches (hard labels) and on freshly rendered patches
(targets: 80 % the starting net's own answer on the patch and its half-turned copy, 20 % the label,
so the renders keep what the net knew: see `models.distill`). Real patches are augmented harder
than renders: flips, white balance (per channel gains), light and saturation gains, blur, shifts
of a few pixels and a slight zoom; never a hue rotation.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from models.distill import _augment, _export, _to_tensor, load_patches, teacher_targets
from scoring.errors import TtrError
from vision.evidence.net import ClassifierConfig, SpaceClassifier
from vision.read import Reader
from vision.reading import SPACE_CLASSES as CLASSES
from vision.spaces import CropGeometry

IMAGE_EXT = (".jpg", ".jpeg", ".png")
STATES = ("A", "B", "D")  # played board states of the dev folder; "empty" boards are always trained on
EMPTY_STATE = "empty"


def real_photos(real_dir: Path) -> list[tuple[Path, dict]]:
    """(photo path, truth) for each photo of `real_dir` with a `gt/<stem>.json`, by name."""
    real_dir = Path(real_dir)
    out = []
    for gt_path in sorted((real_dir / "gt").glob("*.json")):
        photos = [p for p in sorted(real_dir.iterdir())
                  if p.stem == gt_path.stem and p.suffix.lower() in IMAGE_EXT and p.is_file()]
        if photos:
            out.append((photos[0], json.loads(gt_path.read_text(encoding="utf-8"))))
    return out


def labelled_folder(option: str, value: str, hint: str = "") -> Path:
    """The folder an option names, checked to hold photos with their truth in gt/; else a one-line
    error naming the option (with `hint`, what makes such a folder)."""
    folder = Path(value)
    if not folder.is_dir() or not (folder / "gt").is_dir() or not real_photos(folder):
        raise TtrError(f"{option} {value}: not a folder with photos and their truth in gt/{hint}")
    return folder


def state_of(truth: dict) -> str:
    """A board state letter, or "empty" for a board with no car (whatever its label says)."""
    if not any(t.get("owner") for t in truth["tracks"]):
        return EMPTY_STATE
    return str(truth.get("board_state") or "?")


def reader_patches(reader, photo: Path) -> tuple[np.ndarray, object]:
    """The (309, S, S, 3) BGR patches the reader gives its net on `photo` (its first look, every
    space, in `reader.track_ids` order: `ReadingTrace.samples.net_patches`) and its reading."""
    trace = reader.trace_path(str(photo))
    return trace.samples.net_patches, trace.reading


def space_labels(reader, truth: dict, patches: np.ndarray, reading) -> np.ndarray:
    """(309,) class index (CLASSES order) of every space from the truth; -1 where it is unsure (a
    double route's like-printed lanes whose owners differ and cannot be told apart)."""
    board = reader.board
    by_key: dict = defaultdict(list)
    for t in board.tracks:
        by_key[(*sorted((t.a, t.b)), t.color)].append(t.id)
    owners: dict = defaultdict(list)
    for t in truth["tracks"]:
        o = t.get("owner")
        owners[(*sorted((t["a"], t["b"])), t["color"])].append(o if o in CLASSES[1:] else None)
    read_owner = {r.track_id: r.owner for r in reading.tracks}
    probs = None
    track_owner: dict[int, str | None] = {}
    for key, ids in by_key.items():
        truth_owners = owners.get(key)
        if truth_owners is None or len(truth_owners) != len(ids):
            raise ValueError(f"truth has {truth_owners} for {key}, the board {len(ids)} track(s)")
        if len(set(truth_owners)) == 1:
            track_owner.update({tid: truth_owners[0] for tid in ids})
            continue
        # Two like-printed lanes held differently: which is which?
        a, b = ids
        o1, o2 = truth_owners
        if sorted([read_owner[a] or "", read_owner[b] or ""]) == sorted([o1 or "", o2 or ""]):
            track_owner[a], track_owner[b] = read_owner[a], read_owner[b]
            continue
        if reader.net is None:  # nothing else to tell the lanes apart: left out
            track_owner[a] = track_owner[b] = "?"
            continue
        if probs is None:
            probs = np.clip(reader.net.predict(patches), 1e-4, 1.0)

        def score(x, y):
            return sum(np.log(probs[reader.track_ids == tid, CLASSES.index(o or "empty")]).sum()
                       for tid, o in ((a, x), (b, y)))

        s12, s21 = score(o1, o2), score(o2, o1)
        if abs(s12 - s21) > 3.0:
            track_owner[a], track_owner[b] = (o1, o2) if s12 > s21 else (o2, o1)
        else:
            track_owner[a] = track_owner[b] = "?"
    labels = np.array([-1 if track_owner[int(t)] == "?" else CLASSES.index(track_owner[int(t)] or "empty")
                       for t in reader.track_ids])
    return labels


def collect(real_dir: Path, init_onnx: Path | None, cache: Path, car_seen_height_mm: float, imgsz: int = 64,
            side_mm: float = 30.0, log=print, keep=None, label: str = "real") -> list[dict]:
    """Every real photo's patches, labels and state (those `keep(photo path)` accepts, where it is
    given), cut by a reader with the starting model (`init_onnx`, whose config sets the patch
    geometry; None: no net, `imgsz` and `side_mm`) and cached in `cache` (npz per photo and patch
    geometry)."""

    if init_onnx is not None:
        reader = Reader(model_path=str(init_onnx), net_seen_height_mm=car_seen_height_mm)
        imgsz, side_mm = reader.geometry.imgsz, reader.geometry.side_mm
    else:  # no net yet: patches cut with this geometry, the photo read by its colours
        reader = Reader(use_classifier=False, geometry=CropGeometry(imgsz, side_mm),
                        net_seen_height_mm=car_seen_height_mm)
    cache = cache / f"s{imgsz}_side{side_mm:g}_h{car_seen_height_mm:g}"
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    t0 = time.time()
    for photo, truth in real_photos(real_dir):
        if keep is not None and not keep(photo):
            continue
        f = cache / f"{photo.stem}.npz"
        if f.exists():
            d = np.load(f)
            patches, labels = d["patches"], d["labels"]
        else:
            try:
                patches, reading = reader_patches(reader, photo)
            except TtrError as e:
                log(f"real: {photo.name} skipped: {e}")
                continue
            labels = space_labels(reader, truth, patches, reading)
            np.savez_compressed(f, patches=patches, labels=labels)
        out.append({"photo": photo.name, "state": state_of(truth), "patches": patches, "labels": labels})
    log(f"{label}: {len(out)} photos, {sum(int((o['labels'] >= 0).sum()) for o in out)} labelled patches "
        f"({time.time() - t0:.0f} s)")
    return out


def split(photos: list[dict], leave_out: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_held, y_held): patches of the photos not of state `leave_out` and of
    those that are (none without one); unsure spaces dropped."""
    def stack(sel):
        if not sel:
            return np.zeros((0,) + photos[0]["patches"].shape[1:], np.uint8), np.zeros(0, int)
        x = np.concatenate([o["patches"][o["labels"] >= 0] for o in sel])
        y = np.concatenate([o["labels"][o["labels"] >= 0] for o in sel])
        return x, y

    held = [o for o in photos if leave_out and o["state"] == leave_out]
    train = [o for o in photos if not (leave_out and o["state"] == leave_out)]
    return (*stack(train), *stack(held))


# ----------------------------------------------------------------------------- the net


def load_onnx_weights(onnx_path: Path, model_yaml: str = "yolo11n-cls.yaml"):
    """A fused ClassificationModel of `model_yaml`'s layers (6 classes) holding the weights of an ONNX
    file exported from one (`models.train` / `models.distill`: the export fuses each batch norm
    into its convolution and keeps the weights' names). Its answers equal the ONNX file's (largest
    difference 4e-7 on real patches)."""
    import onnx
    import torch
    from onnx import numpy_helper
    from ultralytics.nn.tasks import ClassificationModel

    model = ClassificationModel(model_yaml, nc=len(CLASSES), verbose=False)
    model.fuse(verbose=False)
    graph = onnx.load(str(onnx_path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    state = model.state_dict()
    missing = [k for k in state if k not in inits]
    if missing:  # an export that renamed its weights: not one of ours
        raise RuntimeError(f"{onnx_path}: {len(missing)} weights not found by name (e.g. {missing[:3]})")
    model.load_state_dict({k: torch.from_numpy(np.array(inits[k])).to(v.dtype) for k, v in state.items()})
    return model


def _gaussian_blur(x, sigma, torch):
    """Per-image Gaussian blur (B, 3, S, S), `sigma` (B,) in pixels (0: none), 5-tap kernels."""
    import torch.nn.functional as F

    r = torch.arange(-2, 3, dtype=x.dtype)
    k = torch.exp(-(r[None] ** 2) / (2 * sigma.clamp(min=1e-3)[:, None] ** 2))
    k = k / k.sum(dim=1, keepdim=True)  # (B, 5)
    b, c, h, w = x.shape
    y = x.reshape(1, b * c, h, w)
    kk = k.repeat_interleave(c, dim=0)
    y = F.conv2d(F.pad(y, (2, 2, 0, 0), mode="replicate"), kk[:, None, None, :], groups=b * c)
    y = F.conv2d(F.pad(y, (0, 0, 2, 2), mode="replicate"), kk[:, None, :, None], groups=b * c)
    return y.reshape(b, c, h, w)


def augment_real(x, gen, shift_px: float = 3.0):
    """Real patches' augmentation on a float (B, 3, S, S) RGB batch in 0..1: flips both ways,
    white balance (each channel x0.88-1.12), light x0.7-1.3, saturation x0.7-1.3, blur (sigma 0-1.2
    px, half the patches), a shift of up to `shift_px` pixels each way and a zoom of 0.93-1.07."""
    import torch
    import torch.nn.functional as F

    b, _, s, _ = x.shape
    flip_h = torch.rand(b, generator=gen) < 0.5
    flip_v = torch.rand(b, generator=gen) < 0.5
    x = torch.where(flip_h[:, None, None, None], x.flip(3), x)
    x = torch.where(flip_v[:, None, None, None], x.flip(2), x)
    wb = 1 + (torch.rand(b, 3, 1, 1, generator=gen) * 2 - 1) * 0.12
    x = x * wb
    grey = x.mean(dim=1, keepdim=True)
    sat = 1 + (torch.rand(b, 1, 1, 1, generator=gen) * 2 - 1) * 0.3
    val = 1 + (torch.rand(b, 1, 1, 1, generator=gen) * 2 - 1) * 0.3
    x = ((grey + (x - grey) * sat) * val).clamp(0, 1)
    sigma = torch.rand(b, generator=gen) * 1.2 * (torch.rand(b, generator=gen) < 0.5)
    x = torch.where((sigma > 0.2)[:, None, None, None], _gaussian_blur(x, sigma, torch), x)
    zoom = 1 + (torch.rand(b, generator=gen) * 2 - 1) * 0.07
    shift = (torch.rand(b, 2, generator=gen) * 2 - 1) * (2 * shift_px / s)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0] = 1 / zoom
    theta[:, 1, 1] = 1 / zoom
    theta[:, :, 2] = shift
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def top1(onnx_path: Path, x: np.ndarray, y: np.ndarray) -> float | None:
    """Top-1 of an ONNX classifier (with its config) on patches, as the reader asks it (one look)."""
    if not len(x):
        return None

    clf = SpaceClassifier(onnx_path, ClassifierConfig.load(Path(onnx_path).with_suffix(".json")))
    probs = np.concatenate([clf.predict(x[i:i + 512]) for i in range(0, len(x), 512)])
    return float((probs.argmax(1) == y).mean())


def finetune(init_onnx: Path, x_real: np.ndarray, y_real: np.ndarray, render_dirs: list[Path], out_onnx: Path,
             work: Path, epochs: int = 3, batch: int = 64, seed: int = 1000, lr: float = 3e-4,
             render_label_weight: float = 0.2, log=print, device: str = "cpu",
             model_yaml: str = "yolo11n-cls.yaml") -> dict:
    """Fine-tune the net of `init_onnx` on real patches (hard labels) and rendered ones (the starting
    net's answer mixed with the label) and export it to `out_onnx`. Returns what was done."""
    import torch

    t0 = time.time()
    torch.manual_seed(seed)
    dev = torch.device("cpu" if device == "cpu" else f"cuda:{device}" if device.isdigit() else device)
    gen = torch.Generator().manual_seed(seed)
    model = load_onnx_weights(init_onnx, model_yaml)
    x_render, y_render = load_patches(render_dirs, "train")
    eye = np.eye(len(CLASSES))
    soft = teacher_targets([init_onnx], x_render) if len(x_render) else np.zeros((0, len(CLASSES)))
    t_render = torch.from_numpy((1 - render_label_weight) * soft + render_label_weight * eye[y_render]).float()
    t_real = torch.from_numpy(eye[y_real]).float()
    img_real, img_render = _to_tensor(x_real), _to_tensor(x_render)
    n_real, n_render = len(img_real), len(img_render)
    model = model.to(dev)
    decay, no_decay = [], []
    for p in model.parameters():
        (decay if p.ndim > 1 else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, betas=(0.9, 0.999))
    total_n = n_real + n_render
    steps = epochs * int(np.ceil(total_n / batch))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 1 - 0.95 * i / max(steps, 1))
    losses = []
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(total_n, generator=gen)
        total = 0.0
        for i in range(0, total_n, batch):
            idx = order[i:i + batch]
            real_idx, render_idx = idx[idx < n_real], idx[idx >= n_real] - n_real
            xs, ts = [], []
            if len(real_idx):
                xs.append(augment_real(img_real[real_idx], gen))
                ts.append(t_real[real_idx])
            if len(render_idx):
                xs.append(_augment(img_render[render_idx], gen))
                ts.append(t_render[render_idx])
            logits = model(torch.cat(xs).to(dev))
            loss = -(torch.cat(ts).to(dev) * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        losses.append(round(total / total_n, 4))
        log(f"fine-tune epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f} ({time.time() - t0:.0f} s)")
    model.eval()
    _export(model.cpu(), out_onnx, img_real.shape[-1] if n_real else img_render.shape[-1], work, model_yaml)
    return {"epochs": epochs, "lr": lr, "batch": batch, "seed": seed, "real_patches": int(n_real),
            "render_patches": int(n_render), "render_label_weight": render_label_weight, "loss": losses,
            "seconds": round(time.time() - t0, 1)}


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
