"""`ttr train --out models/ [--teachers K] [--count N] [--epochs E] [--smoke]`: the space classifier's recipe.

The classifier names what is on each space: `empty` or a player colour (SPACE_CLASSES). The reader
relies most on its empty-or-car answer (the shape of a car: a raised body with shaded sides and a
cast shadow, no printed frame or emblem) and names the colour mainly from its own colour evidence
measured against the board's paper, since rendered plastic colours are only near the real ones.

1. Render `count` end-of-game photos with `vision.synth` (random legal positions, seeds
   `seed .. seed+count-1`), flatten each through its true corners moved by a random ~0.5 % of the
   board diagonal (what the locator's error does to real crops), normalise the light and cut every
   space exactly as the reader does (`vision.spaces`). Labels come from the rendered truth.
   The players' plastic is also made brighter at random than the renderer draws it
   (`WiderPlastic`; `--renderer-plastic` turns that off).
2. Build an Ultralytics YOLO classifier from its yaml (`yolo11n-cls.yaml`, no download) and train it
   fully offline on those patches (one board in ten held out for validation); export it to ONNX.
3. Steps 1-2 run `teachers` times (default 6), teacher k on its own boards and from its own seed
   (`seed + 1000 k`): nets of one recipe differ most on a car standing on its own printed colour,
   and on real photos one run reads a print as cars where the next does not. The teachers are then
   distilled into one student net (`models.distill`), which is the model: their steadier averaged
   answer at one net's cost, in a net an eighth of the base width (`models/space_student.yaml`,
   about half a teacher's time per photo; `--student yolo11n-cls.yaml` gives the teachers' own
   layers). `--teachers 1` makes the one net the model.
4. Write `space_classifier.onnx` (dynamic batch) and `space_classifier.json` beside it: classes,
   image size, patch geometry, seeds, epochs, versions, metrics. The reader loads that file, so its
   preprocessing cannot drift from training.

5. With `--real DIR` (a folder of real photos and their truth, e.g. `../shared/real/dev`), the net
   also learns from real cars (`models.real`): every photo of DIR is read by the reader itself and
   the patches it hands its classifier are kept, labelled from DIR/gt/*.json. If a starting net
   is there (`--init`, default the packaged `models/space_classifier.onnx`), it is fine-tuned on those
   patches (augmented: white balance, light, blur, shifts) and on `count` freshly rendered boards
   (default 6, seeds from `seed + 90000`) for `epochs` (default 2), keeping its patch geometry; with
   `--init none` (or none there) the recipe above runs with the real patches added to every
   teacher's training patches. `--leave-out STATE` keeps one board state's photos (A, B, D; the
   empty boards: `empty`) out of training, to read them afterwards; the config names what was left
   out and the top-1 on its patches before and after. Nothing of DIR is written under `--out`.

Needs the training extra (`pip install .[train]`: ultralytics, torch, onnx, onnxslim). Runs on the
CPU (about 35 minutes on two cores with the defaults) or, with `--device 0`, on a CUDA GPU (a few
minutes). A teacher trained on the CPU is repeatable bit for bit; the student is not (the same
distillation run again from the same teachers gave a different net).
"""
from __future__ import annotations

import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from calibration.template import load_template
from models.distill import distil
from models.paste import PasteConfig, fold_pasted
from models.real import collect, finetune, real_photos, sha256, state_of, top1
from models.real import split as real_split
from scoring.board import load_board
from scoring.errors import TtrError
from vision.evidence.net import default_model_paths
from vision.light import light_board
from vision.reading import SPACE_CLASSES as CLASSES  # empty + the five player colours
from vision.rectify import camera_position, flatten
from vision.settings import ReaderSettings
from vision.spaces import CropGeometry, sample_spaces
from vision.synth.phone_look import apply_look, random_look
from vision.synth.positions import random_position
from vision.synth.render import default_model, render_photo
from vision.synth.world import random_world

READ = ReaderSettings()  # the reader's own settings: patches are cut as it cuts them
DEFAULTS = {"count": 24, "epochs": 6, "imgsz": 64, "side_mm": 30.0, "seed": 1000, "photo_wh": (2000, 1500),
            "corner_jitter": 0.005, "batch": 64, "car_seen_height_mm": 0.0, "teachers": 6, "student_epochs": 6,
            "student": "space_student.yaml", "varied_share": 0.4, "look_share": 0.0}
