"""The space classifier's evidence (`SpaceClassifier.loglik`): its empty-or-car answer is used as it
says, and its colour answer counts as much as `NetSettings.colour_trust` says: in full at 1, not at
all at 0."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.evidence.net import load_classifier
from vision.settings import NetSettings

net = load_classifier()
pytestmark = pytest.mark.skipif(net is None, reason="no packaged space classifier")

FLOOR = NetSettings().floor
# Six answers (empty, then the five car colours), each above the floor, as the net's softmax gives.
answers = st.lists(st.floats(0.05, 1.0), min_size=6, max_size=6).map(lambda v: np.array(v) / np.sum(v)).filter(
    lambda p: p.min() > FLOOR)


@settings(max_examples=50, deadline=None)
@given(p=answers, trust=st.floats(0.0, 1.0))
def test_empty_or_car_is_used_as_said_whatever_the_trust(p, trust):
    ll = net.loglik(p[None, :], NetSettings(colour_trust=trust))[0]
    assert ll[0] == pytest.approx(np.log(p[0]))
    # Colours the net finds equally likely share the car's evidence whatever the trust.
    even = np.r_[p[0], np.full(5, (1 - p[0]) / 5)]
    assert np.allclose(net.loglik(even[None, :], NetSettings(colour_trust=trust))[0][1:], np.log(1 - p[0]))


@settings(max_examples=50, deadline=None)
@given(p=answers)
def test_the_colour_answer_counts_in_full_at_trust_one_and_not_at_zero(p):
    full = net.loglik(p[None, :], NetSettings(colour_trust=1.0))[0]
    none = net.loglik(p[None, :], NetSettings(colour_trust=0.0))[0]
    half = net.loglik(p[None, :], NetSettings(colour_trust=0.5))[0]
    said = np.log(p[1:, None]) - np.log(p[None, 1:])  # log-odds between two colours, as the net says them
    assert full[1:, None] - full[None, 1:] == pytest.approx(said, abs=1e-9)
    assert np.allclose(none[1:], none[1])
    assert half[1:, None] - half[None, 1:] == pytest.approx(said / 2, abs=1e-9)
