"""Load a photo as the reader sees it: BGR uint8 pixels, upright as displayed.

In: a path or the file's bytes (JPEG, PNG, WebP, HEIC/HEIF; what a phone or a browser upload gives).
Out: `load_photo(...) -> np.ndarray` of shape (h, w, 3), BGR uint8, with the EXIF orientation applied,
so pixel coordinates are the photo's displayed pixels.

Bad input raises `PhotoError` (a `TtrError`) with a one-line message: missing or empty file, not a
regular file (a folder, FIFO or device is refused from `os.stat`, never opened for reading), a file
over `MAX_FILE_BYTES`, not an image, a truncated file, JPEG data the decoder reports as corrupt
("Corrupt JPEG data": damage in the middle of the file, which would otherwise decode to smeared
pixels without an error), more pixels than `MAX_PIXELS`, a side under `MIN_SIDE` pixels or an aspect
ratio over `MAX_ASPECT` (no board photo looks like that; such shapes break resizing). Sizes are
checked from the header, before any pixels are decoded, so a huge image costs no memory.

Speed: OpenCV decodes JPEG about twice as fast as Pillow, so Pillow only reads the header (size,
EXIF orientation) and decodes HEIC, which OpenCV cannot; the orientation is applied in one place,
Pillow's `ImageOps.exif_transpose` (`_upright`), to either decoder's pixels. `reduce=2/4/8`
decodes JPEG at a fraction of its size straight from the DCT (a 12 MP photo in about a third of the
time); coordinates found in such an image are multiplied by `reduce` to get the photo's pixels.
"""
from __future__ import annotations

import io
import os
import re
import struct
import tempfile
import threading
import warnings
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError

from scoring.errors import TtrError
from scoring.files import read_capped
from vision.config import DECODER_NOTE_BYTES, MAX_ASPECT, MAX_EXIF_PIXELS, MAX_FILE_BYTES, MAX_PIXELS, MEGA, MIN_SIDE

_REDUCE_FLAGS = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
                 8: cv2.IMREAD_REDUCED_COLOR_8}

try:  # HEIC/HEIF through Pillow (without pillow-heif, HEIC reads as "not an image")
    import pillow_heif
except ImportError:
    pass
else:
    pillow_heif.register_heif_opener()

# Facts of the file formats (not settings).
# The first bytes of each format (HEIF: an "ftyp" box of one of these brands).
_MAGIC = re.compile(rb"\xff\xd8\xff|\x89PNG\r\n\x1a\n|RIFF.{4}WEBP"
                    rb"|.{4}ftyp(?:heic|heix|mif1|msf1|heim|heis|avif)", re.S)
_TURNED_QUARTER = (5, 6, 7, 8)  # EXIF orientations that turn the photo a quarter: width and height swap
_EXIF_ORIENTATIONS = range(1, 9)
_PNG_TAIL = 16  # bytes at a PNG's end that hold its IEND chunk (12 bytes), with a little slack
_RIFF_HEADER = struct.Struct("<4sI")  # "RIFF", then the length of all that follows this header
_SEGMENT_LENGTH = struct.Struct(">H")  # a JPEG segment's length, after its 2-byte marker
# JPEG markers (each after a 0xFF byte): end of image, restarts RST0-RST7, TEM, start of scan.
_JPEG_FF, _JPEG_EOI, _JPEG_RST0, _JPEG_RST7, _JPEG_TEM, _JPEG_SOS = 0xFF, 0xD9, 0xD0, 0xD7, 0x01, 0xDA


class PhotoError(TtrError):
    """The photo cannot be read (missing, empty, not an image, truncated, too large)."""


@dataclass(frozen=True)
class PhotoHeader:
    """What the file's header says, read without decoding pixels."""

    format: str  # Pillow's format name: "JPEG", "PNG", "WEBP", "HEIF", ...
    size_wh: tuple[int, int]  # displayed size (EXIF orientation applied)
    orientation: int  # EXIF orientation tag, 1..8 (1 = as stored)
    flash_fired: bool | None = None  # EXIF: the camera's flash fired (None: the file does not say)


def _read_bytes(path_or_bytes) -> tuple[bytes, str]:
    """Return (data, name for messages)."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data, name = bytes(path_or_bytes), "the photo"
        if len(data) > MAX_FILE_BYTES:
            raise PhotoError(f"{name}: the photo is too large ({len(data) / MEGA:.0f} MB; "
                             f"at most {MAX_FILE_BYTES / MEGA:.0f} MB are read)")
    else:
        name = os.fspath(path_or_bytes)
        name = os.fsdecode(name) if isinstance(name, bytes) else name
        data = read_capped(name, MAX_FILE_BYTES, "photo", PhotoError)
    if not data:
        raise PhotoError(f"{name}: the file is empty")
    return data, name


def _open_pil(data: bytes, name: str):
    """Open the header with Pillow (lazy: no pixels decoded)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError:
        raise PhotoError(f"{name}: the image is too large (more than {MAX_PIXELS // MEGA} megapixels)") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        if _looks_like_image(data):
            raise PhotoError(f"{name}: the image file is truncated or damaged") from None
        raise PhotoError(f"{name}: not an image (JPEG, PNG, WebP or HEIC expected)") from None


