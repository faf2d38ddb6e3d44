"""The car-or-print check's recipe (`ttr train --occupancy --real DIR [--leave-out STATES]`): a small
net asked only whether a car stands on a space, blind to colour, trained on real cars and real print
as well as renders.

Why: the space classifier and the colour evidence both lean on hue, and a car and the print of its
own colour differ mostly in shade, which moves with the copy of the board and the light. What does
not move is shape: a car is a raised block with a lit top, darker sides and a shadow, and it hides
its space's printed outline and train icon. A net trained on renders alone to see that failed on
real photos (rendered print is not real print: the colour-blind net of issue 28, `docs/ablation.md`);
this one learns from the real photos' own patches, each board state's fold read by a net trained
without it. The photos show each real car on one space only; laid on other spaces of the empty
boards (on print of every colour, beside a double's other lane), the same cars teach the check what
a car is rather than where these cars stood: the development folds' doubt fell and their re-lit
copies read more tracks (`docs/ablation.md`, "real cars laid on the empty boards").

In:  `DIR` (photos with their truth, `../shared/real/dev`'s layout), read by the reader itself
     (`models.real.collect`: the patches its classifier is given, labelled from the truth); `paste`
     patches of those photos' real cars laid on their empty boards (`models.paste`: half cars, on
     any print and often their own colour, half the bare boards and the lanes beside them, none
     from a left-out state); and `count` rendered boards (`models.train.render_patches`, half in
     other homes' worlds, seeds from `seed`, below the test seeds 9000-9999).
Out: `space_occupancy.onnx` (dynamic batch; out: P(empty), P(car); its convolutions in 8-bit integers, `quantize`)
     and `space_occupancy.json` beside it (classes, patch geometry, seeds, epochs, what was left
     out, versions, the command). Nothing of DIR is written under `--out`; with `--work`, the trained
     weights are kept there (`space_occupancy_<left out>_<seed>.pt`, one a draw).

Every training patch's colours are changed at random before the net sees it: the hue turned through
the whole circle, saturation, white balance, light and contrast moved, so that no colour can answer
"car or print?"; then flipped and shifted by a few pixels. A rendered patch counts half a real one.
The net itself is plain (`occupancy_net`: seven 3x3 convolutions, 24 to 96 channels, 0.25 M
parameters), asked once per patch. Its answers on the patch and on the patch turned half round
averaged (`looks` 2) read the same tracks at twice the cost; without the car-colour net, more pairs
of photos of one board read worse than their better photo asked once, with it none do
(`docs/ablation.md`). A narrower net (12 to 48 channels) read 12 fewer development
tracks and 8 to 17 fewer on the re-lit sets (`docs/ablation.md`).

With `draws` N the check is N such nets, each trained from its own seed (seed, seed + 1, ...: its
own renders, start and order), their P(car) averaged. One net ships: two checks of three draws read
the development folds and their copies as the average single draw does, at three times the cost
(`docs/ablation.md`).
"""
from __future__ import annotations

import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from models.distill import load_patches
from models.real import collect, labelled_folder
from models.real import split as real_split
from models.train import _version, render_patches, with_pasted
from scoring.errors import TtrError
from vision.evidence.net import OCCUPANCY_NAME, default_model_paths, model_input
from vision.image_io import read_header

DEFAULTS = {"count": 64, "epochs": 6, "seed": 20000, "imgsz": 64, "side_mm": 30.0, "batch": 128, "width": 24,
            "render_weight": 0.5, "varied_share": 0.5, "lr": 3e-3, "looks": 1, "draws": 1, "paste": 4000}
SMOKE = {"count": 2, "epochs": 1, "width": 4, "paste": 40}
CLASSES = ("empty", "car")
QUANTIZE_PATCHES = 2048  # training patches that measure the 8-bit check's ranges (`quantize`)


