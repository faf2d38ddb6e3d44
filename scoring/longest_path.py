"""Longest Continuous Path, exact: the longest trail in a player's network of tracks.

A trail uses each track at most once and may pass through a city any number of times (the
rulebook's "continuous path"). `longest_path(track_ids, board) -> (length, cities, track_ids)`,
`length` in trains. Each connected piece of the network is solved on its own, biggest first.

Why the answer is exact, and fast:
- A longest trail ends where a city has an odd number of the player's tracks and uses every
  track there (an unused one would extend it). So with no odd city the whole piece is one closed
  trail, and with two it is one open trail (Euler); both are taken at once.
- Otherwise the tracks a trail leaves out have an odd count at every odd city but its two ends,
  so they weigh at least a cheapest pairing of those cities by shortest distance: a ceiling on
  the length. When the tracks left after removing such a pairing's paths still hang together,
  they form a trail of exactly that length, which is therefore a longest one.
- Else (rare) a complete depth-first search decides, pruned by that ceiling, by the trains still
  reachable less what parity forces to stay unused, and by never searching a state twice.
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable

from scoring.board import Board, Track


def longest_path(track_ids: Iterable[int], board: Board) -> tuple[int, list[str], list[int]]:
    """The length (trains) of the longest continuous path through `track_ids`, with one such path
    as its city sequence (one more city than tracks) and its track ids in travel order.

    An empty network gives `(0, [], [])`. Several tracks between the same two cities are allowed.
    """
    tracks = [board.tracks[i] for i in sorted(set(track_ids))]
    return longest_trail(tracks)


def longest_trail(tracks: list[Track], *, pairing: bool = True) -> tuple[int, list[str], list[int]]:
    """`longest_path` on explicit `Track`s (any two different cities, any lengths > 0).

    `pairing=False` skips the pairing shortcut and ceiling, so that tests can check the complete
    search on its own.
    """
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
        length, vertex_path, edge_path = _longest_in_component(component, ends, lengths, best_len, pairing)
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
                          floor: int, pairing: bool) -> tuple[int, list[int], list[int]]:
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

    if len(odd) <= 2:  # one trail covers every track (Euler)
        vertex_path, edge_path = _euler_trail(odd[0] if odd else min(adjacency), adjacency, set(component))
        return (total, vertex_path, edge_path) if total > floor else (0, [], [])

    ceiling, left_out = _cheapest_left_out(adjacency, odd, total) if pairing else (total, None)
    if ceiling <= floor:
        return 0, [], []
    if left_out is not None:
        kept = set(component) - left_out
        start = _trail_start(kept, ends)
        if start is not None:
            vertex_path, edge_path = _euler_trail(start, adjacency, kept)
            return ceiling, vertex_path, edge_path

    best = [floor, [], []]  # length, vertex path, edge path
    # (city, tracks used) states already searched: the same state reached in another order has
    # the same length and the same futures, and the best can only have grown since.
    seen: set[tuple[int, int]] = set()
    vertex_stack: list[int] = []
    edge_stack: list[int] = []
    # Where a longest trail may still end: at an odd city, never where it started, and never at
    # a city already searched as a start (that trail was found there, the other way round).
    ends_left = set(odd)
    free = {u: len(options) for u, options in adjacency.items()}  # unused tracks at each city

    def bound(v: int, used: int) -> int:
        """Most trains a trail from v to an end in `ends_left` can still add.

        That is the unused tracks reachable from v, less those the trail must leave unused.
        The tracks it leaves unused have an odd count exactly at the cities of D: those whose
        unused-track count is odd, with v and the end w toggled. Each such city keeps at least
        one unused track, and a track serves at most two of them: half its shortest track each.
        """
        seen_v = {v}
        todo = [v]
        got = 0
        seen_e = used
        halves = 0
        largest = 0
        while todo:
            u = todo.pop()
            shortest = total + 1  # none unused
            for bit, _, w, length in adjacency[u]:
                if not used & bit:
                    if length < shortest:
                        shortest = length
                    if not seen_e & bit:
                        seen_e |= bit
                        got += length
                        if w not in seen_v:
                            seen_v.add(w)
                            todo.append(w)
            if (free[u] % 2 == 1) != (u == v):
                halves += shortest
                if u in ends_left and shortest > largest:
                    largest = shortest
        if largest == 0:
            # the end is not among the mismatched cities: it adds one
            reachable_ends = ends_left & seen_v
            if not reachable_ends:
                return 0
        return got - (halves - largest + 1) // 2

    def extend(v: int, length: int, used: int) -> bool:
        """Depth-first over unused tracks from v; True once the trail uses every track."""
        if length > best[0]:
            best[0], best[1], best[2] = length, vertex_stack + [v], list(edge_stack)
            if length >= ceiling:
                return True
        if (v, used) in seen or length + bound(v, used) <= best[0]:
            return False
        seen.add((v, used))
        vertex_stack.append(v)
        for bit, e, w, step in adjacency[v]:
            if not used & bit:
                edge_stack.append(e)
                free[v] -= 1
                free[w] -= 1
                done = extend(w, length + step, used | bit)
                free[v] += 1
                free[w] += 1
                edge_stack.pop()
                if done:
                    vertex_stack.pop()
                    return True
        vertex_stack.pop()
        return False

    for start in odd:
        ends_left.discard(start)
        if extend(start, 0, 0):
            break
    if best[0] <= floor:
        return 0, [], []
    return best[0], best[1], best[2]


# Above this many odd cities pairing them costs more than it saves.
MAX_ODD_FOR_PAIRING = 12


def _cheapest_left_out(adjacency: dict[int, list[tuple[int, int, int, int]]], odd: list[int],
                       total: int) -> tuple[int, set[int] | None]:
    """A ceiling on the longest trail of a connected piece with odd cities `odd`, and the tracks
    of a cheapest pairing of the odd cities but two (None when there are too many odd cities to
    pair here: such sparse, tree-like networks are quick to search)."""
    k = len(odd)
    if k > MAX_ODD_FOR_PAIRING:
        return total, None
    trees = [_shortest_paths(adjacency, source) for source in odd]
    pair = [[trees[i][odd[j]][0] if odd[j] in trees[i] else total for j in range(k)] for i in range(k)]
    memo: dict[tuple[int, bool], tuple[int, tuple[int, int, bool] | None]] = {}

    def cheapest(mask: int, ends_free: bool) -> int:
        """Cheapest pairing of the odd cities in `mask`, two of them left free if `ends_free`."""
        if not mask:
            return 0
        key = (mask, ends_free)
        if key not in memo:
            i = (mask & -mask).bit_length() - 1
            best, choice = total + 1, None
            for j in range(i + 1, k):
                if mask >> j & 1:
                    rest = mask & ~(1 << i) & ~(1 << j)
                    cost = pair[i][j] + cheapest(rest, ends_free)
                    if cost < best:
                        best, choice = cost, (i, j, True)
                    if ends_free:
                        cost = cheapest(rest, False)
                        if cost < best:
                            best, choice = cost, (i, j, False)
            memo[key] = best, choice
        return memo[key][0]

    cost = cheapest((1 << k) - 1, True)
    left_out: set[int] = set()
    mask, ends_free = (1 << k) - 1, True
    while mask:
        i, j, paired = memo[(mask, ends_free)][1]
        if paired:
            left_out ^= _path_edges(trees[i], odd[j])  # paths that overlap cancel out
        else:
            ends_free = False
        mask &= ~(1 << i) & ~(1 << j)
    return total - cost, left_out


def _shortest_paths(adjacency: dict[int, list[tuple[int, int, int, int]]], source: int) -> dict[int, tuple[int, int, int]]:
    """Dijkstra from `source`: city -> (distance in trains, previous city, track index)."""
    done: dict[int, tuple[int, int, int]] = {}
    heap = [(0, source, -1, -1)]
    while heap:
        d, u, previous, via = heapq.heappop(heap)
        if u in done:
            continue
        done[u] = (d, previous, via)
        for _, e, w, length in adjacency[u]:
            if w not in done:
                heapq.heappush(heap, (d + length, w, u, e))
    return done


def _path_edges(tree: dict[int, tuple[int, int, int]], target: int) -> set[int]:
    edges = set()
    while tree[target][2] >= 0:
        _, previous, via = tree[target]
        edges.add(via)
        target = previous
    return edges


def _trail_start(kept: set[int], ends: list[tuple[int, int]]) -> int | None:
    """Where an Euler trail over the `kept` tracks starts, or None when they are not one trail
    (in pieces, or more than two odd cities)."""
    if not kept:
        return None
    degree: dict[int, int] = {}
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for e in kept:
        a, b = ends[e]
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
        parent[find(a)] = find(b)
    if len({find(v) for v in degree}) != 1:
        return None
    odd = sorted(v for v, d in degree.items() if d % 2)
    if len(odd) > 2:
        return None
    return odd[0] if odd else min(degree)


def _euler_trail(start: int, adjacency: dict[int, list[tuple[int, int, int, int]]],
                 allowed: set[int]) -> tuple[list[int], list[int]]:
    """Hierholzer's walk from `start` over every `allowed` track (which form one trail from it)."""
    used: set[int] = set()
    pointer = {v: 0 for v in adjacency}
    stack: list[tuple[int, int]] = [(start, -1)]
    vertex_path: list[int] = []
    edge_path: list[int] = []
    while stack:
        v, via = stack[-1]
        options = adjacency[v]
        while pointer[v] < len(options) and (options[pointer[v]][1] in used or options[pointer[v]][1] not in allowed):
            pointer[v] += 1
        if pointer[v] < len(options):
            _, e, w, _ = options[pointer[v]]
            used.add(e)
            stack.append((w, e))
        else:
            stack.pop()
            vertex_path.append(v)
            if via >= 0:
                edge_path.append(via)
    vertex_path.reverse()
    edge_path.reverse()
    return vertex_path, edge_path
