"""Find the board in a photo, and refuse it rather than guess: its four outer corners in the board's
own order, its turn, and how sure the outline is.

In: a photo, BGR uint8, any size (as `vision.image_io.load_photo` gives it).
Out: `vision.reading.BoardLocation`: corners in the photo's pixels, board order TL, TR, BR, BL (the
board's top-left is the score-track corner "20", its bottom-left "0/100"), the clockwise turn
rounded to 0/90/180/270, a confidence and photo-quality warnings. Raises `BoardNotFound` when no
board is there or none is confirmed, `BoardMirrored` for a mirrored photo, `BoardCutOff` when the
frame cuts into the map.

The stages, each its own module:
1. find (`outline`): the red-brown score-track band's outline by colour, refined to a fraction of
   a pixel; cheap, and right on most tables;
2. check (`dots`): the 36 city dots must sit where the print has them, on one homography. This
   needs nothing from the table, so an outline the table fooled (checked cloth, red-brown wood,
   a table edge) is caught, and so is one turned the wrong way round. Each dot is its strongest
   copper response within reach; where those do not confirm an outline on a board the dots can
   speak for, the response nearest each dot's place of the strong ones (a warm-lit red car beside
   a city can outshine its dot);
3. find again (`printed`): when the colour outline is not confirmed, the board's print is matched
   (SIFT features against the packaged reference of the empty board, MAGSAC), its sides refined
   as in 1, and checked as in 2; then every colour outline, not only the first clean one; then
   the print again with every feature of the photo (a checked cloth's corners fill the first
   match's budget); then the colour outlines of a board small in the frame yet seen fine enough
   to read (`outline.for_photo`, `smallest_px_per_mm`); last, the map cut from the table by this
   photo's own colours of the two (`outline.cut_map_quads`: a table of the band's colour); and
   the quads whose four sides the colour masks follow, whatever else touches the board
   (`outline.supported_quads`: glare, a patch of light, a checked cloth of the band's colour);
4. choose: the first outline the dots confirm and would move by less than `consistent_mm` stands
   as found. An outline some dots agree with is put right by them (their homography) and checked
   afresh, up to `corrections` times;
5. where the dots cannot speak (a board under `min_px_per_mm`, a blurred photo, too few dots on any
   outline: glare or noise washing them out), the tracks' layout
   (`layout`) may confirm the best of the outlines found and corrected in 1-4, with a warning
   that says so; one it scores lower than right outlines score is put right by the layout itself
   (`layout.polish`), then its sides refitted to the band's edge.
   Nothing confirmed: 1-5 once more on the photo with its colour cast evened out (`outline.even_cast`:
   light of two colours, or a warm lamp on a cream map, moves the colours the outlines are found
   by across the board), then with its brightness evened out too (a flash's hot spot); still
   nothing: refused, saying why (no board, cut off, mirrored, too small to check, or not confirmed).
The confidence says how far the reported outline may still be off by the dots (how far they would
move it, and how well they agree among themselves): 1 within 0.5 % of the board's diagonal, 0 from
1 %, flagged under 0.5.
"""
from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from vision.config import CHANNELS
from vision.locate import outline, printed
from vision.locate.config import DotConfig, LayoutConfig, LocateConfig, MatchConfig, OutlineConfig
from vision.locate.dots import DotCheck, check_outline, city_dots_mm, verified
from vision.locate.errors import (
    BY_TRACKS_ADVICE,
    BY_TRACKS_MESSAGE,
    CUT_OFF_MESSAGE,
    DOTS_UNSEEN_ADVICE,
    TOO_SMALL_MESSAGE,
    UNCONFIRMED_MESSAGE,
    BoardCutOff,
    BoardMirrored,
    BoardNotFound,
)
from vision.locate.layout import check_layout
from vision.locate.layout import confirmed as layout_confirmed
from vision.locate.layout import polish as polish_layout
from vision.quality import blurred, board_warnings
from vision.reading import BoardLocation
from vision.rectify import BOARD_MM, board_to_photo_homography, photo_px_per_mm, shrink