TEACHER_YAML = "yolo11n-cls.yaml"  # a teacher's (and a lone net's) layers: Ultralytics' own, built from the yaml
SMOKE = {"count": 3, "epochs": 1, "photo_wh": (1000, 750), "teachers": 2, "student_epochs": 1}
TEACHER_SEED_STEP = 1000  # teacher k renders boards from seed + 1000 k and trains from that seed
WORLD_PICK, WORLD_STREAM = 3, 1  # a board's world is picked from (seed, 3) and drawn from (seed, 1)
LOOK_PICK, LOOK_STREAM = 5, 4  # a phone's look (`--look-share`): picked from (seed, 5), drawn from (seed, 4)
MIXED_SIZES = ((640, 480), (1008, 756), (1280, 960), (1600, 1200), (1920, 1080), (2016, 1512),
               (1200, 1600), (1512, 2016))
MIXED_WEIGHTS = np.array([1, 2, 2, 3, 2, 3, 1, 2], float)


def architecture_yaml(name: str) -> str:
    """The yaml that builds a net's layers: one of ours in models/ (e.g. space_student.yaml) by its
    path, else the name as Ultralytics knows it (yolo11n-cls.yaml)."""
    ours = Path(__file__).with_name(name)
    return str(ours) if ours.is_file() else name


