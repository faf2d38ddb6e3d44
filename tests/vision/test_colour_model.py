"""Colour evidence per space (vision.evidence.colour.ColourModel): empty print, cars, a car covering part of
its space, and a shadow that is not a car."""
from dataclasses import replace

import numpy as np

from vision.evidence.colour import ColourModel, EmptyReference
from vision.reading import SPACE_CLASSES
from vision.settings import ColourSettings

CAR_LAB = dict(ColourSettings().car_lab)
PRINTED_LAB = dict(ColourSettings().printed_lab)

GRAY_PRINT = np.array([160.0, 128.0, 126.0])


def read(lab, lab_car=None, isolated=None, n_tracks=12):
    """Per-space winners over `n_tracks` one-space gray tracks, the first showing `lab`; the rest
    plain empty print (so the photo's adaptation has something to adapt to)."""
    labs = np.tile(GRAY_PRINT, (n_tracks, 1))
    labs[0] = lab
    cars = labs.copy()
    if lab_car is not None:
        cars[0] = lab_car
    iso = np.zeros(n_tracks, bool)
    if isolated is not None:
        iso[0] = isolated
    ref = EmptyReference(np.tile(GRAY_PRINT, (n_tracks, 1)))
    ll = ColourModel().loglik(labs, ["gray"] * n_tracks, np.arange(n_tracks), ref, cars, iso)
    return [SPACE_CLASSES[i] for i in ll.argmax(axis=1)]


def test_print_reads_empty_and_a_car_reads_its_colour():
    assert read(GRAY_PRINT)[0] == "empty"
    for colour in ("red", "blue", "green", "yellow", "black"):
        assert read(np.array(CAR_LAB[colour]))[0] == colour


def test_a_car_covering_half_its_space_still_reads():
    half_red = (GRAY_PRINT + np.array(CAR_LAB["red"])) / 2
    assert read(half_red)[0] == "red"
    # With an empty view the red pixels are told apart: the car shows its own colour.
    assert read(half_red, lab_car=np.array(CAR_LAB["red"]), isolated=True)[0] == "red"


def test_a_shadow_beside_a_car_is_not_a_black_car():
    """A neighbour's shadow darkens part of an empty space: the changed pixels are the print,
    darker, with its own hue. Read as a mix of print and car it looks like part of a dark car; seen
    alone (isolated against the empty view) it is no car's colour, and the space stays empty."""
    shadow = GRAY_PRINT * np.array([0.7, 1.0, 1.0]) + np.array([0.0, 0.0, 2.0])
    whole = 0.55 * GRAY_PRINT + 0.45 * shadow
    assert read(shadow)[0] != "empty"  # what the mix reading makes of the shadow measured alone
    assert read(whole, lab_car=shadow, isolated=True)[0] == "empty"


def test_glare_on_dark_print_is_not_a_car():
    """Glossy black print under a lamp: the print mixed with the light's white, still neutral. It is
    not a car; a green car of the same lightness (its own hue) still is."""
    black_print = np.array([50.0, 128.0, 127.0])
    glare = black_print + 0.3 * (np.array([255.0, 128.0, 128.0]) - black_print)
    labs = np.tile(black_print, (12, 1))
    labs[0] = glare
    labs[1] = np.array(CAR_LAB["green"]) * [glare[0] / CAR_LAB["green"][0], 1, 1]
    ll = ColourModel().loglik(labs, ["black"] * 12, np.arange(12))
    assert SPACE_CLASSES[ll[0].argmax()] == "empty"
    assert SPACE_CLASSES[ll[1].argmax()] == "green"