BAND_MM = outline.BAND_MM
FOLLOWED = "sides followed"  # the source of the last outlines tried (`outline.supported_quads`)
MSG_UNSURE = ("the board's outline is uncertain: check the corners (or retake the photo from above, "
              "in even light)")

__all__ = ["BoardCutOff", "BoardMirrored", "BoardNotFound", "DotConfig", "LayoutConfig", "LocateConfig", "MatchConfig",
           "OutlineConfig", "locate_board", "scale_location"]


@dataclasses.dataclass(frozen=True)
class _Found:
    """One outline found, with the dots' verdict on it."""

    corners_xy: np.ndarray  # (4, 2) photo pixels, board order
    source: str  # where it came from: "colour", "print" or "dots" (a correction), maybe ", sides refined"
    check: DotCheck


def locate_board(image_bgr: np.ndarray, cfg: LocateConfig = LocateConfig()) -> BoardLocation:
    """Find the board: corners (TL, TR, BR, BL of the board) in photo pixels, turn, confidence."""
    img = np.asarray(image_bgr)
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.ndim != 3 or img.shape[2] < CHANNELS or min(img.shape[:2]) < cfg.min_image_px:
        raise BoardNotFound()
    img = np.ascontiguousarray(img[:, :, :CHANNELS])
    h, w = img.shape[:2]
    small, scale = shrink(img, cfg.work_side)
    try:
        best, warnings = _find(img, small, scale, cfg)
    except BoardMirrored:
        raise
    except BoardNotFound as refused:
        # Light of two colours, or a warm lamp on a cream map, moves the colours the outlines are
        # found by across the board: once more with the cast evened out (`LocateConfig.cast_reach`),
        # then with the light's brightness too (a flash's hot spot and fall-off).
        if cfg.cast_reach <= 0:
            raise
        best = None
        for brightness in (False, True):
            evened = outline.even_cast(img, cfg.cast_reach, brightness)
            try:
                best, warnings = _find(evened, *shrink(evened, cfg.work_side), cfg)
                break
            except (BoardNotFound, BoardCutOff):
                continue
        if best is None:
            raise refused from None
    corners, check = best.corners_xy, best.check

    warnings = _frame_check(corners, (w, h), cfg) + warnings
    confidence = _confidence(check, cfg)
    if confidence < 0.5:
        warnings.append(MSG_UNSURE)
    warnings.extend(m for m in board_warnings(img, corners, small, scale, cfg.quality) if m not in warnings)
    return BoardLocation(corners_xy=corners.astype(np.float64), orientation=_orientation_of(corners),
                         confidence=confidence, warnings=tuple(warnings))


def _find(img, small, scale, cfg: LocateConfig) -> tuple[_Found, list[str]]:
    """The first outline found that the dots (or, where they cannot speak, the tracks) confirm, and
    the warning that the tracks confirmed it, if they did; else refused, saying why."""
    ref = printed.load_reference()
    # Cheapest and likeliest first: the best colour outline, the print, then every colour outline.
    outlines, cut = outline.find_outlines(img, small, scale, cfg=cfg.outline)
    found: list[_Found] = []
    last_resort = None  # where the quads of followed sides begin in `found`
    for corners, source, refined in _outlines(img, small, scale, outlines, ref, cfg):
        if source == FOLLOWED and last_resort is None:
            last_resort = len(found)
        found += _confirm(img, small, scale, corners, source, cfg, refined)
        if _stands(found[-1], cfg):
            break

    standing = [f for f in found if _stands(f, cfg)]
    if standing:
        return standing[0], []
    # The board's size and sharpness as the outline most dots agree with shows them (another
    # outline may wrap the table). The dots cannot speak on a board too small or too blurred
    # to show them, nor where too few of them show on any outline (a flash's glare or a dim,
    # noisy photo washes them out): the tracks may. Dots enough that disagree refuse it.
    seen = _board_seen(found)
    across = photo_px_per_mm(seen.corners_xy) * BOARD_MM[0] if seen is not None else np.inf
    small_board = across < cfg.min_px_per_mm * BOARD_MM[0]
    is_blurred = seen is not None and _blurred(img, seen, cfg)
    dots_unseen = seen is not None and seen.check.found < cfg.dots.min_verified
    asked = small_board or is_blurred or dots_unseen
    by_layout = _by_layout(img, found, cfg, last_resort) if asked else None
    if by_layout is None:
        if cut:
            raise BoardCutOff(CUT_OFF_MESSAGE)
        if _mirrored(small, ref, cfg):
            raise BoardMirrored()
        if small_board:
            raise BoardNotFound(TOO_SMALL_MESSAGE.format(px=int(across)))
        raise BoardNotFound(UNCONFIRMED_MESSAGE) if found else BoardNotFound()
    return by_layout, [_by_tracks_warning(small_board, is_blurred, across)]


