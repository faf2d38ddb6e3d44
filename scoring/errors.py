"""The one error type every stage raises for bad input.

A `TtrError` carries a message meant for a person: one line, naming the player and the item.
The command line prints it as `ttr: error: …` and exits with status 2; the app shows it.
Vision errors subclass it too (vision may import scoring, never the other way round).
"""


class TtrError(Exception):
    """Bad input a person can fix: the message is one line and says what to fix."""

    exit_status = 2
