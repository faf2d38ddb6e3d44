"""The photo checks' settings, and the facts of images the reader's code names instead of spelling out.

What photo is read at all (`vision.image_io`): module constants, since they are a parameter's
default and the docstrings' words. The locator's own settings: `vision/locate/config.py`.
"""
from __future__ import annotations

# ---------------------------------------------------------------- facts (not settings)

MEGA = 1_000_000  # bytes in a megabyte, pixels in a megapixel (as the messages count them)

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