def scale_location(location: BoardLocation, factor: float) -> BoardLocation:
    """The same location in an image `factor` times larger (e.g. after `load_photo(reduce=2)`)."""
    c = (np.asarray(location.corners_xy, dtype=np.float64) + 0.5) * factor - 0.5
    return dataclasses.replace(location, corners_xy=c)


# ---------------------------------------------------------------- stages

def _check(small, scale, corners_xy, source, cfg) -> _Found:
    """The dots' verdict on photo-pixel `corners_xy`, judged on `small`: each dot its strongest
    response, or where those do not confirm it on a board the dots can speak for
    (`cfg.min_px_per_mm`), the nearest strong one (`cfg.nearest_share`) if more dots agree so."""
    c_small = (np.asarray(corners_xy, np.float64) + 0.5) * scale - 0.5
    speaks = cfg.nearest_share > 0 and photo_px_per_mm(corners_xy) >= cfg.min_px_per_mm
    chk = check_outline(small, c_small, city_dots_mm(), cfg.dots, cfg.nearest_share if speaks else None)
    corrected = (chk.corrected_xy + 0.5) / scale - 0.5
    return _Found(np.asarray(corners_xy, np.float64), source, dataclasses.replace(chk, corrected_xy=corrected))


def _stands(f: _Found, cfg: LocateConfig) -> bool:
    return verified(f.check, cfg.dots) and f.check.correction_mm <= cfg.consistent_mm


def _outlines(img, small, scale, outlines, ref, cfg):
    """(corners in board order, source, sides refined already) of each outline to check, lazily."""
    tried = []
    for cand in outlines[:1]:
        tried.append(cand.corners)
        yield outline.board_order(small, scale, cand.corners, cfg.outline, cfg.dots), "colour", True
    m = printed.match_board(small, ref, cfg.match)
    if m is not None:
        yield (m.corners_xy + 0.5) / scale - 0.5, "print", False
    # The clean colour fit was the table's: every candidate, not only the first clean one.
    yield from _every_outline(img, small, scale, cfg.outline, tried, cfg, "colour")
    # A patterned table's features crowd the print's out of the first match: all of them, at last.
    m = printed.match_board(small, ref, dataclasses.replace(cfg.match, features=cfg.match.last_features))
    if m is not None:
        yield (m.corners_xy + 0.5) / scale - 0.5, "print, every feature", False
    # A board small in the frame may still be seen fine enough to read, yet be left out as a speck
    # by the search's shares of the photo: looked for last, so that it costs nothing where the
    # board fills the frame (`outline.for_photo`), down to `cfg.smallest_px_per_mm`.
    wider = outline.for_photo(cfg.outline, img.shape, cfg.smallest_px_per_mm)
    if wider != cfg.outline:
        yield from _every_outline(img, small, scale, wider, tried, cfg, "colour, small")
    # Last (a second or two): the map cut from a table of the band's own colour by this photo's
    # colours of map and table (`outline.cut_map_quads`), its edge refitted on the photo.
    for q in outline.cut_map_quads(small, cfg.outline):
        corners = (q + 0.5) / scale - 0.5
        refitted = outline.refine_from_map(img, corners, cfg.outline)
        corners = corners if refitted is None else refitted
        if _not_tried(corners, tried):
            yield outline.board_order(small, scale, corners, cfg.outline, cfg.dots), "map cut", False
    # Then the quads whose four sides the colour masks' blobs follow, whatever else those blobs take
    # in: glare, a patch of light or a checked cloth touching the board (`outline.supported_quads`).
    for q in outline.supported_quads(small, cfg.outline):
        corners = (q + 0.5) / scale - 0.5
        if _not_tried(corners, tried):
            yield outline.board_order(small, scale, corners, cfg.outline, cfg.dots), FOLLOWED, False


