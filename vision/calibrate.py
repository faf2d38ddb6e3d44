"""Fit the reader to a user's own board from photos of it EMPTY.

In:  one or more photos of the empty board (any light, any angle the reader accepts).
Out: `calibration.user.Calibration`, one view per photo (see that module for why it helps and how
     it is saved).
"""
from __future__ import annotations

import numpy as np

from calibration.user import MAX_VIEWS, Calibration, CalibrationError, EmptyView
from vision.evidence.change import align_to_reference
from vision.light import LitBoard, light_board, warp_quads_frame
from vision.read import BoardView, Reader
from vision.spaces import cut_spaces

PLAYED_LIMIT = 3  # confidently claimed tracks that make a calibration photo a played board


def fit_calibration(photos: list[str], reader=None, step=None) -> tuple[Calibration, list[str]]:
    """Measure the empty board on each photo. Returns (calibration, warnings). A photo that cannot
    be read raises its PhotoError / locator error (one line: not an image, no board found, ...); a
    photo of a played board raises CalibrationError (its cars would be learnt as the empty look).
    `step()`, if given, is called once as each photo is found and once as it is measured (a
    progress bar of 2 x photos)."""
    if not photos:
        raise CalibrationError("no photos to calibrate from")
    if len(photos) > MAX_VIEWS:
        raise CalibrationError(f"{len(photos)} photos; a calibration takes at most {MAX_VIEWS}")
    step = step or (lambda: None)
    reader = reader or Reader(calibration=None, use_classifier=False)
    flats = []
    for photo in photos:
        flats.append(reader.view_path(photo).flattened)
        step()
    return fit_from_flattened(flats, [str(p) for p in photos], reader, step)


def fit_from_flattened(flats: list[np.ndarray], names: list[str], reader=None, step=None) -> tuple[Calibration, list[str]]:
    """The calibration of empty boards already flattened at PX_PER_MM (see `fit_calibration`;
    `step()` is called as each is measured)."""

    reader = reader or Reader(calibration=None, use_classifier=False)
    ppm = reader.settings.px_per_mm
    warnings: list[str] = []
    lits = [light_board(flat, reader.quads_mm, ppm, reader.settings.light) for flat in flats]
    # The calibration's frame is the template's: the photo whose spaces register best on the
    # template is put on it, and the others are aligned to that one on their map drawings (a finer
    # match than spaces alone).
    anchor = int(np.argmax([lit.register_score for lit in lits]))
    a = lits[anchor]
    anchor_board = warp_quads_frame(a.board, a.quads_px, a.template_px) if a.register_score > 0 else a.board
    views: list[EmptyView] = []
    for i, (flat, lit, name) in enumerate(zip(flats, lits, names)):
        if i == anchor:
            board, score = anchor_board, a.register_score
        else:
            board, score = align_to_reference(lit.board, anchor_board, ppm, reader.settings.change)
            if score < 0.5:
                warnings.append(f"{name}: does not line up with the other photos' board (match {score:.2f})")
        sp = cut_spaces(LitBoard(board, lit.template_px, lit.template_px, ppm, score), reader.geometry,
                        reader.track_ids, reader.index)
        # A calibration photo must be empty: cars learnt as the empty look would make every later
        # reading wrong, so a photo on which the reader sees cars is refused.
        claimed = [t for t in reader.read_view(BoardView.of_flattened(flat)).tracks if t.owner and not t.doubtful]
        if len(claimed) >= PLAYED_LIMIT:
            shown = ", ".join(f"{t.a}-{t.b} ({t.owner})" for t in claimed[:3])
            raise CalibrationError(f"{name}: {len(claimed)} tracks look claimed ({shown}"
                                   f"{', ...' if len(claimed) > 3 else ''}); calibrate with photos of the "
                                   "EMPTY board, with no trains on it")
        if claimed:
            warnings.append(f"{name}: {', '.join(f'{t.a}-{t.b}' for t in claimed)} look claimed; "
                            "if a train stands there, take it off and calibrate again")
        views.append(EmptyView(board, sp.lab.astype(float), sp.lab_spread.astype(float), name,
                               sp.lab_mean.astype(float)))
        if step is not None:
            step()
    return Calibration(tuple(views)), warnings
