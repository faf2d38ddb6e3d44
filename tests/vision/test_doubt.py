"""Doubt that means something: a track's confidence is the photo's own evidence for its owner, per
space, calibrated; the rules make no reading surer; a doubtful track says why in one short line."""
import numpy as np
import pytest
from ttr_testing import read_tracks

from scoring.board import load_board
from vision.decide.doubt import (
    CAR_OR_NOT,
    DOUBT_KINDS,
    OWN_PRINT,
    TWO_COLOURS,
    WHICH_LANE,
    contest_kind,
    doubt_chance,
    doubt_warnings,
    evidence_margins,
)
from vision.decide.rules import player_index
from vision.reading import DOUBTFUL_TRACKS, SPACE_CLASSES
from vision.settings import DecideSettings, DoubtSettings

BOARD = load_board()
SINGLES = [t for t in BOARD.tracks if BOARD.double_of(t) is None]


def evidence(owners: dict[int, str], strength: float = 8.0, noise: float = 0.0, seed: int = 0):
    """Per-space log-likelihoods: each space of a listed track favours its owner, others favour empty."""
    rng = np.random.default_rng(seed)
    out = []
    for t in BOARD.tracks:
        ll = np.zeros((t.length, len(SPACE_CLASSES)))
        ll[:, player_index(owners[t.id]) if t.id in owners else 0] = strength
        out.append(ll + rng.normal(0, noise, ll.shape))
    return out


def single(colour: str, length: int):
    return next(t for t in SINGLES if t.color == colour and t.length == length)


def test_clear_evidence_is_sure_and_says_nothing():
    owners = {single("gray", 4).id: "red", single("gray", 2).id: "blue"}
    r = read_tracks(evidence(owners))
    assert not any(t.doubtful for t in r)
    assert all(t.confidence >= 0.99 and t.reason == "" for t in r)


def test_a_track_whose_spaces_disagree_is_doubtful_and_says_so():
    t = single("gray", 4)
    ll = evidence({})
    ll[t.id][:] = 0.0
    ll[t.id][:2, player_index("red")] = 8.0  # two spaces show red cars ...
    ll[t.id][2:, 0] = 7.0  # ... two look empty: red ahead by 1 (tempered), 0.25 a space
    r = read_tracks(ll)[t.id]
    assert r.owner == "red" and r.doubtful and r.confidence < DoubtSettings().below
    assert r.reason == "2 of 4 spaces look empty: a car off its space?"


def test_two_close_colours_are_doubtful_with_the_colours_named():
    t = single("gray", 4)
    ll = evidence({})
    ll[t.id][:] = 0.0
    ll[t.id][:, player_index("green")] = 6.0
    ll[t.id][:, player_index("black")] = 5.5
    r = read_tracks(ll)[t.id]
    assert r.owner == "green" and r.doubtful
    assert r.reason == "two colours close: green cars and black cars look alike in this photo"


def test_cars_on_print_of_their_own_colour_are_doubtful_with_that_reason():
    t = single("yellow", 4)
    ll = evidence({single("gray", 2).id: "yellow"})  # the yellow player is seen elsewhere
    ll[t.id][:] = 0.0
    ll[t.id][:, 0] = 6.0
    ll[t.id][:, player_index("yellow")] = 5.0  # empty ahead by 2 over the track: 0.5 a space
    r = read_tracks(ll)[t.id]
    assert r.owner is None and r.doubtful
    assert r.reason == "yellow cars on a yellow track look like the print: is it nobody or yellow cars?"


def test_a_player_read_on_most_tracks_of_their_own_print_colour_is_doubted_there():
    """Players seldom hold more than half the tracks printed in their colour; another copy's print
    of that colour read as cars gives just this reading."""
    red = [t.id for t in BOARD.tracks if t.color == "red"]
    elsewhere = single("gray", 4).id
    half = len(red) // 2  # 3 of 7: as many as players hold
    r = read_tracks(evidence({i: "red" for i in red[:half]} | {elsewhere: "red"}))
    assert [r[i].owner for i in red[:half]] == ["red"] * half and not any(t.doubtful for t in r)
    r = read_tracks(evidence({i: "red" for i in red[:half + 1]} | {elsewhere: "red"}))
    assert all(r[i].owner == "red" and r[i].doubtful for i in red[:half + 1])
    assert r[red[0]].reason == f"red cars on {half + 1} of the {len(red)} red tracks, more than players hold: " \
                               "red print read as cars?"
    assert r[red[0]].confidence >= 0.99  # the evidence is as sure as it was: only the mark says so
    assert not r[elsewhere].doubtful and not any(t.doubtful for t in r if t.track_id not in red)
    off = DoubtSettings(own_print_most=1.0)
    assert not any(t.doubtful for t in read_tracks(evidence({i: "red" for i in red} | {elsewhere: "red"}), doubt=off))