def _every_outline(img, small, scale, search: OutlineConfig, tried: list, cfg, source: str):
    """(corners in board order, `source`, sides refined) of the best `cfg.max_outlines` colour outlines
    the exhaustive `search` finds, but those in `tried` (which each one joins)."""
    more, _ = outline.find_outlines(img, small, scale, exhaustive=True, cfg=search)
    for cand in more[:cfg.max_outlines]:
        if _not_tried(cand.corners, tried):
            yield outline.board_order(small, scale, cand.corners, cfg.outline, cfg.dots), source, True


def _not_tried(corners: np.ndarray, tried: list) -> bool:
    """Whether `corners` is no outline in `tried` (within 2 px at every corner); if so it joins them."""
    if any(np.allclose(corners, c, atol=2.0) for c in tried):
        return False
    tried.append(corners)
    return True


def _confirm(img, small, scale, corners_xy, source, cfg, refined: bool = False) -> list[_Found]:
    """An outline and what the dots make of it, until one stands: as found with its sides refined
    on the photo (unless they are `refined` already), as found, then the dots' correction of the
    best of these, again refined and as it is, up to `cfg.corrections` times while more dots agree.
    Any outline some dots agree with may be put right by them: each result is checked afresh, so a
    correction from a few chance specks confirms nothing."""
    out: list[_Found] = []
    start, how, best_found = corners_xy, source, -1
    for _ in range(1 + cfg.corrections):
        sides = None if refined and how == source else outline.refine_sides(img, start, cfg.outline)
        tries = ([(sides.corners, how + ", sides refined")] if sides is not None else []) + [(start, how)]
        for corners, name in tries:
            out.append(_check(small, scale, corners, name, cfg))
            if _stands(out[-1], cfg):
                return out
        fitted = max(out, key=lambda f: f.check.found)
        if fitted.check.found <= best_found:
            break  # the last correction brought no more dots into agreement
        start, how, best_found = fitted.check.corrected_xy, "dots", fitted.check.found
    return out


def _board_seen(found: list[_Found]) -> _Found | None:
    """The outline most city dots agree with (the likeliest of them on a tie), or None: what the
    board's size and sharpness are judged on when no outline stands."""
    return max(found, key=lambda f: f.check.found) if found else None


def _blurred(img, seen: _Found, cfg: LocateConfig) -> bool:
    """Whether the photo is blurred (`vision.quality`), judged on the outline `seen`."""
    try:
        return blurred(img, seen.corners_xy, cfg.quality)
    except (ValueError, cv2.error):  # a degenerate outline: nothing to judge the blur on
        return False


def _by_layout(img, found: list[_Found], cfg: LocateConfig, last_resort: int | None = None) -> _Found | None:
    """Where the city dots cannot confirm an outline: of the outlines found (the dots' corrections
    among them, right or steered by chance specks), the one the tracks' layout confirms best; those
    from index `last_resort` on (the quads of followed sides) only where none before is confirmed,
    since the layout's coarse check would take one of them as readily as a finer outline."""
    k = len(found) if last_resort is None else last_resort
    for tier in (found[:k], found[k:]):
        best, best_score = None, -np.inf
        for f in tier:
            chk = check_layout(img, f.corners_xy, cfg.layout)
            if layout_confirmed(chk, cfg.layout) and chk.score > best_score:
                best, best_score = f, chk.score
        if best is None:
            continue
        if best_score < cfg.layout.right_score:
            best = _polished(img, best, cfg)
        return best
    return None


