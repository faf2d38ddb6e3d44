"""One synthetic photo of a played board, with its exact truth.

`render_flat_board(rng, claims)` -> the board straight on (template frame) with cars;
`render_photo(rng, claims, size_wh)` -> `RenderedPhoto`: the board photographed on a table, the
board's corners in the photo, the truth (the format of the real photos' gt/*.json) and the game
file for `ttr tally`; `photograph_again(rng, photo, corners)`: a photo's board (a real one) taken
off its table by its corners and photographed again on one of ours. Everything random comes from
`rng`, so a seed gives the same photo.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from scoring.board import Board, load_board
from scoring.game import Game, PlayerClaims
from scoring.rules import TICKET_VALUES
from vision.rectify import flatten, photo_px_per_mm
from vision.synth import board_art
from vision.synth.board_art import BOARD_MM, N_LOOKS, PAPER_LEVEL, BoardModel
from vision.synth.camera import Camera, Scene, jpeg, photograph_scene, random_camera, with_flash_tag
from vision.synth.trains import CAREFUL, Hands, Plastic, draw_cars, draw_markers, place_cars, place_markers
from vision.synth.world import World, paper_grain, paper_of, reprint

# Flat-board scales kept in the art cache; a photo draws at the smallest one as sharp as it needs.
PX_PER_MM_STEPS = (1.0, 1.5, 2.0, 3.0, 4.0)
# How bright the middle of a claimed space (where `benchmarks/measure_colours.py` measured the real
# cars) comes out against the plastic its car is painted in: the roof's lit crown, its recessed
# panel and lines, and the dark side a phone's camera sees there (the median over flat renders
# under `random_camera` positions; 0.93 seen from straight above).
SEEN_PER_PLASTIC = 0.88
# Photo sizes `photograph_again` draws, as phones and messaging apps send them.
PHOTO_SIZES = ((4032, 3024), (2016, 1512), (1600, 1200), (1008, 756))


@dataclass
class RenderedPhoto:
    image_bgr: np.ndarray  # the photo as decoded from its JPEG
    corners_xy: np.ndarray  # (4, 2) board corners in the photo, board order TL, TR, BR, BL
    truth: dict  # gt/*.json format
    game: dict  # ttr tally game file
    jpeg: bytes  # the encoded photo (write these bytes; re-encoding would compress twice)
    scene: Scene | None = None  # what the board lies on and what lies around it


_MODEL: BoardModel | None = None


def default_model() -> BoardModel:
    """The shipped template as a BoardModel (loaded once)."""
    global _MODEL
    if _MODEL is None:
        _MODEL = board_art.board_model()
    return _MODEL


def _printed_board(rng: np.random.Generator, model: BoardModel, px_per_mm: float) -> np.ndarray:
    """A cached print run, with this copy's fading and ink drift (a colour matrix near identity)."""
    key = board_art.register_model(model)
    img = board_art.board_image(int(rng.integers(N_LOOKS)), float(px_per_mm), key)
    m = np.eye(3) * rng.uniform(0.92, 1.06) + rng.normal(0, 0.012, (3, 3))
    offset = rng.normal(0, 3, 3)
    return cv2.transform(img, np.column_stack([m, offset]).astype(np.float32))


def _light(rng: np.random.Generator) -> np.ndarray:
    az = rng.uniform(0, 2 * np.pi)
    elev = np.radians(rng.uniform(35, 85))
    return np.array([np.cos(az) * np.cos(elev), np.sin(az) * np.cos(elev), np.sin(elev)])