def occupancy_net(width: int):
    """The layers: 3x3 convolutions with batch norm, the first of stride 2, three max-pools, a mean
    over the last map and one linear output (the car's log-odds)."""
    import torch.nn as nn

    def conv(i, o, stride=1):
        return [nn.Conv2d(i, o, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

    w = width
    features = nn.Sequential(*conv(3, w, 2), *conv(w, w), nn.MaxPool2d(2), *conv(w, 2 * w), *conv(2 * w, 2 * w),
                             nn.MaxPool2d(2), *conv(2 * w, 4 * w), *conv(4 * w, 4 * w), nn.MaxPool2d(2),
                             *conv(4 * w, 4 * w))

    class OccupancyNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features, self.out = features, nn.Linear(4 * w, 1)

        def forward(self, x):  # (B, 3, S, S) RGB in 0..1 -> (B,) log-odds of a car
            return self.out(self.features(x).mean((2, 3)))[:, 0]

    return OccupancyNet()


def colour_blind(x, gen):
    """A float (B, 3, S, S) RGB batch with its colours changed at random (see the module doc): its
    hue turned, then `relit`."""
    import torch

    b = x.shape[0]
    # Hue: a rotation about the grey axis by an angle drawn from the whole circle (Rodrigues).
    angle = torch.rand(b, generator=gen) * 2 * np.pi
    k = torch.full((3,), 3 ** -0.5)
    cross = torch.tensor([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    turn = (torch.eye(3) + torch.sin(angle)[:, None, None] * cross
            + (1 - torch.cos(angle))[:, None, None] * (cross @ cross))
    return relit(torch.einsum("bij,bjhw->bihw", turn, x), gen, saturation=0.4, white_balance=0.12)


def relit(x, gen, saturation: float, white_balance: float):
    """A float (B, 3, S, S) RGB batch in another light: its saturation and each channel (white
    balance) moved by up to about these log-scales, its light and contrast too; then flipped and
    shifted by a few pixels. The hue stays (`colour_blind` turns it first)."""
    import torch

    b = x.shape[0]
    grey = x.mean(1, keepdim=True)
    x = grey + (x - grey) * torch.exp(torch.randn(b, 1, 1, 1, generator=gen) * saturation)
    x = x * torch.exp(torch.randn(b, 3, 1, 1, generator=gen) * white_balance)
    x = x * torch.exp(torch.randn(b, 1, 1, 1, generator=gen) * 0.25)  # light
    mean = x.mean((1, 2, 3), keepdim=True)
    x = mean + (x - mean) * torch.exp(torch.randn(b, 1, 1, 1, generator=gen) * 0.2)  # contrast
    if torch.rand(1, generator=gen) < 0.5:
        x = x.flip(3)
    if torch.rand(1, generator=gen) < 0.5:
        x = x.flip(2)
    dy, dx = (int(v) for v in torch.randint(-3, 4, (2,), generator=gen))
    return torch.roll(x, (dy, dx), (2, 3)).clamp(0, 1.2)


def train(x: np.ndarray, car: np.ndarray, weight: np.ndarray, p: dict, log=print):
    """The net trained on (N, S, S, 3) BGR patches, `car` 0/1 and each patch's loss weight."""
    import torch
    import torch.nn.functional as F

    return fit(lambda: occupancy_net(p["width"]), x, torch.from_numpy(car).float(), weight, p, colour_blind,
               F.binary_cross_entropy_with_logits, "occupancy", log)


def fit(make_net, x: np.ndarray, target, weight: np.ndarray, p: dict, augment, loss, name: str, log=print):
    """A net of `make_net()` trained from `p["seed"]` on (N, S, S, 3) BGR patches and their `target`
    (a tensor), each patch changed by `augment(batch, generator)` and its `loss(output, target,
    reduction="none")` weighted by `weight`: `p["epochs"]` epochs of `p["batch"]`, AdamW with a
    one-cycle rate peaking at `p["lr"]`. Both recipes on these patches train by it (the check's
    `train`, `models.car_colour.train`)."""
    import torch

    torch.manual_seed(p["seed"])
    gen = torch.Generator().manual_seed(p["seed"])
    net = make_net()
    steps = max(1, len(x) // p["batch"])
    opt = torch.optim.AdamW(net.parameters(), p["lr"] * 2 / 3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, p["lr"], total_steps=p["epochs"] * steps)
    w = torch.from_numpy(weight).float()
    net.train()
    t0 = time.time()
    for epoch in range(p["epochs"]):
        order, total = torch.randperm(len(x), generator=gen).numpy(), 0.0
        for b in range(steps):
            idx = order[b * p["batch"]:(b + 1) * p["batch"]]
            out = net(augment(torch.from_numpy(model_input(x[idx])), gen))
            batch_loss = (loss(out, target[idx], reduction="none") * w[idx]).mean()
            opt.zero_grad()
            batch_loss.backward()
            opt.step()
            sched.step()
            total += batch_loss.item()
        log(f"{name}: epoch {epoch + 1}/{p['epochs']} loss {total / steps:.4f} ({time.time() - t0:.0f} s)")
    return net.eval()


def export(nets: list, out_onnx: Path, imgsz: int, looks: int = DEFAULTS["looks"]) -> None:
    """ONNX with a dynamic batch: in (B, 3, S, S) RGB 0..1, out (B, 2) P(empty), P(car): each net's
    car log-odds (with `looks` 2, those of the patch and its half-turned copy, the space seen from
    its other end, averaged) turned to P(car) and averaged over the nets (the draws)."""
    import torch

    class Looks(torch.nn.Module):
        def __init__(self, nets):
            super().__init__()
            self.nets = torch.nn.ModuleList(nets)

        def forward(self, x):
            turned = None if looks == 1 else x.flip(2).flip(3)  # flipped once for every net
            logits = torch.stack([net(x) if turned is None else 0.5 * (net(x) + net(turned)) for net in self.nets])
            return torch.stack([torch.sigmoid(-logits).mean(0), torch.sigmoid(logits).mean(0)], 1)

    to_onnx(Looks(nets).eval(), out_onnx, imgsz)


def to_onnx(model, out_onnx: Path, imgsz: int) -> None:
    """`model` (in (B, 3, S, S) RGB 0..1) as ONNX at `out_onnx`, its batch dynamic, as the reader
    feeds it (`vision.evidence.net`: input "images", output "output0")."""
    import torch

    out_onnx.parent.mkdir(parents=True, exist_ok=True)
    # The TorchScript exporter: it needs no further package (the newer one wants onnxscript).
    torch.onnx.export(model, torch.rand(2, 3, imgsz, imgsz), str(out_onnx), input_names=["images"],
                      output_names=["output0"], dynamic_axes={"images": {0: "batch"}, "output0": {0: "batch"}},
                      opset_version=17, dynamo=False)


def quantize(onnx_path: Path, patches_bgr: np.ndarray, seed: int, count: int = QUANTIZE_PATCHES) -> int:
    """The exported check's convolutions turned to 8-bit integers in place (onnxruntime's static
    quantization: QDQ, weights per channel), their ranges measured on `count` of the training
    patches drawn by `seed`.

    Why: in floats the check cost a photo more than the rest of the nets' work; in integers it
    takes about half the time (two CPUs), its P(car) within a few hundredths of the float one,
    and read the same tracks (`docs/ablation.md`). Returns how many patches measured the ranges."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    pick = np.random.default_rng(seed).permutation(len(patches_bgr))[:count]
    batches = ({"images": model_input(patches_bgr[np.sort(pick[i:i + 256])])} for i in range(0, len(pick), 256))

    class Patches(CalibrationDataReader):
        def get_next(self):
            return next(batches, None)

    with tempfile.TemporaryDirectory(prefix="ttr_quantize_") as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(onnx_path), str(pre), skip_symbolic_shape=True)
        # The convolutions only: they are the cost, and the head's probabilities stay exact (summing to one).
        quantize_static(str(pre), str(onnx_path), Patches(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])
    return len(pick)


def leave_out_states(value: str | None, states: list[str]) -> tuple[str, ...]:
    """`--leave-out` as board states: none, or a comma-separated list of the folder's states."""
    if value is None or str(value).lower() == "none":
        return ()
    out = tuple(s.strip() for s in str(value).split(",") if s.strip())
    unknown = [s for s in out if s not in states]
    if unknown:
        raise TtrError(f"--leave-out {value}: no board state {', '.join(unknown)} in the photos (they have "
                       f"{', '.join(states)})")
    return out


def training_patches(real: Path, leave_out: str | None, p: dict, work: Path, copies: Path | None = None) -> dict:
    """The recipe's training patches: `p["count"]` rendered boards (kept under `work` and reused
    while their settings stay) and the patches the reader cuts from `real`'s photos but those of
    the states `leave_out` names; with each patch's label and loss weight, and the seconds taken.
    With `copies` (a folder of `real`'s photos re-lit by `benchmarks/relight.py`), its photos whose
    flash fired count as real photos too, each of its source's state (`flash_fired`)."""
    t0 = time.time()
    renders = work / f"occupancy_renders_{p['seed']}"
    stamp = {k: p[k] for k in ("count", "seed", "imgsz", "side_mm", "varied_share")}
    if not (renders / "done.json").is_file() or json.loads((renders / "done.json").read_text()) != stamp:
        shutil.rmtree(renders, ignore_errors=True)
        render_patches(renders, p["count"], p["seed"], p["imgsz"], p["side_mm"], wider_plastic=True,
                       varied_share=p["varied_share"])
        (renders / "done.json").write_text(json.dumps(stamp))
    x_r, y_r = load_patches([renders], "train")
    seconds = {"render": time.time() - t0}
    t0 = time.time()
    # Cut by the reader with its packaged classifier where there is one (it tells like-printed lanes
    # of a double apart for the labels), else by its colours alone.
    classifier = default_model_paths()[0]
    init = classifier if classifier.is_file() else None
    photos = collect(real, init, work / "real_cache", 0.0, p["imgsz"], p["side_mm"])
    if copies is not None:
        # Cached apart: a copy may carry its source's name (benchmarks/phone_look.py keeps it).
        photos += collect(copies, init, work / "copies_cache" / copies.resolve().name, 0.0, p["imgsz"],
                          p["side_mm"], keep=flash_fired, label="flash copies")
    left_out = leave_out_states(leave_out, sorted({o["state"] for o in photos}))
    kept = [o for o in photos if o["state"] not in left_out]
    x_real, y_real, _, _ = real_split(kept, None)
    # The kept photos' real cars laid on their empty boards (models/paste.py), counted as real.
    x_real, y_real, pasted = with_pasted(kept, None, p.get("paste", 0), p, x_real, y_real)
    seconds["real"] = time.time() - t0
    x = np.concatenate([x_real, x_r])
    car = np.concatenate([y_real > 0, y_r > 0]).astype(np.float32)
    weight = np.concatenate([np.ones(len(x_real)), np.full(len(x_r), p["render_weight"])]).astype(np.float32)
    return {"x": x, "car": car, "weight": weight, "left_out": left_out, "seconds": seconds, "y_render": y_r,
            "y_real": y_real, "photos": photos, "kept": kept, "pasted": pasted}


def flash_fired(photo: Path) -> bool:
    """The photo's file says its flash fired (EXIF; `benchmarks/relight.py` writes it on its copies
    under a flash), as the reader learns it (`vision.read`)."""
    return read_header(photo).flash_fired is True


def recipe_setup(args, no_real: str, defaults: dict, smoke: dict, keys: tuple[str, ...]) -> tuple[dict, Path]:
    """(settings, real folder) of a recipe on the real photos' patches (`ttr train --occupancy`,
    `--car-colour`): `defaults` (with `smoke` over them for --smoke), the options `keys` given
    (each checked by `ttr train`), the seed where one is given and the patch size. Without `--real`
    the one-line error `no_real`; a folder without photos and their truth is one too."""
    if not args.real:
        raise TtrError(no_real)
    p = dict(defaults, **(smoke if args.smoke else {}))
    for key in keys:
        if getattr(args, key, None) is not None:
            p[key] = getattr(args, key)
    real = labelled_folder("--real", args.real)
    if args.seed != 1000:  # the classifier's default seed: these recipes keep their own unless one is given
        p["seed"] = args.seed
    p["imgsz"] = args.imgsz
    return p, real


def make_occupancy(args) -> int:
    """The recipe, as `ttr train --occupancy` asks for it; returns the exit status."""
    p, real = recipe_setup(args, "--occupancy needs --real DIR: the check learns real print and real cars from it",
                           DEFAULTS, SMOKE, ("count", "epochs", "draws", "paste"))
    out_dir = Path(args.out)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="ttr_occupancy_"))
    nets, draws = [], []
    for i in range(p["draws"]):  # each draw its own renders and training order, seeds from seed + i
        draw = dict(p, seed=p["seed"] + i)
        data = training_patches(real, args.leave_out, draw, work)
        seconds, left_out = data["seconds"], data["left_out"]
        t0 = time.time()
        nets.append(train(data["x"], data["car"], data["weight"], draw))
        seconds["train"] = time.time() - t0
        if args.work:  # the trained weights, to export again (another look, another format) without training
            import torch

            torch.save(nets[-1].state_dict(),
                       work / f"{OCCUPANCY_NAME}_{'_'.join(left_out) or 'all'}_{draw['seed']}.pt")
        y_r = data["y_render"]
        draws.append({"seed": draw["seed"], "render_seeds": [draw["seed"], draw["seed"] + p["count"] - 1],
                      "render_patches": {"car": int((y_r > 0).sum()), "empty": int((y_r == 0).sum())},
                      "seconds": {k: round(v, 1) for k, v in seconds.items()}})
        if i == 0:
            x, y_real, photos, kept, pasted = (data["x"], data["y_real"], data["photos"], data["kept"],
                                               data["pasted"])
    export(nets, out_dir / f"{OCCUPANCY_NAME}.onnx", p["imgsz"], p["looks"])
    measured = quantize(out_dir / f"{OCCUPANCY_NAME}.onnx", x, p["seed"])
    config = {
        "classes": list(CLASSES), "imgsz": p["imgsz"], "task": "occupancy", "crop": crop_record(p),
        "model": f"models.occupancy.occupancy_net(width={p['width']}), colour-blind training (see its doc)",
        "quantized": {"format": "onnxruntime static QDQ, the convolutions only: uint8 activations, int8 weights "
                                "per channel",
                      "ranges_from_training_patches": measured},
        "recipe": {k: v for k, v in p.items() if k not in ("imgsz", "side_mm")},
        "renders": {"boards": p["count"], "seeds": draws[0]["render_seeds"], "patches": draws[0]["render_patches"]},
        "draws": draws,
        "real": {**real_record(real, left_out, kept, photos),
                 "patches": {"car": int((y_real > 0).sum()), "empty": int((y_real == 0).sum())},
                 "paste": pasted},
        "seconds": {k: round(sum(d["seconds"][k] for d in draws), 1) for k in draws[0]["seconds"]},
    }
    return write_config(out_dir, OCCUPANCY_NAME, config, args, work, note=f"draws: {len(nets)}; ")


def crop_record(p: dict) -> dict:
    """How a real-photo recipe's patches are cut (its config's `crop`): as the reader cuts the
    classifier's, centred."""
    return {"side_mm": p["side_mm"], "car_seen_height_mm": 0.0, "light": "paper-normalised (vision.spaces)",
            "axis": "space long axis horizontal, centred"}


def real_record(real: Path, left_out: tuple[str, ...], kept: list, photos: list) -> dict:
    """Which real photos a recipe learnt from and which it left out (its config's `real`)."""
    return {"dir": str(real), "left_out": list(left_out), "photos_trained": sorted(o["photo"] for o in kept),
            "photos_left_out": sorted(o["photo"] for o in photos if o["state"] in left_out)}


def write_config(out_dir: Path, name: str, config: dict, args, work: Path, note: str = "") -> int:
    """A recipe's end: `config` with how it was run (smoke, versions, the command) written as
    NAME.json beside NAME.onnx, said with the seconds taken; a work folder of its own removed.
    Returns the exit status."""
    versions = {"python": platform.python_version(), **{m: _version(m) for m in ("torch", "onnx", "numpy")}}
    config = dict(config, smoke=bool(args.smoke), versions=versions,
                  command="ttr train " + " ".join(a for a in sys.argv[1:] if a != "train"))
    (out_dir / f"{name}.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out_dir / (name + '.onnx')} and its .json ({note}"
          + ", ".join(f"{k} {v:.0f} s" for k, v in config["seconds"].items()) + ")")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0

