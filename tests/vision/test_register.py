"""Fine registration of the template's spaces on a flattened board (vision.spaces.register_to_template)."""
import cv2
import numpy as np

from calibration.template import load_template
from vision.rectify import board_corners_mm
from vision.spaces import normalise_light, register_to_template
from vision.synth.render import render_flat_board

PPM = 2.0


def test_a_corner_found_off_is_undone():
    """One board corner found 4 mm by 3 mm off flattens the board through a slightly wrong
    homography: registration puts every space back within a fraction of a millimetre (an affine fit
    leaves over a millimetre at the far side)."""
    flat = render_flat_board(np.random.default_rng(4), {}, PPM, camera_mm=np.array([400.0, 260.0, 700.0]))
    quads, _, _ = load_template().all_spaces()
    qp = quads * PPM - 0.5
    src = board_corners_mm() * PPM
    dst = src.copy()
    dst[2] += [4.0 * PPM, 3.0 * PPM]
    H = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
    board = cv2.warpPerspective(flat, H, flat.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)
    truth = cv2.perspectiveTransform(qp.reshape(-1, 1, 2), H).reshape(qp.shape)
    moved, score = register_to_template(normalise_light(board, qp, PPM), qp, PPM)
    err_mm = np.linalg.norm(moved - truth, axis=-1).mean(axis=1) / PPM
    assert score > 0.5
    assert np.linalg.norm(qp - truth, axis=-1).mean(axis=1).max() / PPM > 2.5  # it was off
    assert err_mm.mean() < 0.25 and err_mm.max() < 0.6

