"""A phone's own look: what its processing does to a photo after the sensor, which varies between
phones as much as the light varies between homes.

Many phones make a photo "vivid" (more saturation and contrast than the scene had) and tone-map it
locally (HDR): the light's large-scale differences compressed, the detail within each region
brought out. Both move the print and the cars apart from how the board's light alone shows them:
print comes out darker and more saturated against its paper, more like a car.

In:  a photo (uint8 BGR) and a `PhoneLook` (`random_look` draws one).
Out: `apply_look(...)`: the photo as that phone would have finished it (uint8 BGR, same size).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import cv2
import numpy as np

LOOKS = ("plain", "vivid", "hdr", "vivid hdr")
LUMA_BGR = np.array([0.114, 0.587, 0.299], np.float32)  # Rec. 601 luma weights, in BGR order


@dataclass(frozen=True)
class PhoneLook:
    """kind: one of `LOOKS`. saturation: chroma gain (1: none). contrast: gain of the tone curve
    about mid-grey (1: none). detail: gain of the log-luminance detail finer than `scale` (HDR;
    1: none). compress: gain of the log-luminance coarser than `scale` (HDR; 1: none). scale: the
    HDR's base layer blur, a share of the photo's long side."""

    kind: str = "plain"
    saturation: float = 1.0
    contrast: float = 1.0
    detail: float = 1.0
    compress: float = 1.0
    scale: float = 0.03

    def to_dict(self) -> dict:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def random_look(rng: np.random.Generator, kind: str | None = None) -> PhoneLook:
    """One of `LOOKS` (each as likely, or `kind`), its strengths drawn from what phones' default
    processing does: saturation up 10-40 %, contrast up 5-20 %, HDR detail up 15-50 % with the
    large scale compressed to 60-90 %."""
    drawn = str(rng.choice(LOOKS))  # drawn even when told, so the draws after it stay
    kind = drawn if kind is None else kind
    if kind not in LOOKS:
        raise ValueError(f"no phone look {kind!r}: one of {', '.join(LOOKS)}")
    sat, con, det, com, scale = (float(rng.uniform(1.1, 1.4)), float(rng.uniform(1.05, 1.2)),
                                 float(rng.uniform(1.15, 1.5)), float(rng.uniform(0.6, 0.9)),
                                 float(rng.uniform(0.015, 0.05)))
    vivid, hdr = "vivid" in kind, "hdr" in kind
    return PhoneLook(kind, sat if vivid else 1.0, con if vivid else 1.0, det if hdr else 1.0,
                     com if hdr else 1.0, scale)


def apply_look(image_bgr: np.ndarray, look: PhoneLook) -> np.ndarray:
    """`image_bgr` (uint8 BGR) finished with `look`: the HDR's tone mapping on log luminance
    (colours kept: every channel scaled alike), then the vivid tone curve and saturation."""
    img = np.asarray(image_bgr, dtype=np.float32) / 255.0
    if look.detail != 1.0 or look.compress != 1.0:
        lum = np.maximum(img @ LUMA_BGR, 1e-3)
        log = np.log(lum)
        sigma = max(1.0, look.scale * max(img.shape[:2]))
        base = cv2.GaussianBlur(log, (0, 0), sigma)
        mid = float(np.median(base))
        out = mid + look.compress * (base - mid) + look.detail * (log - base)
        img = img * np.exp(out - log)[..., None]
    if look.contrast != 1.0:
        img = 0.5 + look.contrast * (img - 0.5)
    img = np.clip(img, 0.0, 1.0)
    if look.saturation != 1.0:
        grey = (img @ LUMA_BGR)[..., None]
        img = np.clip(grey + look.saturation * (img - grey), 0.0, 1.0)
    return np.round(img * 255.0).astype(np.uint8)