def _polished(img, found: _Found, cfg: LocateConfig) -> _Found:
    """An outline the layout confirms yet scores as no right outline does, put right by the layout
    itself (`layout.polish`: to within its coarse pixels), then its sides refitted to the band's
    edge on the photo where the layout scores that as a right outline too."""
    corners, _ = polish_layout(img, found.corners_xy, cfg.layout)
    sides = outline.refine_sides(img, corners, cfg.outline)
    if sides is not None and check_layout(img, sides.corners, cfg.layout).score >= cfg.layout.right_score:
        return dataclasses.replace(found, corners_xy=sides.corners, source=found.source + ", layout polished, sides refined")
    return dataclasses.replace(found, corners_xy=corners, source=found.source + ", layout polished")


def _by_tracks_warning(small_board: bool, is_blurred: bool, across: float) -> str:
    """What a board confirmed by its tracks alone is told, by why the dots could not speak."""
    if small_board:
        why, advice = f"the board is small in the photo ({int(across)} pixels across)", BY_TRACKS_ADVICE
    elif is_blurred:
        why, advice = "the photo is blurred", BY_TRACKS_ADVICE
    else:
        why, advice = "the board's city dots could not be made out", DOTS_UNSEEN_ADVICE
    return BY_TRACKS_MESSAGE.format(why=why, advice=advice)


def _mirrored(small, ref, cfg) -> bool:
    """Whether the photo, mirrored, shows a board the dots confirm (a selfie camera's view)."""
    flipped = np.ascontiguousarray(small[:, ::-1])
    m = printed.match_board(flipped, ref, cfg.match)
    if m is None:
        return False
    return verified(check_outline(flipped, m.corners_xy, city_dots_mm(), cfg.dots), cfg.dots)


def _confidence(check: DotCheck, cfg: LocateConfig) -> float:
    """0..1 from how far the outline may be off: the distance the dots would still move it, plus
    twice the scatter of their fit at the corners (rms / sqrt(dots), times `dots_to_corners` for
    carrying it from the dots out to the corners). 1 up to `good_mm` (0.5 % of the diagonal), 0
    from `bad_mm` (1 %, the error that misreads tracks), so it falls under 0.5 (flagged) past 0.75 %."""
    if check.found == 0:
        return 0.0
    spread = cfg.dots_to_corners * check.rms_mm / np.sqrt(check.found)
    off = check.correction_mm + 2.0 * spread
    return float(np.clip(1.0 - (off - cfg.good_mm) / (cfg.bad_mm - cfg.good_mm), 0.0, 1.0))


def _orientation_of(corners: np.ndarray) -> int:
    """Clockwise turn of the board in the photo, nearest of 0/90/180/270, from its top side."""
    top = corners[1] - corners[0]
    ang = np.degrees(np.arctan2(top[1], top[0]))  # y down: positive = clockwise
    return int(round(ang / 90.0)) % 4 * 90


def _frame_check(corners: np.ndarray, size_wh, cfg: LocateConfig) -> list[str]:
    """Warn when a board corner is outside the frame; raise when the frame cuts into the map."""
    w, h = size_wh
    H = board_to_photo_homography(corners)
    # The map (everything inside the score track) must be in the frame to read the tracks.
    m = BAND_MM
    inner = np.array([[m, m], [BOARD_MM[0] - m, m], [BOARD_MM[0] - m, BOARD_MM[1] - m], [m, BOARD_MM[1] - m]])
    pi = cv2.perspectiveTransform(inner.reshape(-1, 1, 2), H).reshape(-1, 2)
    tol = cfg.frame_tolerance * max(w, h)
    if np.any(pi[:, 0] < -tol) or np.any(pi[:, 0] > w - 1 + tol) or np.any(pi[:, 1] < -tol) or np.any(pi[:, 1] > h - 1 + tol):
        raise BoardCutOff(CUT_OFF_MESSAGE)
    out = (corners[:, 0] < -tol) | (corners[:, 0] > w - 1 + tol) | (corners[:, 1] < -tol) | (corners[:, 1] > h - 1 + tol)
    if out.any():
        return ["the board is partly outside the photo (a corner is cut off); keep the whole board in the frame"]
    return []
