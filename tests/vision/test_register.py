"""Fine registration of the template's spaces on a flattened board (vision.light.register_to_template)."""
from dataclasses import replace

import cv2
import numpy as np

from calibration.template import load_template
from vision.light import normalise_light, register_to_template
from vision.rectify import board_corners_mm
from vision.settings import LightSettings
from vision.synth.render import render_flat_board

PPM = 2.0


def test_a_corner_found_off_is_undone():
    """One board corner found 4 mm by 3 mm off flattens the board through a slightly wrong
    homography: registration puts every space back within a fraction of a millimetre (an affine fit
    leaves over a millimetre at the far side)."""
    flat = render_flat_board(np.random.default_rng(4), {}, PPM, camera_mm=np.array([400.0, 260.0, 700.0]))
    quads, _, _ = load_template().all_spaces()
    qp = quads * PPM - 0.5  # the reader's frame: pixel u shows (u + 0.5) / PPM mm
    drawn = quads * PPM  # the renderer's: pixel j shows j / PPM mm, so its spaces are here
    src = board_corners_mm() * PPM
    dst = src.copy()
    dst[2] += [4.0 * PPM, 3.0 * PPM]
    H = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
    board = cv2.warpPerspective(flat, H, flat.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)
    truth = cv2.perspectiveTransform(drawn.reshape(-1, 1, 2), H).reshape(qp.shape)
    moved, score = register_to_template(normalise_light(board, qp, PPM), qp, PPM)
    err_mm = np.linalg.norm(moved - truth, axis=-1).mean(axis=1) / PPM
    assert score > 0.5
    assert np.linalg.norm(qp - truth, axis=-1).mean(axis=1).max() / PPM > 2.5  # it was off
    assert err_mm.mean() < 0.25 and err_mm.max() < 0.6



def test_a_board_flattened_right_is_matched_to_the_half_pixel():
    """A board flattened through its true corners needs no correction but the half board pixel
    between the renderer's pixel frame and the reader's: registration finds it, to about a tenth of
    a millimetre at the reader's working scale and less closely at half of it. (It once drew its
    template half a board pixel off the board it matched, and moved every space by that: these
    spaces were then 0.4 mm off on average at 1 px/mm, 1.6 mm at 0.5.)"""
    flat = render_flat_board(np.random.default_rng(5), {}, PPM)
    quads, _, _ = load_template().all_spaces()
    qp = quads * PPM - 0.5
    norm = normalise_light(flat, qp, PPM)
    for work, mean_mm, max_mm in ((1.0, 0.2, 0.4), (0.5, 0.5, 1.2)):
        moved, score = register_to_template(norm, qp, PPM, replace(LightSettings(), register_px_per_mm=work))
        err_mm = np.linalg.norm(moved - quads * PPM, axis=-1).mean(axis=1) / PPM
        assert score > 0.5
        assert err_mm.mean() < mean_mm and err_mm.max() < max_mm, (work, err_mm.mean(), err_mm.max())