def render_flat_board(rng: np.random.Generator, claims: dict[str, list[int]], px_per_mm: float = 2.0,
                      model: BoardModel | None = None, camera_mm: np.ndarray | None = None,
                      plastic: Plastic | None = None, hands: Hands = CAREFUL, world: World | None = None) -> np.ndarray:
    """The board seen straight on, with cars: BGR uint8, round(795 * px_per_mm) x round(525 * px_per_mm),
    pixel (i, j) at (j / px_per_mm, i / px_per_mm) mm. `camera_mm` (x, y, height) sets the cars'
    parallax; by default where a phone photographing the board would stand. `world`: another copy
    of the board (its print run) and other cars (their plastic and wear), and a flash lights the
    cars from the camera; the draws from `rng` stay those of the usual world."""
    model = model or default_model()
    img = _printed_board(rng, model, px_per_mm)
    if world is not None:
        img = reprint(img, list(model.spaces), list(model.track_colors), px_per_mm, world.print_run)
        # The world's plastic is what the reader sees once the paper is evened out to PAPER_LEVEL
        # (as measured on the real cars): painted relative to this copy's paper.
        paper = paper_of(img, np.concatenate(model.spaces) * px_per_mm - 0.5, px_per_mm)
        plastic = _world_plastic(world, plastic, paper)
        if world.print_run.grain > 0:  # the paper's fibre, under the print's inks and the cars
            img = np.clip(img * paper_grain(img.shape[:2], px_per_mm, world.print_run.grain, [*world.seed, 0]),
                          0, 255).astype(np.uint8)
    if camera_mm is None:  # where a phone would stand (cars then look as in a flattened photo)
        camera_mm = random_camera(rng, (1600, 1200)).position_mm
    light = _light(rng)
    if world is not None and world.light.kind == "flash":  # the light comes from the camera
        up = np.array([camera_mm[0] - BOARD_MM[0] / 2, camera_mm[1] - BOARD_MM[1] / 2, camera_mm[2]])
        light = up / np.linalg.norm(up)
    cars = place_cars(rng, model, claims, plastic, hands)
    img = draw_cars(img, px_per_mm, cars, camera_mm, light, rng, shadow_strength=float(rng.uniform(0.3, 0.6)),
                    worn=world.cars.worn if world is not None else 0.0)
    if claims and rng.random() < 0.8:  # score markers left on the score track
        lengths = [len(s) for s in model.spaces]
        img = draw_markers(img, px_per_mm, place_markers(rng, model, claims, lengths, plastic), camera_mm, light)
    return img


