"""Where the camera stood, from the board's corners alone, and how far a car's top leans in a flattened
photo (vision.rectify.camera_position / parallax_mm)."""
import numpy as np
import pytest

from vision.rectify import BOARD_MM, board_corners_mm, camera_position, parallax_mm
from vision.synth.camera import random_camera


def phone_photo_corners(position_mm, wh=(4032, 3024), focal_per_long_side=0.78, turn_deg=0.0):
    """Board corners in a photo taken from `position_mm`, aimed at the board's centre, with a
    phone's optics (principal point in the middle of the frame)."""
    w, h = wh
    f = focal_per_long_side * max(w, h)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1.0]])
    # World: board plane z = 0, x right, y down; the camera above the board at z = -height.
    c = np.array([position_mm[0], position_mm[1], -position_mm[2]])
    target = np.array([BOARD_MM[0] / 2, BOARD_MM[1] / 2, 0.0])
    z = (target - c) / np.linalg.norm(target - c)
    t = np.radians(turn_deg)
    up = np.array([np.sin(t), -np.cos(t), 0.0])
    x = np.cross(-up, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    R = np.stack([x, y, z])
    pts = (R @ (np.column_stack([board_corners_mm(), np.zeros(4)]) - c).T).T
    uv = (K @ pts.T).T
    return uv[:, :2] / uv[:, 2:]


@pytest.mark.parametrize("position", [(397, 262, 700), (200, 600, 650), (900, 100, 1100), (-50, 300, 800)])
@pytest.mark.parametrize("turn", [0.0, 90.0, 200.0])
def test_camera_position_is_found_from_a_phone_photo(position, turn):
    corners = phone_photo_corners(position, turn_deg=turn)
    est = camera_position(corners, (4032, 3024))
    assert np.linalg.norm(est - np.array(position, float)) < 2.0


def test_camera_position_tolerates_another_lens_and_an_off_centre_crop():
    """The renderer's cameras have a random field of view and a shifted frame: the estimate
    then moves a little, and the parallax it predicts stays within ~2 mm of the truth."""
    rng = np.random.default_rng(7)
    points = np.array([[40.0, 40.0], [755.0, 40.0], [397.0, 262.0], [40.0, 485.0], [755.0, 485.0]])
    worst = []
    for i in range(60):
        wh = [(1600, 1200), (4032, 3024), (1200, 1600)][i % 3]
        cam = random_camera(rng, wh)
        est = camera_position(cam.corners_xy, wh)
        err = parallax_mm(points, est, 4.0) - parallax_mm(points, cam.position_mm, 4.0)
        worst.append(np.linalg.norm(err, axis=1).max())
    assert np.median(worst) < 1.0 and max(worst) < 2.5


def test_parallax_leans_away_from_the_camera_and_grows_with_height():
    cam = np.array([400.0, 260.0, 700.0])
    pts = np.array([[400.0, 260.0], [700.0, 260.0], [100.0, 60.0]])
    d4 = parallax_mm(pts, cam, 4.0)
    assert np.allclose(d4[0], 0.0)  # right under the camera: nothing leans
    assert d4[1, 0] > 0 and abs(d4[1, 1]) < 1e-12  # east of it: leans east
    assert d4[2, 0] < 0 and d4[2, 1] < 0
    assert np.allclose(parallax_mm(pts, cam, 6.0)[1:], d4[1:] * (6.0 / 694.0) / (4.0 / 696.0))
    # 300 mm from the foot point, 70 cm up: a 6 mm roof leans ~2.6 mm, a third of a lane.
    assert 2.4 < np.linalg.norm(parallax_mm(pts[1:2], cam, 6.0)) < 2.8
