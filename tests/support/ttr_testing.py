"""Helpers the tests share (on the path through `pythonpath` in pyproject.toml)."""
from __future__ import annotations

import subprocess

import cv2
import numpy as np


def corner_error_pct(found, truth) -> float:
    """Mean distance of found corners from the true ones, in % of the board's diagonal."""
    t = np.asarray(truth, float)
    diag = np.linalg.norm(t[0] - t[2])
    return float(np.mean(np.linalg.norm(np.asarray(found, float) - t, axis=1)) / diag * 100)


def chessboard_image(w: int = 1600, h: int = 1200, n: int = 9) -> np.ndarray:
    """A black-and-white chessboard on white: corners and edges everywhere, and no board."""
    img = np.full((h, w, 3), 235, np.uint8)
    s = min(w, h) // (n + 1)
    for i in range(n):
        for j in range(n):
            if (i + j) % 2:
                cv2.rectangle(img, (s // 2 + i * s, s // 2 + j * s), (s // 2 + (i + 1) * s, s // 2 + (j + 1) * s), (20, 20, 20), -1)
    return img


def run_with_stderr_on_a_terminal(args: list[str], cwd, timeout: float = 300) -> tuple[int, str, str]:
    """Run `args` with stderr on a pseudo-terminal (where progress bars show) and stdout piped:
    (exit status, stdout, what the terminal received)."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal's size
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    out, _ = proc.communicate(timeout=timeout)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    return proc.returncode, out, err.decode(errors="replace")


def read_tracks(space_loglik, space_glare=None, decide=None, doubt=None):
    """The reader's decision and doubt (`vision.decide.decide_tracks`) on per-track space evidence:
    its 100 TrackReadings."""
    from scoring.board import load_board
    from vision.decide import decide_tracks
    from vision.settings import DecideSettings, DoubtSettings

    return decide_tracks(space_loglik, load_board(), space_glare=space_glare, cfg=decide or DecideSettings(),
                         doubt=doubt or DoubtSettings())[1]


def doubt_taken_for_nobody(reading):
    """The doubtful track of a reading that a player might take for nobody, sure the print is
    bare: of the tracks the photo doubts, read as a player's cars and leaving nobody plausible
    (`app.state.change_chance` at least 5 %, the least the page offers a change at, written here
    rather than taken from the app so that the choice does not move with it), the least sure, as
    the page keeps it (an `app.state.TrackCheck`). Chosen from the reading, so that the tests built
    on it follow the reader; on the bundled example, Atlanta – New Orleans: yellow cars on yellow
    print."""
    from app import state as S

    photo = S.photo_check(reading)
    candidates = [t for t in photo.doubtful if t.owner and S.change_chance(t, None) >= 0.05]
    assert candidates, [(t.track_id, t.owner, t.confidence, t.reason) for t in photo.doubtful]
    return min(candidates, key=lambda t: t.confidence)


def start_page(game: str | None = None):
    """The app's page in Streamlit's AppTest, run once (with `?game=` where given), without an exception."""
    from streamlit.testing.v1 import AppTest

    from app.launch import PAGE  # the page of the ttr being tested, installed or not

    at = AppTest.from_file(str(PAGE), default_timeout=120)
    if game:
        at.query_params["game"] = game
    at.run()
    assert not at.exception, at.exception
    return at


def lab_to_bgr(lab) -> np.ndarray:
    """OpenCV Lab colours (N, 3) as BGR floats."""
    return cv2.cvtColor(np.clip(lab, 0, 255).astype(np.uint8)[None], cv2.COLOR_LAB2BGR)[0].astype(float)


def bgr_to_lab(bgr) -> np.ndarray:
    """BGR colours (N, 3) as OpenCV Lab floats."""
    return cv2.cvtColor(np.clip(np.round(bgr), 0, 255).astype(np.uint8)[None], cv2.COLOR_BGR2LAB)[0].astype(float)


def broad_glare_photo(seed: int = 11, spot_mm=(450.0, 330.0), radius_mm: float = 110.0):
    """A rendered photo (1600x1200, a random position) with a flash's broad glare added in linear
    light around `spot_mm` on the board, the phone exposing for it: (its claims, the photo BGR)."""
    from scoring.board import load_board
    from vision.rectify import BOARD_MM
    from vision.synth.positions import random_position
    from vision.synth.render import render_photo

    rng = np.random.default_rng(seed)
    claims = random_position(rng, load_board())
    photo = render_photo(rng, claims, (1600, 1200))
    to_photo = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [BOARD_MM[0], 0], [BOARD_MM[0], BOARD_MM[1]], [0, BOARD_MM[1]]]),
        np.float32(photo.corners_xy))
    h, w = photo.image_bgr.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    board_pt = cv2.perspectiveTransform(np.stack([xx, yy], -1).reshape(-1, 1, 2), np.linalg.inv(to_photo))
    r = np.linalg.norm(board_pt.reshape(h, w, 2) - np.asarray(spot_mm), axis=-1)
    lin = 0.55 * (photo.image_bgr / 255.0) ** 2.2 + (0.5 * np.exp(-(r / radius_mm) ** 2))[..., None]
    return claims, np.clip(lin ** (1 / 2.2) * 255, 0, 255).astype(np.uint8)
