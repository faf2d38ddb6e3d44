"""The one palette of ttr's drawings: the reader's overlays (`vision.draw`), the app's board and
page (`app.draw`, `app.streamlit_app`) and the template's check overlays (`vision.measure`).

Pure data (no OpenCV), so the page can use it without loading image code: BGR tuples for OpenCV,
CSS colours and Streamlit markdown for the page. Only what is drawn for people: the renderer's
plastic and print colours (`vision.synth`) are simulation parameters, and the reader's colour
references (`vision.settings.ColourSettings`) are measurements.
"""
from __future__ import annotations

# ---------------------------------------------------------------- players (scoring.rules.PLAYER_COLORS)

# Plastic train colours, for a track's owner, and the outline that keeps each visible on any board.
OWNER_BGR = {"red": (40, 40, 215), "blue": (205, 110, 25), "green": (60, 165, 45),
             "yellow": (30, 215, 250), "black": (30, 30, 30)}
OUTLINE_BGR = {"red": (255, 255, 255), "blue": (255, 255, 255), "green": (255, 255, 255),
               "yellow": (40, 40, 40), "black": (255, 255, 255)}
# The players on the page: CSS colours (the ranking's dots, the chips, bars and buttons) and the
# text on each.
PLAYER_CSS = {"red": "#d62828", "blue": "#1d6fcf", "green": "#2d9a3c", "yellow": "#f2c200", "black": "#222"}
PLAYER_INK = {"red": "#fff", "blue": "#fff", "green": "#fff", "yellow": "#222", "black": "#fff"}  # text on each

# ---------------------------------------------------------------- marks

DOUBT_BGR = (255, 0, 255)  # magenta: not a player colour, stands out on the map
SELECT_BGR = (255, 255, 0)  # cyan: the track picked on the page

# ---------------------------------------------------------------- the printed board (scoring.board.PRINTED_COLORS)

# The app's drawn board (a game entered without a photo): paper, and the printed track colours
# (faded towards the paper there, so the players' colours drawn over them stand out).
PAPER_BGR = (205, 228, 238)
PRINT_BGR = {"red": (70, 70, 200), "blue": (190, 130, 60), "green": (80, 160, 80),
             "yellow": (80, 210, 235), "black": (60, 60, 60), "white": (235, 235, 235),
             "orange": (50, 140, 240), "pink": (180, 140, 235), "gray": (160, 160, 160)}
# The template's check overlays (`ttr template`): the printed track colours at full strength.
TEMPLATE_BGR = {"red": (40, 40, 220), "blue": (220, 90, 20), "green": (40, 190, 80), "yellow": (0, 220, 240),
                "black": (40, 40, 40), "white": (250, 250, 250), "orange": (0, 140, 255),
                "pink": (200, 120, 240), "gray": (150, 150, 150)}
