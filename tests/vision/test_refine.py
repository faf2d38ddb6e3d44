"""The net's second judgement (vision.refine): the half-turned second look where the reading may
turn on the net, given a stand-in net that keeps what it was shown."""
import numpy as np
import pytest

from vision.read import BoardView, Reader
from vision.refine import second_look
from vision.synth.render import render_flat_board

OVERHEAD = np.array([397.0, 262.0, 700.0])  # the camera over the board's middle


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