def _world_plastic(world: World, plastic: Plastic | None, paper_bgr: np.ndarray) -> Plastic:
    """The world's plastic for every player on a board whose paper is `paper_bgr`, then `plastic`'s
    change of it, if any."""
    shades = {p: np.clip(bgr * paper_bgr / PAPER_LEVEL / SEEN_PER_PLASTIC, 8, 250)
              for p, bgr in world.cars.plastic_bgr().items()}

    def change(colours: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = {p: shades[p] for p in colours}
        return plastic(out) if plastic is not None else out

    return change


def truth_dict(board: Board, claims: dict[str, list[int]], corners_xy: np.ndarray, size_wh,
               photo: str = "render.jpg") -> dict:
    """The truth in the real photos' gt/*.json format."""
    owner = {tid: player for player, ids in claims.items() for tid in ids}
    return {
        "photo": photo,
        "board_state": "synthetic" if owner else "empty",
        "image_size": [int(size_wh[0]), int(size_wh[1])],
        "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in corners_xy],
        "tracks": [{"a": t.a, "b": t.b, "length": t.length, "color": t.color, "owner": owner.get(t.id)}
                   for t in board.tracks],
    }


@dataclass(frozen=True)
class TruthOwners:
    """A truth file's owners per track id (`truth_dict`'s inverse)."""

    owner: tuple[str | None, ...]  # per track id; None where empty or not known (see `unsure`)
    unsure: tuple[tuple[tuple[int, ...], tuple[str | None, ...]], ...]  # (track ids, owners) of each
    # group of like-printed lanes (a gray double) held differently: which lane is whose is not in the file


def owners_from_truth(board: Board, truth: dict) -> TruthOwners:
    """Who owns each track id in a truth file (tracks matched by cities and printed colour, as
    `eval_real.py` does). Raises ValueError when the file does not list the board's tracks."""
    want: dict = {}
    for t in truth["tracks"]:
        want.setdefault((frozenset((t["a"], t["b"])), t["color"]), []).append(t["owner"] or None)
    groups: dict = {}
    for t in board.tracks:
        groups.setdefault((frozenset((t.a, t.b)), t.color), []).append(t.id)
    owner: list[str | None] = [None] * len(board.tracks)
    unsure = []
    for key, ids in groups.items():
        owners = want.get(key, [])
        if len(owners) != len(ids):
            raise ValueError(f"the truth lists {len(owners)} track(s) {'-'.join(sorted(key[0]))} {key[1]}, "
                             f"the board {len(ids)}")
        if len(set(owners)) == 1:
            for i in ids:
                owner[i] = owners[0]
        else:
            unsure.append((tuple(ids), tuple(owners)))
    return TruthOwners(tuple(owner), tuple(unsure))


def game_dict(board: Board, claims: dict[str, list[int]]) -> dict:
    """The game file for `ttr tally`: each player's routes as [city, city, printed colour], no tickets."""
    game = Game("classic", TICKET_VALUES[0],
                tuple(PlayerClaims(player, tuple(ids), ()) for player, ids in claims.items()))
    return game.to_dict(board)


def render_photo(rng: np.random.Generator, claims: dict[str, list[int]], size_wh=(1600, 1200),
                 model: BoardModel | None = None, camera: Camera | None = None,
                 quality: int | None = None, backgrounds: str = "usual", plastic: Plastic | None = None,
                 hands: Hands = CAREFUL, world: World | None = None) -> RenderedPhoto:
    """A phone photo of the played board `claims` (`{player: [track id, ...]}`), with truth.
    `backgrounds`: "usual", "hostile" or one hostile kind (see `camera.BACKGROUNDS`); `plastic`
    changes each game's plastic colours (see `trains.player_colors`); `hands`, how carefully the cars
    are laid (`trains.SLOPPY`: a few millimetres off their spaces); `world`, another home's copy of
    the board, light, phone and cars (`world.random_world`; its phone's JPEG quality unless
    `quality` is given; its frame is the caller's to choose as `size_wh`), recorded in the truth."""
    model = model or default_model()
    board = load_board()
    w, h = int(size_wh[0]), int(size_wh[1])
    camera = camera or random_camera(rng, (w, h))
    # The flat board only as sharp as the photo needs (its longest projected edge).
    q = camera.corners_xy
    need = max(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[3])) / BOARD_MM[0]
    need = max(need, max(np.linalg.norm(q[3] - q[0]), np.linalg.norm(q[2] - q[1])) / BOARD_MM[1])
    ppm = next((s for s in PX_PER_MM_STEPS if s >= need * 0.9), PX_PER_MM_STEPS[-1])
    flat = render_flat_board(rng, claims, ppm, model, camera_mm=camera.position_mm, plastic=plastic, hands=hands,
                             world=world)
    img, scene = photograph_scene(rng, flat, ppm, camera, backgrounds, world)
    if quality is None and world is not None:
        quality = world.phone.jpeg_quality
    data = jpeg(rng, img, quality)
    if world is not None:  # another home's phone says whether its flash fired, as phones do
        data = with_flash_tag(data, world.light.kind == "flash")
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    corners = camera.corners_xy
    truth = truth_dict(board, claims, corners, (w, h))
    if world is not None:
        truth["world"] = world.to_dict()
    return RenderedPhoto(decoded, corners, truth, game_dict(board, claims), data, scene)


@dataclass
class PhotographedAgain:
    jpeg: bytes  # the new photo, encoded
    corners_xy: np.ndarray  # (4, 2) the board's corners in it, board order
    size_wh: tuple[int, int]
    scene: Scene


def photograph_again(rng: np.random.Generator, image_bgr: np.ndarray, corners_xy, backgrounds: str = "hostile",
                     max_px_per_mm: float = 4.0) -> PhotographedAgain:
    """The board of a photo (its outer corners `corners_xy`, board order), flattened at its own
    scale (at most `max_px_per_mm`) and photographed by `random_camera` on a table of
    `backgrounds` (see `photograph_scene`), at one of `PHOTO_SIZES` its sharpness can fill (at most
    ~1.2x enlarged), upright three times in ten. The cars stay as the old photo saw them, flat,
    and its light stays under the new one."""
    ppm = min(max_px_per_mm, photo_px_per_mm(corners_xy))
    flat = flatten(image_bgr, np.asarray(corners_xy, float), px_per_mm=ppm)
    fits = [s for s in PHOTO_SIZES if 0.95 * max(s) / max(BOARD_MM) <= 1.2 * ppm] or [PHOTO_SIZES[-1]]
    size = fits[int(rng.integers(len(fits)))]
    if rng.random() < 0.3:
        size = size[::-1]
    camera = random_camera(rng, size)
    img, scene = photograph_scene(rng, flat, ppm, camera, backgrounds)
    return PhotographedAgain(jpeg(rng, img), camera.corners_xy, size, scene)