def render_patches(out_dir: Path, count: int, seed: int, imgsz: int, side_mm: float, photo_wh=(2000, 1500),
                   corner_jitter: float = 0.005, val_every: int = 10, log=print, wider_plastic: bool = False,
                   car_seen_height_mm: float = 0.0, varied_share: float = 0.0, look_share: float = 0.0) -> dict:
    """Render boards and write their space patches as out_dir/{train,val}/<class>/*.png.

    Each patch is centred on its space, or with `car_seen_height_mm` > 0 where a car that high on it
    is seen (`vision.spaces.car_offsets_px`, the camera estimated from the jittered corners as the
    reader estimates it).

    Returns counts per split and class.
    """

    board = load_board()
    template = load_template()
    quads_mm, tids, idx = template.all_spaces()
    geometry = CropGeometry(imgsz, side_mm)
    counts: dict = {}
    for split in ("train", "val"):
        for c in CLASSES:
            (out_dir / split / c).mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    # Ultralytics shows each epoch; the boards rendered before it get a bar (stderr, a terminal only).
    for i in tqdm(range(count), desc=f"rendering boards (seed {seed})", unit="board", file=sys.stderr, disable=None):
        s = seed + i
        rng = np.random.default_rng(s)
        claims = random_position(rng, board)
        wh = photo_wh
        if photo_wh == "mixed":  # phone photos as they arrive: small uploads to full frames (decoded ~2000 px)
            pick = np.random.default_rng(s + 2_000_000)
            wh = MIXED_SIZES[int(pick.choice(len(MIXED_SIZES), p=MIXED_WEIGHTS / MIXED_WEIGHTS.sum()))]
        # Another home's copy of the board, light, phone and cars (vision.synth.world), for a share
        # of the boards: the net learns a car from its print on other prints and in other light.
        world = None
        if np.random.default_rng([s, WORLD_PICK]).random() < varied_share:
            world = random_world([s, WORLD_STREAM], default_model().printed_bgr)
            wh = world.phone.size_wh
        photo = render_photo(rng, claims, wh, plastic=WiderPlastic(s + 1_000_000) if wider_plastic else None,
                             world=world)
        image = photo.image_bgr
        # A share finished by another phone's processing (vivid colours, HDR), drawn apart from the
        # rest, so the boards themselves are those of a run without it.
        if np.random.default_rng([s, LOOK_PICK]).random() < look_share:
            image = apply_look(image, random_look(np.random.default_rng([s, LOOK_STREAM])))
        owner = {tid: colour for colour, ids in claims.items() for tid in ids}
        corners = np.asarray(photo.corners_xy, dtype=float)
        diag = np.linalg.norm(corners[0] - corners[2])
        corners = corners + rng.normal(0.0, corner_jitter * diag / np.sqrt(2), size=(4, 2))
        flat = flatten(image, corners, px_per_mm=READ.px_per_mm)
        # Cut exactly as the reader cuts (vision.light.light_board, vision.spaces.sample_spaces).
        lit = light_board(flat, quads_mm, READ.px_per_mm, READ.light)
        camera = camera_position(corners, image.shape[1::-1])
        patches = sample_spaces(lit, geometry, tids, idx, quads_mm, camera, None, car_seen_height_mm, READ.sample).net_patches
        split = "val" if (i % val_every) == val_every - 1 else "train"
        for k in range(len(tids)):
            label = owner.get(int(tids[k])) or "empty"
            cv2.imwrite(str(out_dir / split / label / f"b{s}_t{tids[k]}_s{idx[k]}.png"), patches[k])
            counts.setdefault(split, {}).setdefault(label, 0)
            counts[split][label] += 1
        if log and (i + 1) % max(1, count // 10) == 0:
            log(f"rendered {i + 1}/{count} boards ({time.time() - t0:.0f} s)")
    if not counts.get("val"):
        # Tiny runs: validate on the train patches (Ultralytics needs a val split).
        shutil.rmtree(out_dir / "val")
        shutil.copytree(out_dir / "train", out_dir / "val")
    return counts


class WiderPlastic:
    """Domain randomisation of the players' plastic while rendering training boards.

    The renderer draws each game's plastic near one shade per colour, and darker than real plastic
    looks next to the paper (a real yellow car is nearly as bright as the paper).
    The net must not learn one rendered shade as "the" colour, so every game's plastic is further
    brightened or darkened at random: passed to the renderer as its `plastic`.
    """

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def __call__(self, colours: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        rng = self.rng
        for p, c in colours.items():
            if p != "black":  # the renderer's black already spans dark greys
                lift = rng.uniform(0.0, 0.25)  # towards white: brighter, less saturated
                colours[p] = np.clip(c * rng.uniform(1.0, 1.3) + (255.0 - c) * lift, 8, 250)
        return colours


def _offline_env(work: Path) -> None:
    cfg = work / "yolo_config"
    cfg.mkdir(parents=True, exist_ok=True)
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_CONFIG_DIR"] = str(cfg)
    os.environ["YOLO_AUTOINSTALL"] = "false"


def train_and_export(data_dir: Path, work: Path, out_dir: Path, epochs: int, imgsz: int, batch: int,
                     seed: int, device: str = "cpu") -> dict:
    """Train yolo11n-cls from its yaml on data_dir, export ONNX to out_dir. Returns metrics.

    On the CPU the data loads in the main process, so a run is repeatable bit for bit; on a GPU
    (`device` "0", ...) loader workers keep it fed, and runs differ a little."""
    _offline_env(work)
    try:
        from ultralytics import YOLO, settings
    except ImportError:
        raise TtrError("training needs the train extra: pip install '.[train]' (ultralytics, torch)") from None
    settings.update({"sync": False})
    model = YOLO(TEACHER_YAML)
    # No hue shift (the colour is part of the answer); patches may be upside down (tracks run both ways).
    res = model.train(data=str(data_dir.resolve()), epochs=epochs, imgsz=imgsz, batch=batch, device=device,
                      workers=0 if device == "cpu" else 4, project=str((work / "runs").resolve()), name="cls",
                      exist_ok=True,
                      plots=False, amp=False, seed=seed, deterministic=True, warmup_epochs=0,
                      hsv_h=0.0, hsv_s=0.35, hsv_v=0.35, fliplr=0.5, flipud=0.5, scale=0.1, erasing=0.0,
                      auto_augment=None, pretrained=False, verbose=False, patience=100)
    metrics = {}
    try:
        metrics = {"top1": float(res.top1), "top5": float(res.top5)}
    except Exception:  # noqa: BLE001 - metrics are informative only
        pass
    onnx_path = Path(model.export(format="onnx", dynamic=True, imgsz=imgsz, simplify=True, verbose=False))
    out_dir.mkdir(parents=True, exist_ok=True)
    dest = out_dir / "space_classifier.onnx"
    shutil.copyfile(onnx_path, dest)
    names = model.names if isinstance(model.names, dict) else dict(enumerate(model.names))
    metrics["classes"] = [names[i] for i in range(len(names))]
    return metrics


def _config(p: dict, args, classes, counts, metrics: dict, seconds: dict, seeds: list[int]) -> dict:
    """The exact training config saved beside the weights (see models/README.md)."""
    return {
        "classes": list(classes),
        "imgsz": p["imgsz"],
        "crop": {"side_mm": p["side_mm"], "px_per_mm": 2.0, "light": "paper-normalised (vision.spaces)",
                 "axis": "space long axis horizontal, centred",
                 "car_seen_height_mm": p["car_seen_height_mm"]},
        "input": "RGB float 0..1, NCHW",
        "model": f"{TEACHER_YAML} (from scratch)",
        "architecture": TEACHER_YAML,
        "task": "space classes",
        "render": {"count": p["count"], "seeds": [[s, s + p["count"] - 1] for s in seeds],
                   "photo_wh": p["photo_wh"] if p["photo_wh"] == "mixed" else list(p["photo_wh"]),
                   "corner_jitter": p["corner_jitter"],
                   "wider_plastic": not args.renderer_plastic, "varied_share": p["varied_share"],
                   "look_share": p["look_share"]},
        "epochs": p["epochs"], "batch": p["batch"], "smoke": bool(args.smoke), "device": args.device,
        "patches": counts, "metrics": metrics,
        "versions": {"ultralytics": _version("ultralytics"), "torch": _version("torch"),
                     "python": platform.python_version()},
        "seconds": seconds,
        "command": "ttr train " + " ".join(a for a in sys.argv[1:] if a != "train"),
    }


def _version(package: str) -> str | None:
    """The installed version of a module: its distribution's, else the module's own `__version__`
    (Ultralytics installs as `ultralytics` or as `ultralytics-opencv-headless`)."""
    try:
        return version(package)
    except PackageNotFoundError:
        try:
            return str(importlib.import_module(package).__version__)
        except (ImportError, AttributeError):
            return None


REAL_DEFAULTS = {"count": 6, "epochs": 2}  # a fine-tune on real patches: fresh rendered boards, epochs
REAL_SMOKE = {"count": 1, "epochs": 1}
REAL_RENDER_SEED_OFFSET = 90000  # its rendered boards: seeds none of the teachers drew
PASTE_SEED_OFFSET = 95000  # its pasted cars (`--paste N`)


def _real_setup(args):
    """--real / --leave-out / --init checked: (real dir or None, leave-out state or None, init ONNX
    or None)."""
    leave_out = None if str(args.leave_out).lower() == "none" else args.leave_out
    if not args.real:
        if leave_out or args.init:
            raise TtrError("--leave-out and --init go with --real DIR")
        return None, None, None

    real = Path(args.real)
    if not real.is_dir() or not (real / "gt").is_dir():
        raise TtrError(f"--real {args.real}: not a folder with photos and a gt/ folder of their truth")
    photos = real_photos(real)
    if not photos:
        raise TtrError(f"--real {args.real}: no photo there has its truth in gt/")
    states = sorted({state_of(t) for _, t in photos})
    if leave_out and leave_out not in states:
        raise TtrError(f"--leave-out {leave_out}: no such board state in {args.real} (it has {', '.join(states)})")
    init = None
    if args.init is None or args.init.lower() != "none":
        init = Path(args.init) if args.init else default_model_paths()[0]
        if not init.is_file() or not init.with_suffix(".json").is_file():
            if args.init:
                raise TtrError(f"--init {args.init}: no ONNX model with its .json config beside it")
            init = None  # no packaged model: train from the yaml with the real patches added
    return real, leave_out, init


def _real_config(real, leave_out, photos, x_train, y_train, x_held, y_held) -> dict:
    by_class = lambda y: {c: int((y == k).sum()) for k, c in enumerate(CLASSES)}  # noqa: E731
    return {"dir": str(real), "leave_out": leave_out,
            "photos_trained": sorted(o["photo"] for o in photos if not (leave_out and o["state"] == leave_out)),
            "photos_left_out": sorted(o["photo"] for o in photos if leave_out and o["state"] == leave_out),
            "patches_trained": by_class(y_train), "patches_left_out": by_class(y_held),
            "patches_unsure_dropped": int(sum((o["labels"] < 0).sum() for o in photos)),
            "cut_by": "vision.read.Reader.read_path (its classifier's first look), see models/real.py"}


def _finetune_run(args, real: Path, leave_out, init: Path) -> int:
    """`ttr train --real DIR` with a starting net: fine-tune it on real and fresh rendered patches."""

    p = dict(DEFAULTS)
    p.update(REAL_SMOKE if args.smoke else REAL_DEFAULTS)
    for key in ("count", "epochs"):  # each at least 1 (`ttr train` refuses less)
        if getattr(args, key) is not None:
            p[key] = getattr(args, key)
    init_cfg = json.loads(init.with_suffix(".json").read_text(encoding="utf-8"))
    arch = init_cfg.get("architecture", TEACHER_YAML)  # configs before it was written: all yolo11n-cls
    # The fine-tuned net keeps its starting net's input: patch size, side and parallax height.
    p["imgsz"], p["side_mm"] = int(init_cfg["imgsz"]), float(init_cfg["crop"]["side_mm"])
    p["car_seen_height_mm"] = float(init_cfg["crop"].get("car_seen_height_mm", 0.0))
    if args.imgsz != DEFAULTS["imgsz"] and args.imgsz != p["imgsz"]:
        raise TtrError(f"--imgsz {args.imgsz}: a fine-tune keeps its starting net's {p['imgsz']}")
    if args.car_seen_height and args.car_seen_height != p["car_seen_height_mm"]:
        raise TtrError(f"--car-seen-height {args.car_seen_height}: a fine-tune keeps its starting net's "
                       f"{p['car_seen_height_mm']} mm")
    p["seed"] = args.seed
    if args.photo_size:
        p["photo_wh"] = args.photo_size
    if args.smoke:
        p["photo_wh"] = SMOKE["photo_wh"]
    if getattr(args, "varied_share", None) is not None:
        p["varied_share"] = args.varied_share
    out_dir = Path(args.out)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="ttr_train_"))
    work.mkdir(parents=True, exist_ok=True)
    start = work / "init"  # a copy: --out may be the starting net's own folder
    start.mkdir(exist_ok=True)
    shutil.copyfile(init, start / "space_classifier.onnx")
    shutil.copyfile(init.with_suffix(".json"), start / "space_classifier.json")
    init_copy = start / "space_classifier.onnx"
    seconds: dict = {}
    t0 = time.time()
    photos = collect(real, init_copy, work / "real_cache", p["car_seen_height_mm"])
    x_train, y_train, x_held, y_held = real_split(photos, leave_out)
    seconds["real_patches"] = time.time() - t0
    t0 = time.time()
    x_ft, y_ft, pasted = with_pasted(photos, leave_out, int(getattr(args, "paste", 0) or 0), p, x_train, y_train)
    seconds["paste"] = time.time() - t0
    t0 = time.time()
    render_seed = p["seed"] + REAL_RENDER_SEED_OFFSET
    render_dir = work / "render"
    if render_dir.exists():
        shutil.rmtree(render_dir)
    counts = {"train": {}}
    if p["count"] > 0:
        counts = render_patches(render_dir, p["count"], render_seed, p["imgsz"], p["side_mm"], p["photo_wh"],
                                p["corner_jitter"], wider_plastic=not args.renderer_plastic,
                                car_seen_height_mm=p["car_seen_height_mm"], varied_share=p["varied_share"])
    seconds["render"] = time.time() - t0
    out_dir.mkdir(parents=True, exist_ok=True)
    ft = finetune(init_copy, x_ft, y_ft, [render_dir] if p["count"] > 0 else [],
                  out_dir / "space_classifier.onnx", work / "finetune", p["epochs"], p["batch"], p["seed"],
                  device=args.device, model_yaml=architecture_yaml(arch))
    seconds["finetune"] = ft.pop("seconds")
    config = _config(p, args, CLASSES, counts, {}, {}, [render_seed])
    config["model"] = f"{arch}, fine-tuned from the starting net's weights (fused, as exported)"
    config["architecture"] = arch
    config["init"] = {"onnx": str(init), "sha256": sha256(init), "command": init_cfg.get("command"),
                      "teachers": init_cfg.get("teachers")}
    config["real"] = _real_config(real, leave_out, photos, x_train, y_train, x_held, y_held)
    config["finetune"] = ft
    if pasted is not None:
        config["real"]["paste"] = pasted
    (out_dir / "space_classifier.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    config["metrics"] = {"real_train_top1": top1(out_dir / "space_classifier.onnx", x_train, y_train),
                         "real_train_top1_init": top1(init_copy, x_train, y_train),
                         "real_left_out_top1": top1(out_dir / "space_classifier.onnx", x_held, y_held),
                         "real_left_out_top1_init": top1(init_copy, x_held, y_held)}
    config["seconds"] = {k: round(v, 1) for k, v in seconds.items()}
    (out_dir / "space_classifier.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    m = config["metrics"]
    held = (f", left out ({leave_out}) top1 {m['real_left_out_top1']:.3f} (start {m['real_left_out_top1_init']:.3f})"
            if m["real_left_out_top1"] is not None else "")
    print(f"wrote {out_dir / 'space_classifier.onnx'} and space_classifier.json (fine-tuned from {init}; real "
          f"train top1 {m['real_train_top1']:.3f} (start {m['real_train_top1_init']:.3f}){held})")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def with_pasted(photos, leave_out, n: int, p: dict, x_train, y_train):
    """Real patches (`x_train`, `y_train`, of `photos`) with `n` pasted ones added (`--paste N`,
    models/paste.py: the cars of the photos not of state `leave_out` on their empty boards, never a
    left-out photo's pixels), and what was pasted for the record (None without any). Both recipes
    use it: the classifier's fine-tune and the car-or-print check (`models.occupancy`)."""
    if n <= 0:
        return x_train, y_train, None
    quads_mm, track_ids, _ = load_template().all_spaces()
    board = load_board()
    printed = [board.tracks[int(t)].color for t in track_ids]
    cfg = PasteConfig()
    ps, used = fold_pasted(photos, leave_out, n, quads_mm, track_ids, printed, CLASSES, p["side_mm"],
                           seed=p["seed"] + PASTE_SEED_OFFSET, cfg=cfg, double_ids=board.double_ids)
    own = int(sum(printed[k2] == CLASSES[c] for (_, k2), c in zip(ps.target, ps.y) if c))
    cars = {tuple(int(v) for v in s) for s, c in zip(ps.source, ps.y) if c}
    beside = int(sum(1 for s, c in zip(ps.source, ps.y) if not c and s[0] >= 0))
    print(f"paste: {int((ps.y > 0).sum())} real cars laid on empty boards ({own} on print of their own colour) "
          f"and {int((ps.y == 0).sum())} of those boards' patches without them ({beside} a double's other lane "
          f"beside the car), from {len(cars)} cars of "
          f"{len({s[0] for s in cars})} photos")
    record = {"patches": {c: int((ps.y == k).sum()) for k, c in enumerate(CLASSES)}, "on_own_print": own,
              "other_lane_beside_a_car": beside,
              "cars": len(cars), "car_photos": sorted({used[s[0]]["photo"] for s in cars}),
              "background_photos": sorted({used[int(t[0])]["photo"] for t in ps.target}),
              "config": {k: v for k, v in cfg.__dict__.items()}, "seed": p["seed"] + PASTE_SEED_OFFSET}
    if not len(ps.y):
        return x_train, y_train, record
    return np.concatenate([x_train, ps.x]), np.concatenate([y_train, ps.y]), record


def _add_real_patches(data_dir: Path, x: np.ndarray, y: np.ndarray) -> None:
    """Write real patches into a teacher's training folder (`--real` without a starting net)."""

    for k, (patch, label) in enumerate(zip(x, y)):
        cv2.imwrite(str(data_dir / "train" / CLASSES[int(label)] / f"real{k:05d}.png"), patch)


def make_model(args) -> int:
    """The recipe, as `ttr train` (app/commands/train.py) asks for it; returns the exit status."""
    real, leave_out, init = _real_setup(args)
    if getattr(args, "paste", 0) and (real is None or init is None):
        raise TtrError("--paste N goes with --real DIR and a starting net (not --init none), or with --occupancy")
    if real is not None and init is not None:
        return _finetune_run(args, real, leave_out, init)
    p = dict(DEFAULTS)
    if args.smoke:
        p.update(SMOKE)
    for key in ("count", "epochs", "teachers", "student_epochs", "student"):  # counts at least 1 (`ttr train`)
        if getattr(args, key) is not None:
            p[key] = getattr(args, key)
    p["imgsz"], p["seed"] = args.imgsz, args.seed
    p["car_seen_height_mm"] = args.car_seen_height
    if getattr(args, "varied_share", None) is not None:
        p["varied_share"] = args.varied_share
    if getattr(args, "look_share", None) is not None:
        p["look_share"] = args.look_share
    if args.photo_size:
        p["photo_wh"] = args.photo_size
    out_dir = Path(args.out)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="ttr_train_"))
    seconds: dict = {"render": 0.0, "train_export": 0.0}
    # Each teacher renders boards of its own (seeds TEACHER_SEED_STEP apart) and trains from its seed.
    seeds = [p["seed"] + TEACHER_SEED_STEP * k for k in range(p["teachers"])]
    alone = len(seeds) == 1
    teachers, patch_dirs, counts, top1 = [], [], {}, []
    for k, seed in enumerate(seeds):
        base = work if alone else work / f"teacher{k}"
        data_dir = base / "patches"
        if data_dir.exists():
            shutil.rmtree(data_dir)
        t0 = time.time()
        c = render_patches(data_dir, p["count"], seed, p["imgsz"], p["side_mm"], p["photo_wh"], p["corner_jitter"],
                           wider_plastic=not args.renderer_plastic, car_seen_height_mm=p["car_seen_height_mm"],
                           varied_share=p["varied_share"], look_share=p["look_share"])
        seconds["render"] += time.time() - t0
        if real is not None:
            if k == 0:
                photos = collect(real, None, work / "real_cache", p["car_seen_height_mm"], p["imgsz"], p["side_mm"])
                x_real, y_real, x_held, y_held = real_split(photos, leave_out)
            _add_real_patches(data_dir, x_real, y_real)
            c["train_real"] = {name: int((y_real == i).sum()) for i, name in enumerate(CLASSES)}
        for split, by_class in c.items():
            for name, n in by_class.items():
                counts.setdefault(split, {}).setdefault(name, 0)
                counts[split][name] += n
        t0 = time.time()
        model_dir = out_dir if alone else base / "model"
        metrics = train_and_export(data_dir, base, model_dir, p["epochs"], p["imgsz"], p["batch"], seed, args.device)
        seconds["train_export"] += time.time() - t0
        classes = metrics["classes"]
        top1.append(metrics.get("top1", float("nan")))
        if not alone:  # the student's targets load each teacher with its config (the model's is written below)
            (model_dir / "space_classifier.json").write_text(json.dumps(_config(
                p, args, classes, c, {"top1": top1[-1]}, {}, [seed]), indent=1) + "\n", encoding="utf-8")
        teachers.append(model_dir / "space_classifier.onnx")
        patch_dirs.append(data_dir)
        print(f"{'model' if alone else f'teacher {k + 1}/{len(seeds)}'} (seed {seed}): top1 {top1[-1]:.3f}")
    if alone:
        final = {"top1": top1[0]}
    else:
        t0 = time.time()
        student = distil(teachers, patch_dirs, out_dir / "space_classifier.onnx", work / "student",
                         p["student_epochs"], p["batch"], p["seed"], device=args.device,
                         model_yaml=architecture_yaml(p["student"]))
        seconds["distil"] = time.time() - t0
        classes = CLASSES
        final = {"top1": student["top1"], "teachers_top1": top1, "teachers_ensemble_top1": student["teachers_top1"],
                 "student_agreement_with_teachers": student["agreement_with_teachers"]}
    seconds = {k: round(v, 1) for k, v in seconds.items()}
    config = _config(p, args, classes, counts, final, seconds, seeds)
    config["teachers"] = len(seeds)
    if real is not None:
        config["real"] = _real_config(real, leave_out, photos, x_real, y_real, x_held, y_held)
    if not alone:
        config["model"] = f"{p['student']}, distilled from {len(seeds)} {TEACHER_YAML} teachers"
        config["architecture"] = p["student"]
        config["student"] = {"epochs": p["student_epochs"], "label_weight": student["label_weight"],
                             "targets": "mean of the teachers' answers on each patch and its half-turned copy"}
    (out_dir / "space_classifier.json").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out_dir / 'space_classifier.onnx'} and space_classifier.json ("
          + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()) + f", top1 {final['top1']:.3f})")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0
