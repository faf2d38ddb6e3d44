"""`ttr train --out models/ [--teachers K] [--count N] [--epochs E] [--smoke] [--real DIR]`: make the
space classifier by its recipe (`models/train.py`; needs the training extra); with `--occupancy --real
DIR`, the car-or-print check (`models/occupancy.py`).
"""
from __future__ import annotations

from app.commands import size_type
from models.car_colour import make_car_colour
from models.occupancy import DEFAULTS as OCCUPANCY_DEFAULTS
from models.occupancy import make_occupancy
from models.train import DEFAULTS, make_model
from scoring.errors import TtrError


def add_arguments(parser):
    parser.add_argument("--out", default="models", metavar="DIR", help="where to write the ONNX model and its config")
    parser.add_argument("--count", type=int, help=f"boards each teacher renders (default {DEFAULTS['count']})")
    parser.add_argument("--epochs", type=int, help=f"training epochs of each teacher (default {DEFAULTS['epochs']})")
    parser.add_argument("--teachers", type=int, metavar="K",
                        help="nets trained from different seeds and distilled into one "
                             f"(default {DEFAULTS['teachers']}; 1: the one net is the model)")
    parser.add_argument("--student-epochs", type=int, metavar="E",
                        help=f"epochs of the distilled net (default {DEFAULTS['student_epochs']})")
    parser.add_argument("--student", metavar="YAML",
                        help=f"the distilled net's layers: a yaml in models/ or one Ultralytics knows "
                             f"(default {DEFAULTS['student']}, narrower and faster; yolo11n-cls.yaml: the teachers' own)")
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"], help="first render and training seed")
    parser.add_argument("--imgsz", type=int, default=DEFAULTS["imgsz"], help="patch side in pixels")
    parser.add_argument("--work", metavar="DIR", help="keep the rendered patches and the run here")
    parser.add_argument("--car-seen-height", type=float, default=DEFAULTS["car_seen_height_mm"], metavar="MM",
                        help="cut each patch where a car this high is seen (camera parallax); 0: at the space")
    parser.add_argument("--photo-size", default=None, metavar="WxH|mixed", type=size_type(320, 8000, "mixed"),
                        help="size of the rendered photos (default 2000x1500; mixed: 640x480 to 2016x1512)")
    parser.add_argument("--varied-share", type=float, metavar="F",
                        help="share of the boards rendered in another home's world: another copy of the board, "
                             "light, phone and cars (`ttr render --world varied`; default "
                             f"{DEFAULTS['varied_share']}); the seeds stay below the test seeds 9000-9999")
    parser.add_argument("--look-share", type=float, metavar="F",
                        help="share of the boards finished by another phone's processing: vivid colours, HDR "
                             f"(vision/synth/phone_look.py; default {DEFAULTS['look_share']})")
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run that checks the recipe")
    parser.add_argument("--device", default="cpu", metavar="DEV",
                        help="cpu (default, the committed model's) or a CUDA device such as 0")
    parser.add_argument("--renderer-plastic", action="store_true",
                        help="keep the renderer's plastic colours (no brighter plastic, see _WiderPlastic)")
    parser.add_argument("--real", metavar="DIR",
                        help="also learn from the real photos in DIR (with DIR/gt/*.json), see models/real.py")
    parser.add_argument("--leave-out", metavar="STATE", default="none",
                        help="with --real: leave that board state's photos out of training (A, B, D, empty; "
                             "default none; with --occupancy several, comma-separated: D,D2)")
    parser.add_argument("--occupancy", action="store_true",
                        help="make the car-or-print check instead (models/occupancy.py; needs --real DIR): "
                             "space_occupancy.onnx and .json under --out")
    parser.add_argument("--car-colour", action="store_true",
                        help="make the car-colour net instead (models/car_colour.py; needs --real DIR): "
                             "space_car_colour.onnx and .json under --out")
    parser.add_argument("--copies", metavar="DIR",
                        help="with --car-colour: also learn from the photos of DIR whose flash fired, copies of "
                             "--real's photos re-lit by benchmarks/relight.py (each left out with its source's state)")
    parser.add_argument("--draws", type=int, metavar="N",
                        help="with --occupancy: nets trained from seeds SEED, SEED+1, ... whose answers the check "
                             f"averages (default {OCCUPANCY_DEFAULTS['draws']})")
    parser.add_argument("--init", metavar="ONNX|none",
                        help="with --real: the net to fine-tune (default: the packaged model; none: train "
                             "from the yaml with the real patches added)")
    parser.add_argument("--paste", metavar="N", type=int,
                        help="with --real: also N patches of the training photos' real cars laid on their empty "
                             "boards (models/paste.py); the classifier's fine-tune (with a starting net) "
                             f"default 0: none, the check's default {OCCUPANCY_DEFAULTS['paste']}")




def run(args) -> int:
    for key in ("count", "epochs", "teachers", "student_epochs", "draws"):
        if getattr(args, key) is not None and getattr(args, key) < 1:
            raise TtrError(f"--{key.replace('_', '-')} must be at least 1")
    if args.paste is not None and args.paste < 0:
        raise TtrError("--paste must be at least 0")
    if args.draws is not None and not args.occupancy:
        raise TtrError("--draws N goes with --occupancy (the space classifier's nets are --teachers K)")
    if args.copies is not None and not args.car_colour:
        raise TtrError("--copies DIR goes with --car-colour")
    if args.car_colour:
        if args.occupancy:
            raise TtrError("--car-colour and --occupancy make two models: one at a time")
        return make_car_colour(args)
    return make_occupancy(args) if args.occupancy else make_model(args)
