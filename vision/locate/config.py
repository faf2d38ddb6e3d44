"""Every setting of the board locator's find-and-check stages, in one frozen tree.

The colour outline (`outline.py`) keeps its colour limits beside the code that explains them; what
decides between outlines, and when one is refused, lives here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from vision.config import WORK_SIDE, QualityConfig

# Red wraps round OpenCV's hue 0: hues are shifted by this before a red-brown or copper range is
# taken, so that each range is one interval.
HUE_SHIFT = 12


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
    min_fit: int = 8  # dots needed to fit a homography at all
    # Verified: of 36 dots, a board seen the right way round puts 29-36 on one homography on the
    # development photos, 20-35 on renders (blur, glare, cars beside the dots); turned half round
    # or mirrored, under 8 respond at all.
    min_verified: int = 20
    max_rms_mm: float = 1.8  # the right board: 0.5-1.0 mm
    # A dot's response: copper-ness over a disc minus over its surround.
    disc_mm: float = 5.0  # the disc's inner part the response averages (a city dot is ~10 mm across)
    surround_mm: float = 13.0  # the square it is compared with
    min_kernel_px: int = 3  # the disc's window at least (odd): a dot of fewer pixels is noise
    peak_mm: float = 2.5  # a dot's centre: the weighted centroid of its response within this of the peak
    copper: CopperConfig = field(default_factory=CopperConfig)
    # The light's colour cast is taken out first: the map's paper (its median colour, flattened at
    # `paper_px_per_mm`, `map_inset_mm` in from the edge: the score track is red-brown) is made
    # `paper_grey`, treating paper darker than `paper_floor` as that (no huge gain on a black map).
    paper_grey: float = 200.0
    paper_px_per_mm: float = 0.25
    map_inset_mm: float = 40.0
    paper_floor: float = 8.0


@dataclass(frozen=True)
class LayoutConfig:
    """Checking an outline by the tracks' layout (`layout.check_layout`), where the city dots cannot
    be made out: a board under `LocateConfig.min_px_per_mm`, or a blurred photo (`vision.quality`)."""

    px_per_mm: float = 0.25  # the coarse flattening it is judged on (a space is 2 x 6 pixels)
    # Measured on the right outlines of renders and of the development photos shrunk to 480-640
    # pixels (0.34-0.79), and on the same outlines turned half round or mirrored (-0.01-0.12):
    # a board is confirmed half way between, and clear of its own turned outline by as much.
    min_score: float = 0.25
    min_margin: float = 0.15


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
