"""The car-colour net (models/space_car_colour.onnx): it names the plastic colour of the cars on a board
printed and lit as the development board never was, it keeps naming them in a warmer light, and the
reader asks it only where a car may stand, as evidence about which colour and never about whether."""
from dataclasses import replace

import numpy as np
import pytest

from scoring.rules import PLAYER_COLORS
from vision.evidence.net import load_car_colour
from vision.fuse import space_probs
from vision.read import Reader
from vision.settings import ReaderSettings
from vision.synth.positions import random_position
from vision.synth.render import default_model, render_photo
from vision.synth.world import random_world

pytestmark = pytest.mark.skipif(load_car_colour() is None, reason="no packaged car-colour net")


@pytest.fixture(scope="module")
def other_copy():
    """A board of another print run in another light (seed 31: not one the net was trained on, which
    are 20000 and up), its reader's trace and each space's car colour (index into PLAYER_COLORS, -1
    where it is empty)."""
    reader = Reader()
    rng = np.random.default_rng(31)
    world = random_world([31, 1], default_model().printed_bgr)
    claims = random_position(rng, reader.board, n_players=5)
    photo = render_photo(rng, claims, world.phone.size_wh, world=world)
    owner = np.full(len(reader.board.tracks), -1)
    for colour, ids in claims.items():
        owner[ids] = PLAYER_COLORS.index(colour)
    return reader, reader.trace(photo.image_bgr), owner[reader.track_ids]


def named(reader, patches, colour) -> float:
    """The share of car patches whose likeliest colour is their car's."""
    return float(np.mean(reader.car_colour.predict(patches).argmax(axis=1) == colour))


def test_the_net_names_the_cars_colours_on_another_copy(other_copy):
    reader, trace, colour = other_copy
    car = colour >= 0
    assert set(colour[car]) == set(range(len(PLAYER_COLORS)))
    assert named(reader, trace.samples.net_patches[car], colour[car]) > 0.9


def test_the_net_names_them_in_a_warmer_light(other_copy):
    """The patches as under a tungsten lamp (blue down, red up, a fifth each way): the cars' colours
    are still named, as a player names them, relative to the light."""
    reader, trace, colour = other_copy
    car = colour >= 0
    warm = np.clip(trace.samples.net_patches[car] * np.array([0.8, 1.0, 1.2]), 0, 255).astype(np.uint8)
    assert named(reader, warm, colour[car]) > 0.85


def test_the_reader_asks_it_only_where_a_car_may_stand(other_copy):
    reader, trace, colour = other_copy
    said = trace.evidence.sources["car colour"]
    assert np.allclose(said[:, 0], 0.0) and np.allclose(said.max(axis=1), 0.0)  # never for or against empty
    assert np.allclose(sum(trace.evidence.sources.values()), trace.evidence.loglik)
    # What the rest said of each space: the evidence without the net's part.
    before = space_probs(trace.evidence.loglik - said)[:, 0]
    asked = np.any(said < -1e-9, axis=1)
    assert np.all(1.0 - before[asked] >= reader.settings.fuse.car_colour_from)
    assert asked[colour >= 0].mean() > 0.9 and asked[colour < 0].mean() < 0.5
    s = ReaderSettings()
    without = Reader(settings=replace(s, fuse=replace(s.fuse, car_colour=0.0))).trace_view(trace.view)
    assert "car colour" not in without.evidence.sources
    assert np.allclose(without.evidence.loglik, trace.evidence.loglik - said)
