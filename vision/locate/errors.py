"""Why a photo is refused before it is read: one-line messages a player can act on."""
from __future__ import annotations

from scoring.errors import TtrError

CUT_OFF_MESSAGE = ("the board is cut off by the photo's edge: take the photo again with the whole "
                   "board in the frame")
UNCONFIRMED_MESSAGE = ("the board's outline could not be confirmed: retake the photo from above with the "
                       "whole board in the frame")
TOO_SMALL_MESSAGE = ("the board is too small in the photo ({px} pixels across) to confirm its outline: come "
                     "closer, or send the photo at full size")
# Not a refusal: the warning on a board found where the city dots could not be made out.
BY_TRACKS_MESSAGE = ("{why}, so the board's outline was checked by its tracks alone and some tracks may be "
                     "misread: {advice}")
BY_TRACKS_ADVICE = "come closer, hold still, or send the photo at full size"  # a small or blurred board
DOTS_UNSEEN_ADVICE = "take it again in bright, even light, without the flash"  # dots washed out or lost in noise
# No outline at all: the board may be missing, or too small or too dimly lit for its outline to show
# (boards under about a tenth of the frame in a photo of under about 1.4 megapixels; in a larger one,
# any board seen at `LocateConfig.smallest_px_per_mm` or finer is looked at: `outline.for_photo`).
NOT_FOUND_MESSAGE = ("no Ticket to Ride board found in the photo: if it is there, take the photo again from "
                     "above, closer, with the whole board filling most of the frame")
MIRRORED_MESSAGE = ("the photo is mirrored (as a front camera's selfie view shows it): turn mirroring off "
                    "or use the back camera, and take it again")


class BoardNotFound(TtrError):
    """No Ticket to Ride board in the photo, or none whose outline the print confirms."""

    def __init__(self, message: str = NOT_FOUND_MESSAGE):
        super().__init__(message)


class BoardCutOff(TtrError):
    """The photo's edge cuts into the board too far to read it."""


class BoardMirrored(BoardNotFound):
    """The board is there, but seen in a mirror: its print reads backwards."""

    def __init__(self, message: str = MIRRORED_MESSAGE):
        super().__init__(message)
