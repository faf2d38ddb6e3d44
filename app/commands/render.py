"""`ttr render`: synthetic end-of-game photos with exact truth.

Writes DIR/<stem>.jpg, DIR/gt/<stem>.json (the real photos' truth format, so
`eval_real.py DIR` scores a reader on them) and DIR/games/<stem>.json (a `ttr tally` game file).
Photo i is drawn from the seed (S, i) alone, so any photo can be remade on its own; with
`--world varied` its world from (S, i, 1) (`vision.synth.world.random_world`). Which seeds are
kept for testing: docs/data.md.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from app.commands import size_type
from scoring.board import load_board
from scoring.errors import TtrError
from vision.synth import trains
from vision.synth.positions import random_position
from vision.synth.render import default_model, game_dict, render_flat_board, render_photo, truth_dict
from vision.synth.world import LIGHTS, random_world

# Photo sizes when --size is not given: small uploads to 12 MP, landscape and portrait.
SIZES = ((640, 480), (1008, 756), (1280, 960), (1600, 1200), (1920, 1080), (2016, 1512),
         (1200, 1600), (1512, 2016), (3024, 2268), (4032, 3024), (3024, 4032))
SIZE_WEIGHTS = (2, 2, 3, 4, 2, 2, 2, 1, 1, 1, 0.5)
# --backgrounds hostile (not usual): phone photos from 1008x756 to 12 MP.
HOSTILE_SIZES = ((1008, 756), (1280, 960), (1600, 1200), (2016, 1512), (1512, 2016), (3024, 2268),
                 (4032, 3024), (3024, 4032))
HOSTILE_SIZE_WEIGHTS = (3, 2, 3, 2, 1, 1, 1, 0.5)
# Kept here (not imported) so `ttr --help` stays light; test_render_hostile checks it matches.
BACKGROUNDS = ("usual", "hostile", "checked", "stone", "redwood", "table_edge", "tiles")
HANDS = ("careful", "sloppy", "crowded")  # vision.synth.trains.HANDS (kept here for the same reason)
WORLDS = ("usual", "varied")
WORLD_STREAM = 1  # photo i's world is drawn from (seed, i, WORLD_STREAM), apart from its game and camera


def _fraction(text: str) -> float:
    v = float(text)
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return v


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, type=Path, help="output folder (made if missing)")
    parser.add_argument("--count", type=int, default=1, help="number of photos (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed; photo i uses (seed, i) (default 0)")
    parser.add_argument("--size", type=size_type(64, 8192), help="photo size WxH (default: varied, 640x480 to 12 MP)")
    parser.add_argument("--players", type=int, choices=(2, 3, 4, 5), help="players per game (default: varied)")
    parser.add_argument("--empty-fraction", type=_fraction, default=0.0,
                        help="share of photos showing an empty board (default 0)")
    parser.add_argument("--flat", action="store_true",
                        help="the board straight on at 2 px/mm, no camera (the template frame)")
    parser.add_argument("--quality", type=int, help="JPEG quality (default: varied 50-95)")
    parser.add_argument("--start", type=int, default=0, help="index of the first photo (default 0)")
    parser.add_argument("--backgrounds", choices=BACKGROUNDS, default="usual",
                        help="what the board lies on: usual (wood, cloth, floors; the default), hostile "
                             "(checked cloths, dark stone, red-brown wood, a table edge with floor and chair, "
                             "tiles; boxes, card fans and hands over the board's edge) or one hostile kind")
    parser.add_argument("--hands", choices=HANDS, default="careful",
                        help="how the cars are laid: careful (within ~1.5 mm of their spaces' middles; the "
                             "default), sloppy (up to 3.5 mm off, as on real tables) or crowded (a double's "
                             "claimed track pushed 1.5-3.5 mm towards its free lane)")
    parser.add_argument("--world", choices=WORLDS, default="usual",
                        help="usual (one copy of the board, the development board's print, in a phone's "
                             "corrected light; the default) or varied: per photo another copy (each print "
                             "colour's hue, lightness and chroma moved; white, cream, yellowed or faded paper), "
                             "another light (flash with hot spot, fall-off and glare; warm tungsten left partly "
                             "uncorrected; daylight; shade; a window and a lamp; dim and noisy), another phone "
                             "(16:9 and 4:3 frames incl. 1600x900 unless --size; old phones' noise, soft lens, "
                             "JPEG 35-70) and other cars (each player's shade, worn plastic); recorded in the "
                             "truth as \"world\". Seeds 9000-9999 are kept for testing (docs/data.md)")
    parser.add_argument("--fine-detail", action="store_true",
                        help="with --world varied: also the paper's fibre and the phone's own sharpening, the "
                             "detail a sharp phone photo shows a millimetre down (drawn apart: the rest of each "
                             "photo's world is as without)")
    parser.add_argument("--light", choices=LIGHTS,
                        help="with --world varied: every photo in this kind of light (flash: the phone's "
                             "flash with its hot spot and glare on the glossy board), its strength and colour "
                             "still drawn (default: the kind drawn too)")


def run(args) -> int:
    if args.light and args.world != "varied":
        raise TtrError("--light goes with --world varied (the usual world has one light)")
    if args.fine_detail and args.world != "varied":
        raise TtrError("--fine-detail goes with --world varied")
    if args.count < 1:
        raise TtrError("--count must be at least 1")
    if args.quality is not None and not 1 <= args.quality <= 100:
        raise TtrError("--quality must be 1..100")
    if args.flat and args.backgrounds != "usual":
        raise TtrError("--flat draws the board alone, without a table: --backgrounds does not apply")

    out: Path = args.out
    try:
        (out / "gt").mkdir(parents=True, exist_ok=True)
        (out / "games").mkdir(exist_ok=True)
    except OSError as e:
        raise TtrError(f"cannot make output folder {out}: {e.strerror}") from None
    board = load_board()
    usual = args.backgrounds == "usual"
    sizes, weights = (SIZES, SIZE_WEIGHTS) if usual else (HOSTILE_SIZES, HOSTILE_SIZE_WEIGHTS)
    weights = np.array(weights) / sum(weights)
    for i in tqdm(range(args.start, args.start + args.count), desc="rendering", unit="photo",
                  file=sys.stderr, disable=None):
        rng = np.random.default_rng([args.seed, i])
        empty = rng.random() < args.empty_fraction
        claims = {} if empty else random_position(rng, board, args.players)
        stem = f"render_{args.seed}_{i:05d}"
        photo = f"{stem}.jpg"
        world = None
        if args.world == "varied":
            world = random_world([args.seed, i, WORLD_STREAM], default_model().printed_bgr, args.light,
                                 args.fine_detail)
        if args.flat:
            ppm = 2.0
            img = render_flat_board(rng, claims, ppm, hands=trains.HANDS[args.hands], world=world)
            h, w = img.shape[:2]
            corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], float)
            ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, args.quality or 92])
            data = buf.tobytes()
            truth = truth_dict(board, claims, corners, (w, h), photo)
            if world is not None:  # (no light or phone: the board straight on)
                truth["world"] = {k: v for k, v in world.to_dict().items() if k in ("print_run", "cars", "seed")}
            game = game_dict(board, claims)
        else:
            if args.size:
                size = args.size
            elif world is not None:
                size = world.phone.size_wh
            else:
                size = sizes[int(rng.choice(len(sizes), p=weights))]
            r = render_photo(rng, claims, size, quality=args.quality, backgrounds=args.backgrounds,
                             hands=trains.HANDS[args.hands], world=world)
            data, truth, game = r.jpeg, r.truth, r.game
            truth["photo"] = photo
            if not usual:  # (usual truth files stay as they were)
                truth["background"] = {"kind": r.scene.kind, "clutter": list(r.scene.clutter)}
        truth["seed"] = [args.seed, i]
        if args.hands != "careful":  # (careful truth files stay as they were)
            truth["hands"] = args.hands
        (out / photo).write_bytes(data)
        (out / "gt" / f"{stem}.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
        (out / "games" / f"{stem}.json").write_text(json.dumps(game, indent=1) + "\n", encoding="utf-8")
    return 0
