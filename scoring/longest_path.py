"""Longest Continuous Path, exact: the longest trail in a player's network of tracks.

A trail uses each track at most once and may pass through a city any number of times (the
rulebook's "continuous path"). The search is complete, so the answer is exact, and it is pruned:

- each connected piece of the network is searched on its own, biggest first, and skipped when it
  holds fewer trains than the best trail found so far;
- a longest trail always ends where a city has an odd number of the player's tracks (if it ended
  at an even city, an unused track there would extend it); when every city is even the whole
  piece is one closed trail (an Euler circuit) and is taken at once;
- a branch stops as soon as the trains still reachable from its city over unused tracks cannot
  beat the best trail found so far.

`longest_path(track_ids, board) -> (length, cities, track_ids)`; `length` counts train spaces.
"""
from __future__ import annotations

from collections.abc import Iterable

from scoring.board import Board, Track


def longest_path(track_ids: Iterable[int], board: Board) -> tuple[int, list[str], list[int]]:
    """The length (trains) of the longest continuous path through `track_ids`, with one such path
    as its city sequence (one more city than tracks) and its track ids in travel order.

    An empty network gives `(0, [], [])`. Several tracks between the same two cities are allowed.
    """
    tracks = [board.tracks[i] for i in sorted(set(track_ids))]
    return longest_trail(tracks)


def longest_trail(tracks: list[Track]) -> tuple[int, list[str], list[int]]:
    """`longest_path` on explicit `Track`s (any cities, any lengths > 0)."""
    if not tracks:
        return 0, [], []
    cities = sorted({c for t in tracks for c in (t.a, t.b)})
    index = {c: i for i, c in enumerate(cities)}
    ends = [(index[t.a], index[t.b]) for t in tracks]
    lengths = [t.length for t in tracks]

    best_len, best_cities, best_edges = 0, [], []
    for component in sorted(_components(ends, len(cities)), key=lambda es: (-sum(lengths[e] for e in es), es)):
        total = sum(lengths[e] for e in component)
        if total <= best_len:
            break  # components come biggest first: none left can beat the best
        length, vertex_path, edge_path = _longest_in_component(component, ends, lengths, best_len)
        if length > best_len:
            best_len = length
            best_cities = [cities[v] for v in vertex_path]
            best_edges = [tracks[e].id for e in edge_path]
    return best_len, best_cities, best_edges


def _components(ends: list[tuple[int, int]], n: int) -> list[list[int]]:
    """Edge indices of each connected component, each list sorted."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in ends:
        parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for e, (a, _) in enumerate(ends):
        groups.setdefault(find(a), []).append(e)
    return list(groups.values())


def _longest_in_component(component: list[int], ends: list[tuple[int, int]], lengths: list[int],
                          floor: int) -> tuple[int, list[int], list[int]]:
    """Longest trail inside one connected component, or length 0 when none beats `floor`."""
    # adjacency: vertex -> [(edge bit, edge index, other end, length)], longest first so that a
    # good trail is found early and prunes the rest.
    adjacency: dict[int, list[tuple[int, int, int, int]]] = {}
    for e in component:
        a, b = ends[e]
        bit = 1 << e
        adjacency.setdefault(a, []).append((bit, e, b, lengths[e]))
        adjacency.setdefault(b, []).append((bit, e, a, lengths[e]))
    for options in adjacency.values():
        options.sort(key=lambda o: (-o[3], o[1]))
    total = sum(lengths[e] for e in component)
    odd = sorted(v for v, options in adjacency.items() if len(options) % 2)

    if not odd:
        start = min(adjacency)
        vertex_path, edge_path = _euler_circuit(start, adjacency)
        return total, vertex_path, edge_path

    best = [floor, [], []]  # length, vertex path, edge path
    vertex_stack: list[int] = []
    edge_stack: list[int] = []

    def bound(v: int, used: int) -> int:
        """Most trains a trail from v can still add: the unused tracks reachable from v, less
        what parity forces to stay unused. A trail from v to some end w leaves an unused track
        at every city whose unused-track count has the wrong parity (odd where the trail does
        not start or end, even at v or w when they differ); each track left unused serves at
        most two such cities, so it costs at least half the shortest track at each of them."""
        seen_v = {v}
        todo = [v]
        got = 0
        seen_e = used
        while todo:
            u = todo.pop()
            for bit, _, w, length in adjacency[u]:
                if not seen_e & bit:
                    seen_e |= bit
                    got += length
                    if w not in seen_v:
                        seen_v.add(w)
                        todo.append(w)
        # cities whose parity mismatches a trail that starts at v (the end w is still free)
        halves = 0
        largest = 0
        for u in seen_v:
            count = 0
            shortest = 7
            for bit, _, _, length in adjacency[u]:
                if not used & bit:
                    count += 1
                    if length < shortest:
                        shortest = length
            if (count % 2 == 1) != (u == v):
                halves += shortest
                if shortest > largest:
                    largest = shortest
        # the end w fixes one mismatch: the one that would cost most
        return got - (halves - largest + 1) // 2

    def extend(v: int, length: int, used: int) -> bool:
        """Depth-first over unused tracks from v; True once the trail uses every track."""
        if length > best[0]:
            best[0], best[1], best[2] = length, vertex_stack + [v], list(edge_stack)
            if length == total:
                return True
        if length + bound(v, used) <= best[0]:
            return False
        vertex_stack.append(v)
        for bit, e, w, step in adjacency[v]:
            if not used & bit:
                edge_stack.append(e)
                done = extend(w, length + step, used | bit)
                edge_stack.pop()
                if done:
                    vertex_stack.pop()
                    return True
        vertex_stack.pop()
        return False

    for start in odd:
        if extend(start, 0, 0):
            break
    if best[0] <= floor:
        return 0, [], []
    return best[0], best[1], best[2]


def _euler_circuit(start: int, adjacency: dict[int, list[tuple[int, int, int, int]]]) -> tuple[list[int], list[int]]:
    """Hierholzer's walk over every edge of a component whose vertices are all even."""
    used: set[int] = set()
    pointer = {v: 0 for v in adjacency}
    stack: list[tuple[int, int | None]] = [(start, None)]
    vertex_path: list[int] = []
    edge_path: list[int] = []
    while stack:
        v, via = stack[-1]
        options = adjacency[v]
        while pointer[v] < len(options) and options[pointer[v]][1] in used:
            pointer[v] += 1
        if pointer[v] < len(options):
            _, e, w, _ = options[pointer[v]]
            used.add(e)
            stack.append((w, e))
        else:
            stack.pop()
            vertex_path.append(v)
            if via is not None:
                edge_path.append(via)
    vertex_path.reverse()
    edge_path.reverse()
    return vertex_path, edge_path
