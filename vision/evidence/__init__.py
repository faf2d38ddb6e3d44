"""The evidence sources: each says, per space, how likely each of SPACE_CLASSES ("empty", then the
five car colours) is, as an (N, 6) array of log-likelihoods; `vision.fuse` adds them up.

- `net`: the space classifier's look at each space's patch (trained on renders);
- `colour`: each space's colour against its print and the car colours, adapted to the photo;
- `change`: with a user's calibration that fits the photo, each space against its own empty look.
"""