def test_the_car_bound_makes_no_reading_surer():
    """Green's 48 cars are taken by clear claims; a track that looks green, a little more than
    black, is given to black by the bound. Its confidence is the photo's for black: doubtful, and
    it says the rules chose (a wrong green claim elsewhere would push the true green track so)."""
    x = single("gray", 3)
    green, total = [], 0
    for t in sorted(SINGLES, key=lambda t: -t.length):
        if t.id != x.id and t.color != "green" and total + t.length <= 48:
            green.append(t.id)
            total += t.length
    assert total == 48
    ll = evidence({i: "green" for i in green})
    ll[x.id][:] = 0.0
    ll[x.id][:, player_index("green")] = 3.0
    ll[x.id][:, player_index("black")] = 2.0
    # The bound alone: with green's 48 cars the game looks over, and black's one claim would be
    # weighed as a player with too few cars (`priors.unlikely_players`).
    r = read_tracks(ll, decide=DecideSettings(few_cars_prior=()))
    assert r[x.id].owner == "black"
    assert r[x.id].doubtful and r[x.id].confidence < 0.5
    assert r[x.id].reason == ("the photo looks more like green cars; the rules (48 cars a colour, doubles) "
                              "gave it black cars")
    assert all(not r[i].doubtful for i in green)


@pytest.mark.parametrize("seed", range(4))
def test_every_doubtful_track_says_why_in_one_short_line(seed):
    rng = np.random.default_rng(seed)
    owners = {int(i): str(rng.choice(["red", "blue", "green", "yellow", "black"]))
              for i in rng.choice(100, 40, replace=False)}
    r = read_tracks(evidence(owners, strength=1.5, noise=1.5, seed=seed))
    assert any(t.doubtful for t in r)
    for t in r:
        assert 0.0 <= t.confidence <= 1.0
        assert bool(t.reason) == t.doubtful
        assert "\n" not in t.reason and len(t.reason) <= 100
    (notice,) = doubt_warnings(r)
    assert notice.code == DOUBTFUL_TRACKS
    warning = str(notice)
    assert "\n" not in warning and "please check" in warning
    surest_doubt = min((t for t in r if t.doubtful), key=lambda t: t.confidence)
    assert f"{surest_doubt.a}-{surest_doubt.b} ({surest_doubt.color}): {surest_doubt.reason}" in warning


def test_the_json_keeps_its_fields_and_adds_the_reason():
    t = single("gray", 4)
    ll = evidence({})
    ll[t.id][:2, player_index("red")] = 8.0
    ll[t.id][2:, 0] = 7.0
    for r in read_tracks(ll):
        d = r.to_dict()
        assert set(d) == {"a", "b", "color", "length", "owner", "confidence", "doubtful", "reason"}
        assert d["reason"] == r.reason


def test_the_chance_of_a_wrong_reading_falls_with_the_margin_per_space():
    cfg = DoubtSettings()
    for kind in range(len(DOUBT_KINDS)):
        chances = [doubt_chance(m, 4, kind, cfg) for m in np.linspace(-2, 12, 15)]
        assert all(a > b for a, b in zip(chances, chances[1:]))
        # Per space: a 6-car track is no surer than a 2-car one with the same evidence a space.
        assert doubt_chance(6.0, 6, kind, cfg) == pytest.approx(doubt_chance(2.0, 2, kind, cfg))
        # A reading the rules made against the photo is more likely wrong than right.
        assert doubt_chance(-2.0, 2, kind, cfg) > 0.5


def test_contest_kinds():
    red, yellow, empty = player_index("red"), player_index("yellow"), 0
    assert contest_kind("yellow", empty, yellow) == OWN_PRINT
    assert contest_kind("yellow", yellow, empty) == OWN_PRINT
    assert contest_kind("yellow", yellow, red) == TWO_COLOURS
    assert contest_kind("gray", red, yellow) == TWO_COLOURS
    assert contest_kind("gray", empty, red) == CAR_OR_NOT
    assert contest_kind("yellow", empty, red) == CAR_OR_NOT
    # The same claims with a double's lanes swapped, whatever the colours: which lane.
    assert contest_kind("yellow", yellow, empty, swapped=True) == WHICH_LANE
    assert contest_kind("gray", red, yellow, swapped=True) == WHICH_LANE


def test_the_runner_up_of_a_double_is_its_lanes_swapped_only_where_they_are():
    # Lanes printed apart, red on one and the other nearly as red: the likeliest other reading of
    # both lanes is the red cars on the other lane (WHICH_LANE). With the other lane plainly empty,
    # it is no red cars on the double at all.
    i, j = next((t.id, BOARD.double_of(t).id) for t in BOARD.tracks
                if BOARD.double_of(t) is not None and t.length == BOARD.double_of(t).length
                and t.color != BOARD.double_of(t).color and "red" not in (t.color, BOARD.double_of(t).color))
    choice = np.zeros(len(BOARD.tracks), int)
    choice[i] = player_index("red")
    scores = np.zeros((len(BOARD.tracks), len(SPACE_CLASSES)))
    scores[:, 0] = 8.0
    scores[i] = -8.0
    scores[i, 0], scores[i, player_index("red")] = 0.0, 8.0
    scores[j, player_index("red")] = 7.0
    _, runner, swapped = evidence_margins(scores, choice, BOARD)
    assert set(np.flatnonzero(swapped)) == {i, j} and runner[i] == 0 and runner[j] == player_index("red")
    scores[j, player_index("red")] = -8.0
    _, runner, swapped = evidence_margins(scores, choice, BOARD)
    assert not swapped[i] and runner[i] == 0