def _looks_like_image(data: bytes) -> bool:
    """The first bytes name an image format (so a failure to open means a damaged file)."""
    return _MAGIC.match(data) is not None


def read_header(path_or_bytes) -> PhotoHeader:
    """The photo's format, displayed size and EXIF orientation, without decoding pixels."""
    data, name = _read_bytes(path_or_bytes)
    return _header(_open_pil(data, name), name)


def _header(im, name: str) -> PhotoHeader:
    w, h = im.size
    orientation, flash = 1, None
    # Refuse a huge image before anything can decode it (Pillow's PNG getexif() decodes pixels).
    if w * h <= MAX_EXIF_PIXELS and im.format != "HEIF":  # pillow-heif applies HEIF's own rotation
        exif = _exif(im)
        orientation, flash = _exif_orientation(exif), _exif_flash_fired(exif)
    if orientation in _TURNED_QUARTER:
        w, h = h, w
    _check_shape(name, int(w), int(h))
    return PhotoHeader(format=im.format or "?", size_wh=(int(w), int(h)), orientation=orientation,
                       flash_fired=flash)


def _check_shape(name: str, w: int, h: int) -> None:
    """Refuse shapes no board photo has, before any pixel is decoded or resized."""
    if w < 1 or h < 1:
        raise PhotoError(f"{name}: the image has no pixels")
    if min(w, h) < MIN_SIDE:
        raise PhotoError(f"{name}: the image is {w}x{h} pixels; a board photo needs at least "
                         f"{MIN_SIDE} pixels a side")
    if max(w, h) / min(w, h) > MAX_ASPECT:
        raise PhotoError(f"{name}: the image is {w}x{h} pixels, an aspect ratio no board photo has "
                         f"(at most {MAX_ASPECT:g}:1)")


def _exif(im) -> Image.Exif | None:
    """The header's EXIF block (None when absent or unreadable)."""
    try:
        if im.format == "PNG":  # only an eXIf chunk before the pixels; never load() for it
            raw = im.info.get("exif")
            if not raw:
                return None
            exif = Image.Exif()
            exif.load(raw)
            return exif
        return im.getexif()
    except Exception:  # a broken EXIF block is not worth refusing the photo for
        return None


def _exif_orientation(exif: Image.Exif | None) -> int:
    """EXIF orientation tag 1..8 (1 when absent or unreadable)."""
    try:
        value = int(exif.get(ExifTags.Base.Orientation, 1) or 1) if exif is not None else 1
    except Exception:  # noqa: BLE001 - a broken tag is not worth refusing the photo for
        return 1
    return value if value in _EXIF_ORIENTATIONS else 1


def _exif_flash_fired(exif: Image.Exif | None) -> bool | None:
    """Whether the camera's flash fired (the EXIF Flash tag's lowest bit; None when it is absent)."""
    try:
        value = exif.get_ifd(ExifTags.IFD.Exif).get(ExifTags.Base.Flash) if exif is not None else None
        return None if value is None else bool(int(value) & 1)
    except Exception:  # noqa: BLE001 - a broken tag says nothing
        return None


def _complete(fmt: str, data: bytes) -> bool:
    """False when the file visibly stops short (checked before decoding: decoders often don't say)."""
    if fmt == "JPEG":
        return _jpeg_complete(data)
    if fmt == "PNG":  # the last chunk is IEND
        return b"IEND" in data[-_PNG_TAIL:]
    if fmt == "WEBP":  # the RIFF header gives the file's length
        return len(data) >= _RIFF_HEADER.unpack_from(data)[1] + _RIFF_HEADER.size
    return True


def _jpeg_complete(data: bytes) -> bool:
    """True when the JPEG's compressed data runs to its end-of-image marker.

    OpenCV decodes a truncated JPEG without an error (grey below the cut, a warning on stderr), so
    the markers are walked instead: header segments up to the first scan, then the scans (where a
    0xFF byte is always followed by 0x00 or a restart marker) until EOI (0xFFD9). Data after EOI
    (e.g. a motion-photo video) is ignored.
    """
    n = len(data)
    pos = 2  # after SOI
    while pos + 2 <= n:
        if data[pos] != _JPEG_FF:
            return False
        marker = data[pos + 1]
        if marker == _JPEG_FF:  # fill byte
            pos += 1
            continue
        if marker == _JPEG_EOI:
            return True
        if _JPEG_RST0 <= marker <= _JPEG_RST7 or marker == _JPEG_TEM:
            pos += 2
            continue
        if pos + 2 + _SEGMENT_LENGTH.size > n:
            return False
        (seg_len,) = _SEGMENT_LENGTH.unpack_from(data, pos + 2)
        pos += 2 + seg_len
        if marker == _JPEG_SOS:  # start of scan: skip entropy-coded data to the next real marker
            m = _NEXT_MARKER.search(data, pos)
            if m is None:
                return False
            pos = m.start()
    return False


_NEXT_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")


