"""The photo checks' settings, and the facts of images the reader's code names instead of spelling out.

What photo is read at all (`vision.image_io`): module constants, since they are a parameter's
default and the docstrings' words. What is warned about (`vision.quality`): `QualityConfig`, passed
down by the locator (`LocateConfig.quality`). The locator's own settings: `vision/locate/config.py`.
"""
from __future__ import annotations

from dataclasses import dataclass

# ---------------------------------------------------------------- facts (not settings)

BYTE_MAX = 255  # an 8-bit channel's top value
HUE_RANGE = 180  # OpenCV's 8-bit hue runs 0..179 (degrees halved)
CHANNELS = 3  # of a colour image: BGR, HSV or Lab
CORNERS = 4  # of a quadrilateral (the board's outline), as many as its sides
MEGA = 1_000_000  # bytes in a megabyte, pixels in a megapixel (as the messages count them)
MAD_TO_SIGMA = 1.4826  # median absolute deviation to standard deviation, for normal noise
EPS = 1e-6  # differences below this are rounding, not signal (and keep divisions finite)
PARALLEL_DET = 1e-9  # two lines whose directions' determinant is under this are parallel: they do not meet

# The reduced copy of the photo the board is searched on and its quality judged on (`rectify.shrink`):
# about this many pixels on the long side, enough for the outline and the checks, fast to search.
WORK_SIDE = 1000

# ---------------------------------------------------------------- what photo is read (image_io)

# 50 megapixels: well above any phone's default (12-48 MP), far below a memory problem (150 MB BGR).
MAX_PIXELS = 50_000_000
# A 48 MP phone JPEG or HEIC is 10-25 MB; a 50 MP PNG of a photo can reach ~100 MB.
MAX_FILE_BYTES = 100_000_000
MIN_SIDE = 64  # pixels: the board's 100 tracks cannot be read from less
MAX_ASPECT = 6.0  # long side / short side: a board is 1.5, a phone's widest frame ~2.2
# EXIF orientation is read from headers of images up to this size (Pillow's PNG getexif() decodes
# pixels, so a huge one is refused first): room for a caller's `max_pixels` above the default.
MAX_EXIF_PIXELS = 4 * MAX_PIXELS
DECODER_NOTE_BYTES = 4096  # of what libjpeg writes to stderr while decoding: its first warnings suffice


# ---------------------------------------------------------------- what is warned about (quality)

@dataclass(frozen=True)
class QualityConfig:
    """When `vision.quality` warns about a photo (the map judged in board millimetres)."""

    dark_median: int = 60  # median grey (0..255) of the map below this: too dark
    # Variance of the Laplacian of the map seen at 1 px/mm below this: blurred. On the real dev
    # photos a sharp photo gives 700-5000, a Gaussian blur of 1 mm 75-165, of 2 mm 15-23; cars
    # (8 x 22 mm) stay readable to about 1.5 mm.
    blur_var: float = 50.0
    glare_fraction: float = 0.03  # share of the map's pixels blown out (near white, no colour)
    glare_min_value: int = 250  # blown out: HSV value at least this (0..255) ...
    glare_max_sat: int = 30  # ... and saturation at most this
    small_fraction: float = 0.25  # board area below this share of the frame: small
    map_inset_mm: float = 30.0  # the map only: the score track is dark by design
    # Sharpness is judged on a window of the map's middle, warped at the photo's own scale but
    # not under `sharp_min_px_per_mm` (a tiny board) nor over `sharp_oversample` times the scale
    # it is judged at (no need for more), and at least `sharp_min_px` pixels a side.
    sharp_window_mm: tuple[float, float] = (240.0, 140.0)
    sharp_min_px_per_mm: float = 0.25
    sharp_oversample: int = 4
    sharp_min_px: int = 8
