"""A phone's own look (vision/synth/phone_look.py): vivid colours and HDR tone mapping change a
photo as a phone's processing does, and a plain look leaves it as it was."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.synth.phone_look import LOOKS, PhoneLook, apply_look, random_look


def _board(h=240, w=320):
    """Paper lit from one side (a broad slope), with a dark red print patch in its middle."""
    ramp = np.linspace(120, 230, w, dtype=np.float32)[None, :, None]
    img = np.repeat(np.repeat(ramp, h, axis=0), 3, axis=2)
    img[110:130, 150:170] *= np.array([0.25, 0.25, 0.6], np.float32)  # BGR: red print, darker than paper
    return np.clip(img, 0, 255).astype(np.uint8)


def test_a_plain_look_leaves_the_photo_as_it_was():
    img = _board()
    assert np.array_equal(apply_look(img, PhoneLook()), img)


@settings(max_examples=25, deadline=None)
@given(b=st.integers(0, 255), g=st.integers(0, 255), r=st.integers(0, 255), sat=st.floats(1.1, 1.4))
def test_vivid_saturates_colours_and_keeps_greys_grey(b, g, r, sat):
    img = np.array([[[b, g, r], [128, 128, 128]]], np.uint8)
    out = apply_look(img, PhoneLook("vivid", saturation=sat)).astype(int)
    spread = lambda px: int(px.max() - px.min())  # noqa: E731
    assert spread(out[0, 1]) == 0  # grey stays grey
    assert spread(out[0, 0]) >= spread(img[0, 0].astype(int)) - 1  # never less colourful (rounding)


def test_hdr_brings_out_the_print_against_its_paper_and_evens_the_light():
    img = _board()
    out = apply_look(img, PhoneLook("hdr", detail=1.4, compress=0.7, scale=0.05)).astype(float)
    src = img.astype(float)
    # The print's contrast with the paper just beside it grows ...
    ratio = lambda im: im[115:125, 155:165, 2].mean() / im[115:125, 130:140, 2].mean()  # noqa: E731
    assert ratio(out) < ratio(src) - 0.02
    # ... and the light's slope across the paper shrinks.
    slope = lambda im: np.log(im[20:40, 280:300].mean() / im[20:40, 20:40].mean())  # noqa: E731
    assert slope(out) < 0.9 * slope(src)


def test_a_drawn_look_is_the_seeds_and_of_its_kind():
    a, b = random_look(np.random.default_rng([7, 1])), random_look(np.random.default_rng([7, 1]))
    assert a == b and a.kind in LOOKS
    for kind in LOOKS:
        look = random_look(np.random.default_rng(3), kind)
        assert look.kind == kind
        assert (look.saturation > 1) == ("vivid" in kind) and (look.detail > 1) == ("hdr" in kind)
    with pytest.raises(ValueError, match="no phone look"):
        random_look(np.random.default_rng(3), "sepia")
