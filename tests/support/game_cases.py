"""Game files the rules must refuse, each with the one-line message a player gets (shared by the
game-file and command-line tests)."""
from __future__ import annotations


def game(*players: dict, **top) -> dict:
    return {"variant": "classic", **top, "players": list(players)}


def player(color: str, routes=(), tickets=(), **more) -> dict:
    return {"color": color, "routes": [list(r) for r in routes], "tickets": [list(t) for t in tickets], **more}


OVER_45 = [("Duluth", "Helena"), ("Helena", "Seattle"), ("Seattle", "Calgary"), ("Calgary", "Winnipeg"),
           ("Winnipeg", "Sault St. Marie"), ("Duluth", "Toronto"), ("Denver", "Phoenix"), ("El Paso", "Houston"),
           ("Denver", "Santa Fe")]  # 6+6+4+6+6+6+5+6+2 = 47 trains

# (case, game dict, the one-line message expected)
INVALID = [
    ("unknown city", game(player("red", [("Denvr", "Omaha")])),
     'player red: unknown city "Denvr" (did you mean "Denver"?)'),
    ("unknown city in a ticket", game(player("red", tickets=[("Boston", "Maimi")])),
     'player red: unknown city "Maimi" (did you mean "Miami"?)'),
    ("route not on the board", game(player("red", [("Denver", "Boston")])),
     "player red: route Denver–Boston is not on the board (no track joins them)"),
    ("track colour not on the board", game(player("red", [("Denver", "Kansas City", "green")])),
     "player red: route Denver–Kansas City (green) is not on the board (the tracks Denver–Kansas City are black and orange)"),
    ("same track claimed by two players", game(player("red", [("Denver", "Omaha")]), player("blue", [("Omaha", "Denver")])),
     "player blue: route Denver–Omaha is already claimed by red"),
    ("same track listed twice", game(player("red", [("Denver", "Omaha"), ("Omaha", "Denver")])),
     "player red: route Denver–Omaha is listed twice"),
    ("both tracks of a double", game(player("red", [("Denver", "Kansas City", "black"), ("Denver", "Kansas City", "orange")])),
     "player red: holds both tracks of the double route Denver–Kansas City; a player may claim only one of them"),
    ("both tracks of a gray double", game(player("red", [("Seattle", "Portland"), ("Portland", "Seattle")])),
     "player red: holds both tracks of the double route Portland–Seattle; a player may claim only one of them"),
    ("double in a 2-player game", game(player("red", [("Denver", "Kansas City", "black")]), player("blue", [("Denver", "Kansas City")])),
     "player blue: route Denver–Kansas City is a double and red holds its other track; "
     "in a 2–3 player game only one track of a double may be used"),
    ("more than 45 trains", game(player("red", OVER_45)),
     "player red: routes use 47 trains, more than the 45 a player has"),
    ("ticket not in the deck", game(player("red", tickets=[("Boston", "Washington")])),
     "player red: ticket Boston–Washington is not in the classic deck"),
    ("ticket not in the 1910 deck", game(player("red", tickets=[("Denver", "El Paso")]), variant="1910"),
     "player red: ticket Denver–El Paso is not in the 1910 deck"),
    ("ticket held twice", game(player("red", tickets=[("Denver", "El Paso")]), player("blue", tickets=[("El Paso", "Denver")])),
     "player blue: ticket El Paso–Denver is already held by red (each card exists once)"),
    ("unknown variant", game(player("red"), variant="clasic"),
     'unknown variant "clasic" (did you mean "classic"?) (choose from classic, 1910, mega, big-cities)'),
    ("unknown player colour", game(player("purple")),
     'player 1: unknown player colour "purple" (choose from red, blue, green, yellow, black)'),
    ("duplicate player colours", game(player("red"), player("blue"), player("red")),
     "player red: colour red is given to 2 players; each player needs their own colour"),
    ("2004 values outside classic", game(player("red"), variant="mega", ticket_values="2004"),
     'ticket_values "2004" is not available in the mega variant (it uses the 1910 values)'),
    ("malformed route", game(player("red", [("Denver",)])),
     'player red: route 1 ["Denver"] must be [city, city] or [city, city, colour]'),
    ("misspelt key", game({"color": "red", "routes": [], "ticket": []}),
     'player red: unknown key "ticket" (did you mean "tickets"?)'),
    ("score track not a number", game(player("red", score_track="57")),
     'player red: score_track must be a whole number of points (0 or more), not "57"'),
    ("no players", {"variant": "classic", "players": []},
     'game file: "players" must be a non-empty list of players'),
    ("not an object", [1, 2], 'game file: expected a JSON object with "variant" and "players", not a list'),
]