def test_under_glare_a_car_may_be_washed_with_white_and_the_space_says_nothing_of_the_photos_colours():
    """Spaces under glare: a dark car there, washed towards white, is explained better than by the
    print beside it alone; and those spaces do not move the photo's print and car colours, so the
    other spaces read as if the glared ones were not on the board."""
    white = np.array([255.0, 128.0, 128.0])
    red_print = np.array(PRINTED_LAB["red"], float)
    rng = np.random.default_rng(0)
    n = 16
    labs = red_print + rng.normal(0, 3, (n, 3))
    labs[:4] = red_print + 0.3 * (white - red_print)  # glared empty print
    labs[4] = np.array(CAR_LAB["black"]) + 0.3 * (white - np.array(CAR_LAB["black"]))  # a washed black car
    labs[5] = np.array(CAR_LAB["blue"])  # a car away from the glare
    glare = np.zeros(n, bool)
    glare[:5] = True
    model = ColourModel()
    plain = model.loglik(labs, ["red"] * n, np.arange(n))
    under = model.loglik(labs, ["red"] * n, np.arange(n), glare=glare)
    black = SPACE_CLASSES.index("black")
    assert under[4, black] - under[4, 0] > plain[4, black] - plain[4, 0] + 1.0
    alone = model.loglik(labs[5:], ["red"] * (n - 5), np.arange(n - 5))
    assert np.allclose(under[5:], alone)
    assert not np.allclose(plain[5:], alone)  # without word of glare, the glared print moves them


# Blue cars on four blue tracks and one blue track empty, the colours measured on the bundled example.
BLUE_TRACKS = np.repeat(np.arange(5), [4, 6, 6, 6, 6])
BLUE_LABS = np.where((BLUE_TRACKS == 0)[:, None], np.array([99.0, 145.0, 71.0]), np.array([86.0, 128.0, 94.0]))


def blue_other(on_empty: list[float], on_cars: list[float]) -> np.ndarray:
    """The other evidence's log-likelihoods: `on_empty` on the empty track, `on_cars` on the others."""
    other = np.zeros((len(BLUE_LABS), 6))
    other[BLUE_TRACKS == 0] = np.log(on_empty)
    other[BLUE_TRACKS > 0] = np.log(on_cars)
    return other


def blue_car_margin(cfg: ColourSettings = ColourSettings(), other: np.ndarray | None = None) -> np.ndarray:
    """Per track, the colours' blue cars against empty."""
    ll = ColourModel(cfg).loglik(BLUE_LABS, ["blue"] * len(BLUE_LABS), BLUE_TRACKS, other_ll=other)
    blue = SPACE_CLASSES.index("blue")
    return np.array([ll[BLUE_TRACKS == k, blue].sum() - ll[BLUE_TRACKS == k, 0].sum() for k in range(5)])


def test_the_print_is_learned_from_the_spaces_all_the_evidence_calls_print():
    """Blue cars on four blue tracks and one blue track empty (the colours measured on the bundled
    example): from the colours alone, the photo's blue print is learned mostly from the cars, and
    the cars read as print. With the other evidence (a net fairly sure of cars there, sure the
    fifth is empty) joining in which spaces show print, the print is learned from the empty track
    and the cars read as cars, by the colours themselves."""
    alone = blue_car_margin()
    joined = blue_car_margin(other=blue_other([0.95] + [0.05] * 5, [0.3] + [0.7] * 5))
    assert (alone[1:] < 0).all() and alone[0] < 0
    assert (joined[1:] > 5).all() and joined[0] < -5


def test_the_first_round_learns_the_print_from_what_the_other_evidence_calls_print():
    """The same blue tracks with the other evidence sure only of the empty track, undecided between
    cars and print on the others. Where the first round's say of print and cars comes from the
    colours and the other evidence together, the generic colours lead it: the cars' dark blue is
    nearer the generic print than the photo's own print is, so the print is learnt from the cars
    and they read as print. Where it comes from the other evidence alone (`first_from_others`),
    the print is learnt from the empty track first and the cars read as cars."""
    other = blue_other([0.95] + [0.01] * 5, [0.5] + [0.5] * 5)  # each car colour as likely as the print
    together = blue_car_margin(replace(ColourSettings(), first_from_others=False), other)
    first_from_others = blue_car_margin(replace(ColourSettings(), first_from_others=True), other)
    assert (together[1:] < 0).all()
    assert (first_from_others[1:] > 2).all() and first_from_others[0] < -5
