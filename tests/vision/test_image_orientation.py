"""EXIF orientation, exactly: every tag turns the decoded pixels as the EXIF standard says, for
pixels OpenCV decodes (JPEG, PNG, reduced or not) and for Pillow's own decode, through one
routine (`vision.image_io._upright`, i.e. `PIL.ImageOps.exif_transpose`)."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from vision.image_io import load_photo

# Stored pixels -> displayed pixels for each EXIF orientation tag (numpy, independent of Pillow).
DISPLAYED = {
    1: lambda a: a,
    2: lambda a: a[:, ::-1],  # mirrored left-right
    3: lambda a: a[::-1, ::-1],  # turned half round
    4: lambda a: a[::-1],  # mirrored top-bottom
    5: lambda a: a.transpose(1, 0, 2),  # mirrored along the main diagonal
    6: lambda a: np.rot90(a, -1),  # turned a quarter clockwise
    7: lambda a: np.rot90(a, 2).transpose(1, 0, 2),  # mirrored along the other diagonal
    8: lambda a: np.rot90(a, 1),  # turned a quarter anticlockwise
}


def _stored(w=96, h=64) -> np.ndarray:
    return np.random.default_rng(5).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _file(rgb: np.ndarray, fmt: str, orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, fmt, exif=exif.tobytes(), **({"quality": 95} if fmt == "JPEG" else {}))
    return out.getvalue()


@pytest.mark.parametrize("orientation", range(1, 9))
def test_png_turns_exactly(orientation):
    rgb = _stored()
    out = load_photo(_file(rgb, "PNG", orientation))
    assert np.array_equal(out, np.ascontiguousarray(DISPLAYED[orientation](rgb[:, :, ::-1])))
    assert out.flags.writeable and out.flags.c_contiguous


@pytest.mark.parametrize("reduce", [1, 2])
@pytest.mark.parametrize("orientation", range(2, 9))
def test_jpeg_turns_exactly(orientation, reduce):
    rgb = _stored()
    upright = load_photo(_file(rgb, "JPEG", 1), reduce=reduce)
    out = load_photo(_file(rgb, "JPEG", orientation), reduce=reduce)
    assert np.array_equal(out, DISPLAYED[orientation](upright))
    assert out.flags.writeable and out.flags.c_contiguous