def test_an_empty_lane_as_red_as_its_claimed_neighbour_asks_which_lane_the_cars_are_on():
    i, j = next((t.id, BOARD.double_of(t).id) for t in BOARD.tracks
                if BOARD.double_of(t) is not None and t.length == BOARD.double_of(t).length
                and "red" not in (t.color, BOARD.double_of(t).color))
    ll = evidence({i: "red", single("gray", 2).id: "blue"})
    ll[j][:] = 0.0
    ll[j][:, player_index("red")] = ll[i][:, player_index("red")] - 1.0  # nearly as red as lane i
    r = read_tracks(ll)
    assert r[i].owner == "red" and r[j].owner is None
    assert r[j].doubtful and r[i].doubtful  # the red cars may be on either lane
    assert r[j].reason == "the red cars of the next lane may sit on this one"
    assert r[i].reason == "two lanes side by side: red cars or nobody on this one?"


def test_which_of_two_alike_lanes_holds_the_cars_is_no_doubt_about_the_reading():
    # Lanes printed alike (gray and gray): red on one and nobody on the other scores as red on the
    # other and nobody on the first, so the lanes' likeness casts no doubt; lanes printed apart
    # (the test above) do, since the printed colour says which track a player took.
    i, j = next((t.id, BOARD.double_of(t).id) for t in BOARD.tracks
                if BOARD.double_of(t) is not None and t.color == BOARD.double_of(t).color == "gray"
                and t.length == BOARD.double_of(t).length)
    ll = evidence({i: "red", single("gray", 2).id: "blue"})
    ll[j][:] = 0.0
    ll[j][:, player_index("red")] = ll[i][:, player_index("red")] - 1.0  # nearly as red as lane i
    r = read_tracks(ll)
    assert sorted(str(r[k].owner) for k in (i, j)) == ["None", "red"]
    assert not r[i].doubtful and not r[j].doubtful
    # The doubt that remains is about the claim: red cars or none on the double at all.
    ll[i][:, 0] = ll[i][:, player_index("red")] - 0.5
    ll[j][:, 0] = ll[j][:, player_index("red")] + 0.5
    r = read_tracks(ll)
    assert r[i].doubtful or r[j].doubtful


def test_a_track_under_glare_is_less_sure_and_says_glare_where_the_glare_makes_it_doubtful():
    """Under glare a track is as sure as its calibration under glare says at its margin: never
    surer than without glare; where the margin is wide, sure still; where the evidence alone would
    be sure but not under glare, doubtful for the glare."""
    cfg = DoubtSettings()
    red, empty, half = single("gray", 4), single("gray", 2), single("gray", 6)
    glare = [np.zeros(t.length, bool) for t in BOARD.tracks]
    glare[red.id][:] = glare[empty.id][:] = True
    glare[half.id][:2] = True  # two of six spaces: not under glare
    said_glare = set()
    for strength in np.arange(0.5, 8.01, 0.25):
        ll = evidence({red.id: "red"}, strength=float(strength))
        plain = read_tracks(ll)
        r = read_tracks(ll, space_glare=glare)
        for tid in (red.id, empty.id):
            assert r[tid].owner == plain[tid].owner  # glare makes a reading less sure, never different
            assert r[tid].confidence <= plain[tid].confidence
            if not plain[tid].doubtful and r[tid].doubtful:
                said_glare.add(tid)
                assert r[tid].reason == ("glare over this track can hide cars: check whether it holds any"
                                         if tid == empty.id else
                                         "glare over this track can wash cars out: check they are red")
        assert r[half.id].confidence == plain[half.id].confidence
        others = [t.id for t in BOARD.tracks if not glare[t.id].any()]
        assert all(r[i].confidence == plain[i].confidence for i in others)
    assert said_glare == {red.id, empty.id}
    # Plain evidence shows through the glare: sure still, if less than without it.
    assert not r[red.id].doubtful and not r[empty.id].doubtful
    assert r[red.id].confidence < plain[red.id].confidence
    assert r[red.id].confidence >= cfg.below


def test_under_glare_a_track_the_evidence_already_doubts_keeps_its_own_reason():
    t = single("gray", 4)
    ll = evidence({})
    ll[t.id][:] = 0.0
    ll[t.id][:2, player_index("red")] = 8.0
    ll[t.id][2:, 0] = 7.0
    glare = [np.ones(x.length, bool) for x in BOARD.tracks]
    plain, r = read_tracks(ll)[t.id], read_tracks(ll, space_glare=glare)[t.id]
    assert plain.doubtful and r.reason == plain.reason and r.confidence <= plain.confidence
