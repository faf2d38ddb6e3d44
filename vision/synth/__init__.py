"""Synthetic end-of-game photos with exact truth (`ttr render`).

One module per stage: `positions` (legal games, grown as players grow networks) -> `board_art`
(the printed board from the template, cached per print run) -> `trains` (plastic cars and score
markers) -> `camera` (phone, table, light, lens, JPEG) -> `render` (one photo + truth + game file).
"""
