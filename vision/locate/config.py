"""Every setting of the board locator's find-and-check stages, in one frozen tree.

`LocateConfig` holds what decides between outlines and when one is refused, and a part per stage:
the colour outline (`OutlineConfig`), the city dots (`DotConfig`), the tracks' layout
(`LayoutConfig`), the print (`MatchConfig`; `ReferenceConfig` makes its reference) and the
photo-quality warnings (`vision.config.QualityConfig`). Facts of the board come from where they
live (`scoring/data/usa.json` through `vision.rectify` and `outline.BAND_MM`), not from here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from vision.config import WORK_SIDE, QualityConfig

# Red wraps round OpenCV's hue 0: hues are shifted by this before a red-brown or copper range is
# taken, so that each range is one interval.
HUE_SHIFT = 12


@dataclass(frozen=True)
class BandColour:
    """One colour limit of the score track's red-brown band: hue (shifted by `HUE_SHIFT`) at most,
    saturation at least (OpenCV's HSV ranges)."""

    max_hue: int
    min_sat: int


@dataclass(frozen=True)
class OutlineColours:
    """What colours the band and the map are (`outline.border_mask`, `outline.map_mask`), in OpenCV's
    HSV ranges, on the reduced photo."""

    # Three limits of the band's colour; candidates from each are tried and the fits scored, so no
    # single limit has to suit every table and light: "tight" survives warm orange wood, "loose"
    # takes a band washed out by side light.
    tight: BandColour = BandColour(HUE_SHIFT + 9, 80)
    strict: BandColour = BandColour(HUE_SHIFT + 14, 65)
    loose: BandColour = BandColour(HUE_SHIFT + 16, 40)
    min_value: int = 35  # the band is dark to mid red-orange: not black ...
    max_value: int = 235  # ... nor blown out
    min_chroma: int = 18  # saturation x value / 255, at least: in near-black pixels saturation is sensor noise
    loose_pale: int = 3  # "loose" also needs saturation x this >= 255 - value: pale and bright is no band
    map_max_sat: int = 70  # the map in neutral light is pale and greyish: saturation at most this ...
    map_min_value: int = 110  # ... and light (the bright pixels, also when the map is taken in warm light)
    min_bright_px: int = 100  # fewer bright pixels: no warm-light map to look for
    denoise_px: int = 3  # box blur before the colour masks: sensor noise would speckle them


@dataclass(frozen=True)
class QuadConfig:
    """Candidate quadrilaterals from the colour masks' blobs (`outline._quads_from_mask` and the two
    below it), in the reduced photo's pixels; shares are of the image's area, side or diagonal."""

    connectivity: int = 8  # pixels touching at a corner are one blob
    close_per_side: int = 180  # blobs are closed with a kernel of the long side / this (odd) ...
    close_min_px: int = 3  # ... at least this
    min_blob_share: float = 0.002  # smaller blobs (and, in warm light, smaller pale parts) are left out
    max_blobs: int = 40  # the largest this many are looked at
    # The band breaks at the light corner medallions (and at glare or a hand): the largest
    # `hull_seeds` blobs of at least `min_seed_share` each give a hull, alone and merged with every
    # blob whose box comes within `merge_reach` of the long side (`merge_min_px` at least).
    hull_seeds: int = 3
    min_seed_share: float = 0.01
    merge_reach: float = 0.06
    merge_min_px: int = 3
    same_px: int = 4  # a candidate within this of an earlier one at every corner is that one ...
    same_hull_px: int = 3  # ... and so is a hull's quad this near one already found in the same mask
    min_quad_share: float = 0.08  # a board covers at least this share of the photo
    # Hough lines on the blobs' outlines: `hough_min_points` needed, angles in steps of pi /
    # `hough_angle_steps` (0.75 degrees), a line needs `hough_votes` of the short side in votes
    # (`hough_min_votes` at least); of the strongest `hough_lines`, `hough_kept` distinct ones are kept
    # (a line within `same_line_deg` and `same_line_share` of the diagonal of a stronger one is that one).
    hough_min_points: int = 50
    hough_angle_steps: int = 240
    hough_votes: float = 0.1
    hough_min_votes: int = 20
    hough_lines: int = 60
    hough_kept: int = 12
    same_line_deg: int = 4
    same_line_share: float = 0.02
    # Four of them make a quad when their normals turn by `min_corner_deg`-`max_corner_deg` from one
    # to the next (a board seen aslant); the strongest `hough_quads` such fours are tried, and the
    # first that wraps `wrap_share` of the outline (sampled to about `wrap_points` points, allowing
    # `wrap_tolerance` of the diagonal outside) stands.
    min_corner_deg: int = 40
    max_corner_deg: int = 140
    hough_quads: int = 40
    wrap_points: int = 1500
    wrap_share: float = 0.95
    wrap_tolerance: float = 0.008
    # Last (`outline.supported_quads`): of the same fours, each mask's best `supported` by the share of
    # its worst side that the outline follows (within `support_px`), `min_support` at least; a side is
    # sampled `support_samples` times between its ends less `support_skip` (the corner medallions).
    supported: int = 2
    min_support: float = 0.5
    support_px: float = 2.0
    support_samples: int = 60
    support_skip: float = 0.07
    # A hull's quad: the hull simplified to within `hull_simplify` of its perimeter, its longest
    # `hull_sides` sides (none under `hull_min_side` of the perimeter) combined in fours; the
    # smallest quad that wraps the hull (`hull_min_cover` of its area at least, for rounding) and
    # grows it by `hull_max_growth` at most, its corners within `max_corner_reach` long sides.
    hull_simplify: float = 0.004
    hull_sides: int = 14
    hull_min_side: float = 0.02
    hull_min_cover: float = 0.98
    hull_max_growth: float = 1.6
    max_corner_reach: int = 4


@dataclass(frozen=True)
class SideConfig:
    """Each side refitted on the full-resolution photo (`outline._refine`, `outline._fit_side`).
    Depths across a side are in band widths, outward positive."""

    corner_skip: float = 0.07  # share of each side left out at both ends (light corner medallions)
    profiles: int = 90  # profiles across a side where its edge is fitted ...
    few_profiles: int = 30  # ... and where only colours are compared
    min_side_px: int = 20  # a shorter side is no board's
    # The band's width in pixels: its share of the board's width times the longer of each pair of
    # sides, taken a little narrower (on a tilted board the longer side is the nearer one), at
    # least `min_band_px`.
    band_seen: float = 0.8
    min_band_px: float = 4.0
    reach_out: float = 0.9  # profiles run a band width in and this far out ...
    reach_out_second: float = 0.5  # ... on a second pass less: the edge is near
    steps_per_band: int = 40  # samples per band width along a profile ...
    min_step_px: float = 0.5  # ... but no finer than this
    band_from: float = 0.8  # the band's colour from this deep inside the edge ...
    band_to: float = 0.25  # ... to this deep (clear of the edge's blur) ...
    outside_from: float = 0.2  # ... and what lies outside from this far out
    min_samples: int = 10  # pixels of each needed to tell band and outside apart
    cov_ridge: float = 4.0  # added to their Lab covariances' diagonal: a noise floor for flat colours
    profile_blur: int = 3  # samples the band-to-outside score is smoothed over along a profile
    crossing_from: float = 0.6  # the edge is looked for from this deep inside
    min_crossings: float = 0.3  # share of the profiles that must cross it
    line_tol_per_band: int = 25  # a point on the line within the band's width / this (a pixel at least)
    line_rounds: int = 3  # the line's trimmed fit: rounds, ...
    line_sigmas: float = 2.5  # ... keeping points within this many robust standard deviations ...
    line_min_points: int = 5  # ... and at least this many
    full_separation: float = 3.0  # band and outside this many standard deviations apart: full contrast
    # The strip inside must differ from the map further in (`map_from`-`map_to` deep, `map_samples`
    # depths), else the edge is the band's inner one or inside the map; a Lab distance of
    # `full_map_contrast` counts fully.
    map_from: float = 2.6
    map_to: float = 1.8
    map_samples: int = 5
    full_map_contrast: float = 30.0
    # A side within `frame_share` of the long side (`frame_min_px` at least) of the frame's edge is
    # the frame: there the band is looked for inside, sampled every `frame_step` to `frame_depth`
    # deep, against the map from `frame_map_from` deep.
    frame_share: float = 0.01
    frame_min_px: float = 3.0
    frame_step: float = 0.05
    frame_depth: float = 2.2
    frame_map_from: float = 1.4
    max_corner_move: float = 0.08  # a refit moving a corner more (share of the diagonal) is not the board's side


@dataclass(frozen=True)
class OutlineConfig:
    """The board's outline by colour (`outline.py`): candidates, their sides refitted, the worst
    side rating the quad."""

    colours: OutlineColours = field(default_factory=OutlineColours)
    quads: QuadConfig = field(default_factory=QuadConfig)
    sides: SideConfig = field(default_factory=SideConfig)
    # A quad's quality: its worst side's agreement x band contrast, plus `mean_weight` of the mean
    # (0..1.25). A board's is `min_quality` at least; `good_quality` ends the search.
    mean_weight: float = 0.25
    min_quality: float = 0.15
    good_quality: float = 0.5
    side_fits: float = 0.3  # a side this good fits (seen sides of a board cut off; a side needing no completion)
    frame_side_cap: float = 0.6  # a side that is only the frame is less sure than a seen edge
    frame_band: float = 0.3  # less band than this inside a side on the frame: the board is cut off there
    map_fit_discount: float = 0.9  # an outline stepped out from the map's edge: its own edge was not seen
    # Three good sides (`good_side` each) and a missed fourth: the best `complete_tries` candidates
    # are completed, kept only for a clear gain (`complete_gain`: a side slid onto an inner edge can
    # score a little higher). The fourth slides along its neighbours from `slide_from` to `slide_to`
    # times their length, `slide_step` band widths a step, its strip sampled `strip_samples` times
    # from a band width in to `strip_out` out, the band `strip_band_from` to `SideConfig.band_to` deep.
    good_side: float = 0.35
    complete_tries: int = 3
    complete_gain: float = 0.05
    slide_from: float = 0.5
    slide_to: float = 3.0
    slide_step: float = 0.3
    strip_samples: int = 35
    strip_out: float = 0.7
    strip_band_from: float = 0.75
    # Which corner is the board's top-left: the city dots' response at 1 px/mm, spread over
    # `turn_slack_px` pixels (a dot ~2 mm out of place still counts), and the sides' proportions
    # weighted by `turn_shape_weight` (they break near-ties).
    turn_slack_px: int = 5
    turn_shape_weight: float = 0.02
    # Last of all (`outline.cut_map_quads`): the map cut from the table by OpenCV's GrabCut, seeded
    # with the pale part, on the photo reduced to `cut_side_px` on its long side, `cut_iterations`
    # rounds; the frame's outer `cut_frame_px` pixels are table.
    cut_side_px: int = 400
    cut_iterations: int = 4
    cut_frame_px: int = 3


@dataclass(frozen=True)
class CopperConfig:
    """What counts as the city dots' copper (HSV, OpenCV ranges, hue shifted by `HUE_SHIFT`): a
    weight per channel, 1 at the hue and falling to 0 `hue_reach` away; rising from 0 at
    `sat_from` (0..1) to 1 `sat_rise` higher; the same for the value."""

    hue: int = HUE_SHIFT + 12  # copper-red: OpenCV hue 12
    hue_reach: int = 14
    sat_from: float = 0.25
    sat_rise: float = 0.4
    value_from: float = 0.15
    value_rise: float = 0.3


@dataclass(frozen=True)
class DotConfig:
    """Checking an outline by the 36 city dots (`dots.check_outline`), and how a dot is seen (`dots.dot_map`,
    also measuring the template's dots)."""

    px_per_mm: float = 2.0  # the flattening the dots are found on (a dot is ~10 mm across)
    reach_mm: float = 14.0  # how far from its place a dot is looked for
    # A dot's copper-disc response, at least (0..1): low, since blur and dim light weaken a dot
    # and the homography's consensus, not this, tells dots from other things.
    min_response: float = 0.03
    inlier_mm: float = 2.5  # a dot agrees with the homography within this
    # Each dot is the strongest response within reach, or (above 0) the one nearest the dot's place
    # among those at least this share of the strongest (`vision.locate` asks so again where the
    # strongest fail: warm-lit red cars beside a city may outshine its dot).
    strong_share: float = 0.0
    min_fit: int = 8  # dots needed to fit a homography at all
    # Verified: of 36 dots, a board seen the right way round puts 29-36 on one homography on the
    # development photos, 20-35 on renders (blur, glare, cars beside the dots); turned half round
    # or mirrored, under 8 respond at all.
    min_verified: int = 20
    max_rms_mm: float = 1.8  # the right board: 0.5-1.0 mm
    # A dot's response: copper-ness over a disc minus over its surround.
    disc_mm: float = 5.0  # the disc's inner part the response averages (a city dot is ~10 mm across)
    surround_mm: float = 13.0  # the square it is compared with
    min_kernel_px: int = 3  # the disc's window at least (odd), however coarse the flattening
    peak_mm: float = 2.5  # a dot's centre: the weighted centroid of its response within this of the peak
    copper: CopperConfig = field(default_factory=CopperConfig)
    # The light's colour cast is taken out first: the map's paper (its median colour, flattened at
    # `paper_px_per_mm`, `map_inset_mm` in from the edge: the score track is red-brown) is made
    # `paper_grey`, treating paper darker than `paper_floor` as that (no huge gain on a black map).
    paper_grey: float = 200.0
    paper_px_per_mm: float = 0.25
    map_inset_mm: float = 40.0
    paper_floor: float = 8.0
    # Where the map's one gain leaves an outline unconfirmed, each dot's own paper within this square
    # sets its gain (light of two colours over the board); 0: never.
    local_paper_mm: float = 100.0


@dataclass(frozen=True)
class LayoutConfig:
    """Checking an outline by the tracks' layout (`layout.check_layout`), where the city dots cannot
    be made out: a board under `LocateConfig.min_px_per_mm`, a blurred photo (`vision.quality`), or
    too few dots showing on any outline (`DotConfig.min_verified`: a flash's glare, a dim noisy photo)."""

    px_per_mm: float = 0.25  # the coarse flattening it is judged on (a space is 2 x 6 pixels)
    # Ink is judged against the paper's median colour within this window (mm): wide enough that
    # paper is most of it among the tracks, narrow against a flash's hot spot or a shadow's edge.
    paper_mm: float = 60.0
    # Measured on the right outlines of the development photos and of 300 varied renders (seeds
    # 7500, 7600; 100 under a flash): 0.36-0.72, and on the same outlines turned half round or
    # mirrored: at most 0.13. A board is confirmed half way between, and clear of its own turned
    # outline by as much.
    min_score: float = 0.25
    min_margin: float = 0.15
    # An outline confirmed under the lowest score of those right outlines may be off by more than the
    # reading bears (a side on an inner edge): its corners are moved while the layout fits better
    # (`layout.polish`), by these shares of the board's diagonal in turn.
    right_score: float = 0.36
    polish_steps: tuple[float, ...] = (0.01, 0.005, 0.0025)


@dataclass(frozen=True)
class MatchConfig:
    """Finding the board by its printed look (`printed.match_board`)."""

    work_side: int = 800  # long side of the photo the features are found on, pixels
    features: int = 2000  # SIFT features kept on the photo
    # The last try, when nothing else stood: every feature the photo has (0: no limit). On a checked
    # cloth the strongest 2000 are the checks' corners, and the board's print gets none of them;
    # with all of them, real boards photographed again on such cloths (benchmarks/rephotograph.py)
    # matched with 39-333 agreeing, where the first try found no board.
    last_features: int = 0
    ratio: float = 0.8  # Lowe's ratio test on the two nearest reference descriptors
    ransac_px: float = 3.0  # MAGSAC threshold in work-image pixels
    ransac_iters: int = 5000  # MAGSAC's most iterations, and the confidence at which it stops sooner
    ransac_confidence: float = 0.999
    min_inliers: int = 25  # fewer and the match is not a board (a blank table: 0-10)


@dataclass(frozen=True)
class ReferenceConfig:
    """Making the printed reference from a flattened photo of the empty board (`printed.measure_reference`,
    `ttr template printed`); the packaged one (3000 features) was made with the defaults."""

    px_per_mm: float = 0.75  # the scale the board's features are found at (the board 596 px wide)
    features: int = 3000  # SIFT features kept
    min_features: int = 100  # fewer: not a flattened photo of the board


@dataclass(frozen=True)
class LocateConfig:
    """How outlines are found, refined, checked and scored."""

    work_side: int = WORK_SIDE  # long side of the image the search and the checks run on, pixels
    min_image_px: int = 32  # an image with a shorter side shows no board: nothing is searched
    dots: DotConfig = field(default_factory=DotConfig)
    layout: LayoutConfig = field(default_factory=LayoutConfig)
    match: MatchConfig = field(default_factory=MatchConfig)
    outline: OutlineConfig = field(default_factory=OutlineConfig)
    quality: QualityConfig = field(default_factory=QualityConfig)  # the photo-quality warnings and the blur test
    # An outline the dots would move less than this (mean over its corners) stands as found; the
    # dots' own scatter moves a right outline 1-3 mm on the development photos.
    consistent_mm: float = 4.5
    corrections: int = 3  # times the dots may put an outline right, while more of them agree
    max_outlines: int = 4  # colour outlines checked by the dots, best-fitting first, per search
    # The confidence is 1 while the dots say the outline is within `good_mm` (0.5 % of the board's
    # 950 mm diagonal) and 0 from `bad_mm` (1 %, the outline error that misreads tracks).
    good_mm: float = 4.75
    bad_mm: float = 9.5
    # How far off the corners may be by the dots' own scatter: their fit's rms over sqrt(dots),
    # times about this for carrying it from the dots out to the corners.
    dots_to_corners: float = 3.0
    # A corner (or the map) this share of the photo's long side outside the frame still counts as
    # inside: within the outline's own error.
    frame_tolerance: float = 0.005
    # Below this the city dots (10 mm) are a few pixels wide and cannot be relied on to confirm an
    # outline (the tracks' layout may, see LayoutConfig): at the true outline, fewer than
    # `DotConfig.min_verified` answered on 8 of 71 boards of 0.5-0.8 px/mm and on none of 117 from
    # 0.8 (the hostile renders, at full size and shrunk to 640 px, the seed-2026 renders, real
    # boards photographed again by benchmarks/rephotograph.py).
    min_px_per_mm: float = 0.8
    # The smallest board looked for in a photo it covers little of (`outline.for_photo`): coarser
    # than the dots need, such a board is confirmed by its tracks' layout. Down to here the reader
    # was measured to read as well as at 0.8-1.0 px/mm (the boards of 0.5-0.8 px/mm found in small
    # frames of the validation renders: 51 wrong tracks in 3,800, 1 unmarked, against 69 in 3,600,
    # 2 unmarked; docs/ablation.md).
    smallest_px_per_mm: float = 0.5
    # Where the strongest responses do not confirm an outline on a board seen at `min_px_per_mm` or
    # finer, each dot is looked for again as the response nearest its place of those at least this
    # share of the strongest (`DotConfig.strong_share`). Not on coarser boards: there a dot's
    # response is a blur of its neighbours', and the nearest would agree with any outline.
    nearest_share: float = 0.5
    # Where no outline is confirmed, the photo is searched once more with its colour cast evened out
    # (`outline.even_cast`): each channel scaled to the local grey, over a Gaussian this share of
    # the photo's long side; then again with the local brightness evened out too. The colour limits
    # of the band and the map's pale grey hold in one light; light of two colours (a window and a
    # lamp, a flash's white over a lamp's yellow), a warm lamp on a cream map or a flash's hot spot
    # moves them across the board. 0: not searched again.
    cast_reach: float = 1 / 16
