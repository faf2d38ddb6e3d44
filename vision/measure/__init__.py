"""Measure the board template from a flattened photo of an empty board.

In:  a BGR image of the whole board warped to its outer corners (any size in the board's 795:525
     proportions; 1500 x 990 or more works well), and the board facts from `scoring.board`.
Out: a `MeasuredTemplate`: the `Template` in millimetres plus what was found and what was guessed.

How (each step a function below):
1. `find_space_candidates`: printed spaces are rectangles of one colour inside a dark outline.
   Four detectors, merged: (a) colour segmentation (nearest printed colour in Lab, outlines cut
   away with a black-hat filter); (b) the light inside of an outlined rectangle (adaptive
   threshold); (b') the thin light panel inside a gray space's bevelled frame; (c) outlined
   rectangles with their insides filled; (d) gray frames (neutral pixels darker than their
   surroundings) with their holes filled. Each gives connected
   components -> `minAreaRect`; those of a space's size are kept, and straight bars of k spaces
   run together are cut into k.
2. `find_cities`: the city dot near each city's approximate place (board facts), by circle fit
   (which the tracks are found from); the template keeps `dot_centres`, the copper's centre.
3. `assign_tracks`: for every track, the chain of candidates that runs from its city a to its
   city b with the right number of spaces, of the right colour, each the next one along (about a
   space length further, in line with both spaces' long axes): a beam search per track, then the
   most confident tracks take their spaces first. One-colour doubles take two disjoint lanes.
4. `_refine_chain`: every space is moved onto its printed outline (`outline_map`, a black-hat
   map of dark lines) by a small search; a space no detector found is tracked on from its
   settled neighbour (bends up to 80 degrees), or, for a track with nothing found, from a city.
5. `find_score_cells`: the red score band along each edge; corners where bands cross; along each
   band the comb of 19 or 29 equally spaced cells that best fits the red cells and dark gaps.
Fixes the tool cannot make itself live in `OVERRIDES` below, each with its reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.template import Template, TrackTemplate, check_template
from scoring.board import PRINTED_COLORS, Board, load_board
from scoring.errors import TtrError
from vision.light import normalise_light
from vision.measure.chains import assign_tracks
from vision.measure.cities import dot_centres, find_cities
from vision.measure.placement import _Maps, _median_lab, _place_missing, _quad, _separate, _settle_found, outline_map
from vision.measure.score_track import find_score_cells
from vision.measure.spaces import (
    DEFAULT_SPACE_LAB,
    PX_PER_MM,
    SpaceCandidates,
    _board_image,
    _sample_lab,
    find_space_candidates,
)

# Hand fixes the tool cannot make itself: (track id, space index) -> (centre mm, long-axis unit
# vector pointing from city a to city b, why). Empty: on the board measured for the packaged
# template (IMG_4048) every space was either detected or tracked onto its print (all 30 tracked
# ones were checked by eye on zoomed overlays). A fix goes here, with the photo that needed it.
OVERRIDES: dict[tuple[int, int], tuple[tuple[float, float], tuple[float, float], str]] = {}


@dataclass(frozen=True)
class MeasuredTemplate:
    template: Template
    candidates: SpaceCandidates
    guessed: tuple[tuple[int, int], ...]  # (track id, space index) placed by the chain, not detected
    space_mm: tuple[float, float]  # measured printed space size, long x short
    notes: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        n = sum(t.length for t in self.template.tracks)
        lines = [f"measured {n} spaces on {len(self.template.tracks)} tracks from {len(self.candidates)} "
                 f"candidate rectangles; space {self.space_mm[0]:.1f} x {self.space_mm[1]:.1f} mm; "
                 f"{len(self.guessed)} spaces placed by their neighbours"]
        lines += list(self.notes)
        return "\n".join(lines)


def measure_template(image: np.ndarray, board: Board | None = None, photo_name: str = "") -> MeasuredTemplate:
    """Measure every space, city dot and score cell on a flattened photo of the empty board
    (`photo_name` only goes into the template's `source` note)."""
    board = board or load_board()
    img = _board_image(image)
    cities = find_cities(img, board)
    cand = find_space_candidates(img)
    # Re-estimate the colour classes from this photo's own spaces, then detect again.
    protos = dict(DEFAULT_SPACE_LAB)
    for ci, colour in enumerate(PRINTED_COLORS):
        sel = cand.colors == ci
        if sel.sum() >= 5:
            protos[colour] = tuple(np.median(cand.lab[sel], axis=0))
    cand = find_space_candidates(img, protos)
    sized = cand.sizes[cand.by_colour]
    # The printed space: the coloured face plus its dark outline (about 0.4 mm each side).
    long_mm = float(np.median(sized[:, 0])) + 0.8
    short_mm = float(np.median(sized[:, 1])) + 0.8
    chains = assign_tracks(cand, cities, board, long_mm)

    maps = _Maps(outline_map(img), cv2.cvtColor(cv2.GaussianBlur(img, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32),
                 (long_mm, short_mm))
    space_lab = {c: _median_lab(cand, c, protos) for c in PRINTED_COLORS}
    settled = {}
    for t in board.tracks:  # first every found space, so placed ones can keep clear of them
        settled[t.id] = _settle_found(chains[t.id])
        maps.occupied.extend((c, u) for c, u, ok in zip(*settled[t.id]) if ok)
    placed = {}
    # Then the missing ones, tracks with the fewest missing first (their neighbours are surest).
    for t in sorted(board.tracks, key=lambda t: sum(not ok for ok in settled[t.id][2])):
        placed[t.id] = _place_missing(maps, *settled[t.id], cities[t.a], cities[t.b], long_mm, short_mm,
                                      space_lab[t.color])
    # Printed spaces never overlap: push apart any two that still do (the one not measured from
    # a whole coloured face moves; if both or neither were, both move half way).
    fixed = {t.id: [p >= 0 and bool(cand.by_colour[p]) for p in chains[t.id].picks] for t in board.tracks}
    _separate(placed, fixed, long_mm, short_mm)
    guessed, frames = [], {}
    for t in board.tracks:
        ch = chains[t.id]
        frames[t.id] = []
        for k, (c, u) in enumerate(zip(*placed[t.id])):
            if (t.id, k) in OVERRIDES:
                c, u = (np.array(v, float) for v in OVERRIDES[(t.id, k)][:2])
            elif ch.picks[k] < 0:
                guessed.append((t.id, k))
            frames[t.id].append((c, u))
    # Each space's colour as the reader sees it: on the board with its paper brought to one grey
    # (vision.spaces.normalise_light), so the colours say how the print stands to the paper,
    # whatever the light of this photo (the renderer draws them relative to its own paper).
    quads = {t.id: np.array([_quad(c, u, long_mm, short_mm) for c, u in frames[t.id]]) for t in board.tracks}
    norm = normalise_light(img, np.concatenate(list(quads.values())) * PX_PER_MM, PX_PER_MM)
    lab = cv2.cvtColor(cv2.medianBlur(norm, 3), cv2.COLOR_BGR2LAB)
    tracks = []
    for t in board.tracks:
        colours = [_sample_lab(lab, c, u, long_mm, short_mm) for c, u in frames[t.id]]
        tracks.append(TrackTemplate(t.id, t.a, t.b, t.color, t.length, quads[t.id], np.array(colours)))
    score_cells, notes = find_score_cells(img, board)
    photo = f" ({photo_name})" if photo_name else ""
    source = (f"Measured by vision.measure (ttr template measure) from a flattened photo of an empty "
              f"board{photo}: spaces found by colour segmentation and outlined-rectangle detection, "
              f"assigned to tracks by chains from city a to city b; each space is the measured median "
              f"rectangle {long_mm:.1f} x {short_mm:.1f} mm at its detected centre and angle; "
              f"{len(guessed)} spaces no detector found were tracked onto their print from their "
              f"neighbours; {len(OVERRIDES)} hand fixes. Score cells: comb fit along the border's red "
              f"band. One-colour doubles: the lower track id is the upper lane (the left lane where "
              f"the track runs more up-down than across).")
    template = Template(board_mm=tuple(float(v) for v in board.board_mm), cities=dot_centres(img, cities),
                        tracks=tuple(tracks), score_cells=score_cells, source=source)
    problems = check_template(template, board)
    if problems:
        raise TtrError(f"the measured template does not fit the board: {problems[0]}")
    return MeasuredTemplate(template, cand, tuple(guessed), (long_mm, short_mm), tuple(notes))
