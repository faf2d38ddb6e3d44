"""Loading photos: formats, EXIF orientation, reduced decoding and every kind of bad file."""
from __future__ import annotations

import io
import struct
import time
import zlib

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import ExifTags, Image

from scoring.errors import TtrError
from vision.image_io import MAX_PIXELS, PhotoError, load_photo, read_header


def _picture(w=240, h=160) -> np.ndarray:
    """A BGR picture whose corners differ (so turns and flips show)."""
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = (40, 120, 200)
    img[: h // 4, : w // 4] = (255, 0, 0)  # blue top-left block
    img[-h // 4:, -w // 8:] = (0, 255, 0)  # green bottom-right block
    return cv2.GaussianBlur(img, (5, 5), 1)


def _encode_pil(img_bgr, fmt, **kw) -> bytes:
    bio = io.BytesIO()
    Image.fromarray(img_bgr[:, :, ::-1]).save(bio, fmt, **kw)
    return bio.getvalue()


@pytest.mark.parametrize("ext", [".jpg", ".png", ".webp"])
def test_formats_decode_to_bgr(ext, tmp_path):
    img = _picture()
    ok, buf = cv2.imencode(ext, img)
    path = tmp_path / f"p{ext}"
    path.write_bytes(buf.tobytes())
    for src in (path, str(path), buf.tobytes()):
        out = load_photo(src)
        assert out.dtype == np.uint8 and out.shape == img.shape
        assert np.abs(out.astype(int) - img).mean() < 4


def test_heic_decodes():
    pytest.importorskip("pillow_heif")
    import pillow_heif

    pillow_heif.register_heif_opener()
    img = _picture()
    out = load_photo(_encode_pil(img, "HEIF", quality=95))
    assert out.shape == img.shape
    assert np.abs(out.astype(int) - img).mean() < 6


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_is_applied(orientation):
    from PIL import ImageOps

    stored = _picture()
    exif = Image.Exif()
    exif[0x0112] = orientation
    data = _encode_pil(stored, "JPEG", quality=95, exif=exif.tobytes())
    out = load_photo(data)
    # Pillow's own EXIF handling is the reference for "as displayed".
    expected = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB"))[:, :, ::-1]
    assert out.shape == expected.shape
    assert np.abs(out.astype(int) - expected).mean() < 2
    assert read_header(data).size_wh == (expected.shape[1], expected.shape[0])
    if orientation in (6, 8):
        assert out.shape[:2] == stored.shape[1::-1]


def test_reduced_decode_halves_the_size():
    img = cv2.resize(_picture(), (960, 640))
    ok, buf = cv2.imencode(".jpg", img)
    out = load_photo(buf.tobytes(), reduce=2)
    assert out.shape == (320, 480, 3)
    with pytest.raises(ValueError):
        load_photo(buf.tobytes(), reduce=3)


def test_missing_empty_folder_and_not_an_image(tmp_path):
    with pytest.raises(PhotoError, match="no such file"):
        load_photo(tmp_path / "nope.jpg")
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    with pytest.raises(PhotoError, match="empty"):
        load_photo(empty)
    with pytest.raises(PhotoError, match="folder"):
        load_photo(tmp_path)
    text = tmp_path / "notes.jpg"
    text.write_text("these are not pixels\n")
    with pytest.raises(PhotoError, match="not an image"):
        load_photo(text)
    assert issubclass(PhotoError, TtrError)


@pytest.mark.parametrize("ext", [".jpg", ".png", ".webp"])
@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_truncated_files_are_refused(ext, keep):
    ok, buf = cv2.imencode(ext, cv2.resize(_picture(), (640, 480)))
    data = buf.tobytes()
    with pytest.raises(PhotoError, match="truncated"):
        load_photo(data[: int(len(data) * keep)])


def test_progressive_jpeg_truncated():
    data = _encode_pil(cv2.resize(_picture(), (640, 480)), "JPEG", progressive=True, quality=90)
    assert load_photo(data).shape == (480, 640, 3)
    with pytest.raises(PhotoError, match="truncated"):
        load_photo(data[: len(data) * 2 // 3])


def _png_header_only(w: int, h: int) -> bytes:
    """A PNG that claims w x h pixels (IHDR) with a tiny IDAT: decoding it would need w*h*3 bytes."""
    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("w,h", [(10_000, 10_000), (8_000, 6_500), (40_000, 40_000)])
def test_huge_image_refused_from_its_header(w, h):
    assert w * h > MAX_PIXELS
    t0 = time.perf_counter()
    with pytest.raises(PhotoError, match="too large"):
        load_photo(_png_header_only(w, h))
    assert time.perf_counter() - t0 < 1.0  # nothing decoded


def test_limit_is_a_parameter():
    ok, buf = cv2.imencode(".png", _picture())
    with pytest.raises(PhotoError, match="too large"):
        load_photo(buf.tobytes(), max_pixels=1000)


def test_grey_image_comes_back_as_bgr():
    ok, buf = cv2.imencode(".png", np.full((80, 96), 90, np.uint8))
    out = load_photo(buf.tobytes())
    assert out.shape == (80, 96, 3)


# ---------------------------------------------------------------- hostile input (issue 15)

def test_damage_the_decoder_reports_is_refused_but_end_padding_is_not():
    ok, buf = cv2.imencode(".jpg", cv2.resize(_picture(), (960, 640)))
    data = buf.tobytes()
    mid = len(data) // 2
    while data[mid] in (0xFE, 0xFF, 0x7F) or data[mid - 1] == 0xFF:  # a flip that makes no marker
        mid += 1
    for bit in range(8):  # one bit flipped in the middle: decodes without an error, but smeared
        if data[mid] ^ (1 << bit) == 0xFF:
            continue
        damaged = data[:mid] + bytes([data[mid] ^ (1 << bit)]) + data[mid + 1:]
        with pytest.raises(PhotoError, match="JPEG data is damaged"):
            load_photo(damaged)
        with pytest.raises(PhotoError, match="JPEG data is damaged"):
            load_photo(damaged, reduce=2)
    noise = data[:mid] + np.random.default_rng(3).integers(0, 256, 500, dtype=np.uint8).tobytes() + data[mid + 500:]
    with pytest.raises(PhotoError, match="damaged|truncated"):
        load_photo(noise)
    padded = data[:-2] + b"\x00" + data[-2:]  # one byte before the end marker: harmless
    assert np.array_equal(load_photo(padded), load_photo(data))


@pytest.mark.parametrize("w,h,ok", [(64, 64, True), (63, 200, False), (200, 63, False), (384, 64, True),
                                    (385, 64, False), (2, 50000, False), (50000, 2, False)])
def test_degenerate_shapes_are_refused_from_the_header(w, h, ok):
    ok_, buf = cv2.imencode(".png", np.full((h, w, 3), 90, np.uint8))
    if ok:
        assert load_photo(buf.tobytes()).shape == (h, w, 3)
    else:
        with pytest.raises(PhotoError, match="pixels"):
            read_header(buf.tobytes())


def test_only_regular_files_are_read(tmp_path):
    import os

    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    t0 = time.perf_counter()
    for path, phrase in ((fifo, "FIFO"), ("/dev/zero", "device"), (tmp_path, "folder"),
                         (tmp_path / ("n" * 300), "too long"), (tmp_path / "none.jpg", "no such file")):
        with pytest.raises(PhotoError, match=phrase):
            load_photo(path)
    assert time.perf_counter() - t0 < 1
    big = tmp_path / "big.jpg"
    with open(big, "wb") as f:
        f.truncate(200_000_000)  # sparse: refused by its size, nothing read
    with pytest.raises(PhotoError, match="too large"):
        load_photo(big)


def _jpeg_with_flash(value: int | None) -> bytes:
    im = Image.fromarray(np.full((600, 800, 3), 180, np.uint8))
    exif = Image.Exif()
    if value is not None:
        exif.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.Flash] = value
    out = io.BytesIO()
    im.save(out, "JPEG", exif=exif)
    return out.getvalue()


@given(st.integers(0, 0x7F))
@settings(max_examples=30, deadline=None)
def test_the_exif_flash_tag_says_whether_the_flash_fired(value):
    # Its lowest bit is "fired"; the others say how (auto, red-eye, return light).
    assert read_header(_jpeg_with_flash(value)).flash_fired is bool(value & 1)


def test_a_photo_that_does_not_say_is_not_taken_for_a_flash_photo():
    assert read_header(_jpeg_with_flash(None)).flash_fired is None
    png = io.BytesIO()
    Image.fromarray(np.zeros((600, 800, 3), np.uint8)).save(png, "PNG")
    assert read_header(png.getvalue()).flash_fired is None
