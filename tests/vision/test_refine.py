"""The net's second judgements (vision.refine): the half-turned second look where the reading may
turn on the net, and a lane beside a claimed lane judged again with that lane shown bare. Each is
given a stand-in net that keeps what it was shown."""
import cv2
import numpy as np
import pytest

from scoring.board import load_board
from vision.read import BoardView, Reader
from vision.reading import SPACE_CLASSES
from vision.refine import lanes_alone, second_look
from vision.synth.render import render_flat_board

BOARD = load_board()
OVERHEAD = np.array([397.0, 262.0, 700.0])  # the camera over the board's middle
YELLOW, BLACK = SPACE_CLASSES.index("yellow"), SPACE_CLASSES.index("black")


class StandIn:
    """A net that answers `answer(patches)` and keeps every batch it was shown."""

    def __init__(self, answer):
        self.answer, self.batches = answer, []

    def predict(self, patches):
        self.batches.append(np.array(patches))
        return self.answer(patches)


@pytest.fixture(scope="module")
def reader():
    return Reader()


def _trace(reader, claims):
    flat = render_flat_board(np.random.default_rng(5), claims, camera_mm=OVERHEAD)
    return reader.trace_view(BoardView.of_flattened(flat, OVERHEAD))


def _reading(reader, claimed: dict[int, int]) -> np.ndarray:
    """(N, 6) fused evidence that reads the tracks of `claimed` ({track id: class}) claimed, the rest empty."""
    ll = np.zeros((len(reader.track_ids), len(SPACE_CLASSES)))
    ll[:, 0] = 5.0
    for tid, h in claimed.items():
        ll[reader.track_ids == tid] = 0.0
        ll[reader.track_ids == tid, h] = 5.0
    return ll


def test_the_second_look_is_half_turned_where_the_print_is_a_players_or_colour_and_net_disagree(reader):
    trace = _trace(reader, {})

    def lopsided(patches):  # 'car' (P(empty) 0.1) for a patch brighter on its left half, else 'empty' (0.9)
        half = patches.shape[2] // 2
        p = np.zeros((len(patches), 6))
        p[:, 0] = np.where(patches[:, :, :half].mean(axis=(1, 2, 3)) > patches[:, :, half:].mean(axis=(1, 2, 3)),
                           0.1, 0.9)
        p[:, 1] = 1 - p[:, 0]
        return p

    net = StandIn(lopsided)
    n = len(reader.track_ids)
    rng = np.random.default_rng(3)
    patches = rng.integers(0, 255, trace.samples.net_patches.shape).astype(np.uint8)
    samples = type(trace.samples)(trace.samples.printed, patches, trace.samples.net_offsets_px, trace.samples.car_lab)
    first = lopsided(patches)
    colour_ll = np.zeros((n, 6))
    colour_ll[:, 1] = np.where(np.arange(n) % 2 == 0, 2.0, -2.0)  # the colours: a car on the even spaces
    probs = second_look(net, samples, first, reader.spaces, colour_ll)

    again = reader.spaces.player_printed | ((first[:, 0] < 0.5) != (np.arange(n) % 2 == 0))
    assert 10 < again.sum() < n  # the case covers both kinds of space
    assert len(net.batches) == 1 and np.array_equal(net.batches[0], patches[again][:, ::-1, ::-1])  # half-turned
    # The stand-in's two looks at a random patch are opposite: their mean is 0.5; one look stays 0.1 / 0.9.
    assert np.allclose(probs[again, 0], 0.5)
    assert set(np.round(probs[~again, 0], 3)) <= {0.1, 0.9}
    assert np.array_equal(first, lopsided(patches))  # the first look is kept as it was


def test_a_lane_beside_a_claimed_lane_is_judged_again_with_that_lane_bare(reader):
    """Chicago-Pittsburgh is orange and black. With yellow cars on the orange lane, the black lane's
    patch shows them; it is judged a second time with the orange lane painted in its print colour,
    its own lane untouched. Lanes beside an empty lane, and single tracks, are judged once."""
    orange = next(t for t in BOARD.tracks if {t.a, t.b} == {"Chicago", "Pittsburgh"} and t.color == "orange")
    black = BOARD.double_of(orange)
    trace = _trace(reader, {"yellow": [orange.id]})
    net = StandIn(lambda patches: np.tile([0.95, 0, 0, 0, 0.05, 0], (len(patches), 1)))
    probs = np.tile([0.9, 0, 0, 0, 0.1, 0], (len(reader.track_ids), 1))
    out = lanes_alone(net, trace.lit, trace.samples, probs, reader.spaces, _reading(reader, {orange.id: YELLOW}),
                      reader.geometry)
    mine = np.flatnonzero(reader.track_ids == black.id)
    # The black lane's spaces, then (printed in a player's colour) the same half-turned.
    assert [len(b) for b in net.batches] == [len(mine), len(mine)]
    assert np.allclose(out[mine, 0], 0.95) and np.array_equal(np.delete(out, mine, 0), np.delete(probs, mine, 0))

    def yellow_share(patches):
        lab = cv2.cvtColor(np.ascontiguousarray(patches).reshape(-1, patches.shape[2], 3), cv2.COLOR_BGR2LAB)
        return float(((lab[..., 2] > 165) & (lab[..., 1] < 140)).mean())  # yellow, not orange

    first, again = trace.samples.net_patches[mine], net.batches[0]
    assert yellow_share(first) > 0.05  # the orange lane's yellow cars were in view
    assert yellow_share(again) < 0.2 * yellow_share(first)  # now the orange lane shows its print
    s = first.shape[1]
    own = np.s_[:, s // 2 - 3:s // 2 + 3, s // 4:3 * s // 4]  # the black lane itself is untouched
    assert np.abs(first[own].astype(int) - again[own].astype(int)).mean() < 2.0


@pytest.mark.parametrize("neighbour_claimed, beside_looks_like", [(True, "black"), (True, "red"), (False, "red")])
def test_a_grey_lane_beside_a_claimed_lane_is_judged_again(reader, neighbour_claimed, beside_looks_like):
    """Kansas City-Omaha is two grey lanes. Black cars on one: the other lane's patch shows them, and
    whatever car the net then sees there (the neighbour's black, or another colour: an empty lane
    beside black cars was read green) the lane is judged again with the claimed lane painted bare.
    Beside an empty lane it is not."""
    claimed = next(t for t in BOARD.tracks if {t.a, t.b} == {"Kansas City", "Omaha"})
    other = BOARD.double_of(claimed)
    trace = _trace(reader, {"black": [claimed.id]} if neighbour_claimed else {})
    net = StandIn(lambda patches: np.tile([0.98, 0, 0, 0, 0, 0.02], (len(patches), 1)))
    reading = _reading(reader, {claimed.id: BLACK} if neighbour_claimed else {})
    reading[reader.track_ids == other.id, SPACE_CLASSES.index(beside_looks_like)] = 4.0  # it looks that a little
    probs = np.tile([0.98, 0, 0, 0, 0, 0.02], (len(reader.track_ids), 1))
    lanes_alone(net, trace.lit, trace.samples, probs, reader.spaces, reading, reader.geometry)
    judged = [len(b) for b in net.batches]
    assert judged == ([int(np.sum(reader.track_ids == other.id))] if neighbour_claimed else [])