def _upright(pil, orientation: int | None = None):
    """A Pillow image turned as displayed: the one place EXIF orientation is applied
    (`ImageOps.exif_transpose`). By the image's own EXIF, or by `orientation` (the tag the header
    gave, for pixels OpenCV decoded and wrapped in a Pillow image)."""
    if orientation is not None:
        exif = Image.Exif()
        exif[ExifTags.Base.Orientation] = orientation
        pil.info["exif"] = exif.tobytes()
    return ImageOps.exif_transpose(pil)


def load_photo(path_or_bytes, reduce: int = 1, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Decode a photo to displayed BGR uint8 pixels.

    In: a path (str/Path) or the file's bytes; `reduce` 1, 2, 4 or 8 decodes at 1/reduce of the size
    (fast for JPEG). Out: (h, w, 3) uint8 BGR, EXIF orientation applied.
    Raises PhotoError for a missing/empty/unreadable/truncated file or one above `max_pixels`.
    """
    if reduce not in _REDUCE_FLAGS:
        raise ValueError("reduce must be 1, 2, 4 or 8")
    data, name = _read_bytes(path_or_bytes)
    pil = _open_pil(data, name)
    header = _header(pil, name)
    w, h = header.size_wh
    if w * h > max_pixels:
        raise PhotoError(f"{name}: the image is too large ({w}x{h}, {w * h / MEGA:.0f} megapixels; "
                         f"the limit is {max_pixels / MEGA:.0f})")
    if w < 1 or h < 1:
        raise PhotoError(f"{name}: the image has no pixels")

    if header.format == "HEIF":
        img = _decode_pil(pil, name)
        if reduce > 1:
            img = cv2.resize(img, (max(1, img.shape[1] // reduce), max(1, img.shape[0] // reduce)),
                             interpolation=cv2.INTER_AREA)
        return img

    if not _complete(header.format, data):
        raise PhotoError(f"{name}: the image file is truncated (incomplete download or copy?)")
    flags = _REDUCE_FLAGS[reduce] | cv2.IMREAD_IGNORE_ORIENTATION
    if header.format == "JPEG":
        img, decoder_says = _imdecode_listening(data, flags)
        if _CORRUPT.search(_PADDING.sub("", decoder_says)):
            raise PhotoError(f"{name}: the JPEG data is damaged (the decoder reports corrupt data); "
                             "the photo would read wrong: copy or take it again")
    else:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    if img is None:
        # Formats OpenCV was built without (e.g. some WebP/GIF/TIFF variants): let Pillow try.
        img = _decode_pil(pil, name)
        if reduce > 1:
            img = cv2.resize(img, (max(1, img.shape[1] // reduce), max(1, img.shape[0] // reduce)),
                             interpolation=cv2.INTER_AREA)
        return img  # Pillow path already applied the orientation
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if header.orientation == 1:
        return img
    return np.array(_upright(Image.fromarray(img), header.orientation))  # (pixels move whole: BGR stays BGR)


# libjpeg's warnings that mean damaged data (its others, e.g. "Invalid SOS parameters for sequential
# JPEG", are harmless). A byte or two of padding before the end marker is harmless too (some
# encoders write it); more means the decoder lost its way and threw the rest away.
_CORRUPT = re.compile(r"Corrupt JPEG data|Premature end of JPEG|Inconsistent progression")
_PADDING = re.compile(r"Corrupt JPEG data: [12] extraneous bytes before marker 0xd9")
_stderr_lock = threading.Lock()


def _imdecode_listening(data: bytes, flags: int) -> tuple[np.ndarray | None, str]:
    """cv2.imdecode, and what libjpeg wrote to stderr meanwhile (its only channel for warnings such
    as "Corrupt JPEG data: premature end of data segment"; the pixels still come back)."""
    buf = np.frombuffer(data, np.uint8)
    with _stderr_lock:
        try:
            saved = os.dup(2)
        except OSError:  # no stderr to listen on: decode without listening
            return cv2.imdecode(buf, flags), ""
        try:
            with tempfile.TemporaryFile() as f:
                os.dup2(f.fileno(), 2)
                try:
                    img = cv2.imdecode(buf, flags)
                finally:
                    os.dup2(saved, 2)
                f.seek(0)
                said = f.read(DECODER_NOTE_BYTES).decode("utf-8", "replace")
        finally:
            os.close(saved)
    return img, said


def _decode_pil(pil, name: str) -> np.ndarray:
    """Decode with Pillow (HEIC, or what OpenCV refuses), orientation applied, to BGR."""
    try:
        pil.load()
        pil = _upright(pil)
        rgb = np.asarray(pil.convert("RGB"))
    except (OSError, SyntaxError, ValueError, RuntimeError) as e:
        msg = str(e).lower()
        if "truncated" in msg or "incomplete" in msg or "broken" in msg or "too short" in msg:
            raise PhotoError(f"{name}: the image file is truncated (incomplete download or copy?)") from None
        raise PhotoError(f"{name}: the image data is damaged and cannot be decoded") from None
    return np.ascontiguousarray(rgb[:, :, ::-1])
