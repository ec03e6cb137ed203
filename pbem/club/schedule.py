"""Who plays whom in a tournament: tables, round-robin schedules, Swiss pairings and seats.

Pure functions of their arguments (no files, no clock, no system randomness): the same players
and results always give the same tables, so that anyone can check a tournament's rounds. A
player is any hashable name; the order in which players are given is their seeding.

- `table_sizes`: a round's tables as even as possible, none under 2 players, none over 6;
- `round_robin`: rounds in which every pair of players shares a table at least once, as few as
  a deterministic search finds;
- `swiss_round`: tables of players with the same points, avoiding players who already met;
- `seat_order`: a table's seats given so that each player sits first, second, ... as evenly
  as possible over the tournament.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Hashable, Iterable, Mapping, Sequence, Set
from typing import TypeVar

from pbem.core import rules

P = TypeVar("P", bound=Hashable)

MIN_TABLE = rules.MIN_PLAYERS
MAX_TABLE = rules.MAX_PLAYERS

SEARCH_BUDGET = 20_000
"""How much work `round_robin` may spend on its search, in candidates weighed (the number of
attempts it makes is this over the square of the number of players, within the bounds below):
the schedule depends only on the players' number and the table size, never on the time taken."""
MIN_ATTEMPTS = 4
MAX_ATTEMPTS = 400


def table_sizes(players: int, size: int) -> list[int]:
    """The sizes of a round's tables for `players` at tables of `size`, largest first: as few
    tables as hold everyone, as even as possible (10 players at 4: 4, 3, 3). With tables of 2
    and an odd number of players, one table has 3 (no one sits alone)."""
    if not MIN_TABLE <= size <= MAX_TABLE:
        raise ValueError(f"tables of {MIN_TABLE} to {MAX_TABLE} players, not {size}")
    if players < MIN_TABLE:
        raise ValueError(f"at least {MIN_TABLE} players, not {players}")
    tables = -(-players // size)
    if players // tables < MIN_TABLE:
        tables = players // MIN_TABLE
    base, extra = divmod(players, tables)
    return [base + 1] * extra + [base] * (tables - extra)


def lower_bound(players: int, size: int) -> int:
    """Rounds no round-robin can do without: each player meets at most (largest table - 1)
    others a round, and a round covers at most its tables' pairs."""
    sizes = table_sizes(players, size)
    by_player = -(-(players - 1) // (sizes[0] - 1))
    pairs = players * (players - 1) // 2
    per_round = sum(s * (s - 1) // 2 for s in sizes)
    return max(by_player, -(-pairs // per_round))


def round_robin(players: Sequence[P], size: int) -> list[list[list[P]]]:
    """Rounds of tables (each table its players in the order given) in which every pair of
    `players` shares a table at least once. Each round seats every player exactly once, at
    tables of `table_sizes`.

    The rounds are found by a greedy search, tried again with ties broken another way by a
    pseudo-random generator seeded with the attempt's number: the fewest rounds found wins
    (the first attempt to find them among equals), and the search stops early at the lower
    bound. It depends only on the number of players and the table size."""
    n = len(players)
    sizes = table_sizes(n, size)
    if n > 2 and size == 2 and n % 2 == 0:
        best = _circle(n)
    else:
        bound = lower_bound(n, size)
        attempts = max(MIN_ATTEMPTS, min(MAX_ATTEMPTS, SEARCH_BUDGET // (n * n)))
        best = []
        for attempt in range(attempts):
            found = _greedy_schedule(n, sizes, random.Random(attempt), len(best) or None)
            if found is not None and (not best or len(found) < len(best)):
                best = found
                if len(best) <= bound:
                    break
    return [[[players[i] for i in sorted(table)] for table in one] for one in best]


def _circle(n: int) -> list[list[list[int]]]:
    """The circle method: n - 1 rounds of pairs for an even n, every pair once (optimal)."""
    rounds = []
    ring = list(range(1, n))
    for _ in range(n - 1):
        seats = [0, *ring]
        rounds.append([[seats[i], seats[n - 1 - i]] for i in range(n // 2)])
        ring = ring[-1:] + ring[:-1]
    return rounds


def _greedy_schedule(
    n: int, sizes: Sequence[int], rng: random.Random, worse_than: int | None
) -> list[list[list[int]]] | None:
    """Rounds made one by one, each covering as many pairs not yet met as the greedy finds;
    None once it would take `worse_than` rounds or more (another attempt did better)."""
    unmet = [set(range(n)) - {p} for p in range(n)]
    rounds: list[list[list[int]]] = []
    while any(unmet):
        if worse_than is not None and len(rounds) + 1 >= worse_than:
            return None
        rounds.append(_greedy_round(n, sizes, unmet, rng))
        for table in rounds[-1]:
            for p in table:
                unmet[p] -= set(table)
    return rounds


def _greedy_round(
    n: int, sizes: Sequence[int], unmet: Sequence[set[int]], rng: random.Random
) -> list[list[int]]:
    """One round: each table begun with the player who has most still to meet among those not
    seated, then filled with whoever meets most new players at it (ties: most still to meet
    among those not seated, then the generator); then improved by swaps (`_more_new_pairs`)."""
    free = set(range(n))
    tables: list[list[int]] = []
    for size in sizes:
        first = max(sorted(free), key=lambda p: (len(unmet[p] & free), rng.random()))
        table = [first]
        free.discard(first)
        while len(table) < size:
            pick = max(
                sorted(free),
                key=lambda p: (
                    sum(1 for q in table if q in unmet[p]),
                    len(unmet[p] & free),
                    rng.random(),
                ),
            )
            table.append(pick)
            free.discard(pick)
        tables.append(table)
    _more_new_pairs(n, tables, unmet)
    return tables


def _more_new_pairs(n: int, tables: list[list[int]], unmet: Sequence[set[int]]) -> None:
    """Swap two players of different tables while the swap makes more pairs meet for the first
    time (the first such swap in table order each time; every swap adds some, so this ends).
    `toward[x][t]`: how many at table t x has still to meet."""
    where = {p: k for k, table in enumerate(tables) for p in table}
    toward = [[0] * len(tables) for _ in range(n)]
    for x in range(n):
        for y in unmet[x]:
            toward[x][where[y]] += 1
    improved = True
    while improved:
        improved = False
        for a, b in itertools.combinations(range(len(tables)), 2):
            for i in range(len(tables[a])):
                for j in range(len(tables[b])):
                    p, q = tables[a][i], tables[b][j]
                    w = 1 if q in unmet[p] else 0
                    gain = toward[p][b] + toward[q][a] - 2 * w - toward[p][a] - toward[q][b]
                    if gain > 0:
                        tables[a][i], tables[b][j] = q, p
                        for x in unmet[p]:
                            toward[x][a] -= 1
                            toward[x][b] += 1
                        for x in unmet[q]:
                            toward[x][b] -= 1
                            toward[x][a] += 1
                        improved = True


def pairs_met(rounds: Sequence[Sequence[Sequence[P]]]) -> set[frozenset[P]]:
    """Every pair of players that shares a table in `rounds`."""
    return {frozenset(pair) for one in rounds for t in one for pair in itertools.combinations(t, 2)}


def swiss_rounds(players: int, size: int) -> int:
    """The default number of Swiss rounds: enough that one player could win every game, as
    each table has one winner: the least r with size ** r >= players (log2 for tables of 2)."""
    rounds = 1
    while size**rounds < players:
        rounds += 1
    return max(rounds, 2)


def first_swiss_round(players: Sequence[P], size: int) -> list[list[P]]:
    """Round 1 of a Swiss tournament, seeded by the order given: players dealt to the tables
    as cards are dealt (the 1st to table 1, the 2nd to table 2, ...), so that the first seeds
    head a table each and meet later."""
    sizes = table_sizes(len(players), size)
    tables: list[list[P]] = [[] for _ in sizes]
    seat = 0
    for player in players:
        while len(tables[seat % len(sizes)]) >= sizes[seat % len(sizes)]:
            seat += 1
        tables[seat % len(sizes)].append(player)
        seat += 1
    return tables


def swiss_round(
    standing: Sequence[P], size: int, met: Set[frozenset[P]], points: Mapping[P, float]
) -> list[list[P]]:
    """A later Swiss round: `standing` is every player, best first (by points, then the
    tie-break, then the seeding). Tables are filled from the top: each begun with the best
    player not yet seated, then the best of those who have met none of the table (when
    everyone left has met someone there, whoever has met fewest). Then two players of
    different tables swap while that leaves fewer rematches, or as many and tables closer in
    points; the first such swap in the standing's order each time."""
    index = {p: i for i, p in enumerate(standing)}
    free = list(standing)
    tables: list[list[P]] = []
    for table_size in table_sizes(len(standing), size):
        table = [free.pop(0)]
        while len(table) < table_size:
            pick = min(free, key=lambda p: (sum(frozenset((p, q)) in met for q in table), index[p]))
            free.remove(pick)
            table.append(pick)
        tables.append(table)
    _improve(tables, met, points)
    return [sorted(t, key=index.__getitem__) for t in tables]


def _cost(
    table: Sequence[P], met: Set[frozenset[P]], points: Mapping[P, float]
) -> tuple[int, float]:
    """A table's rematches, and the spread of its points."""
    again = sum(frozenset(pair) in met for pair in itertools.combinations(table, 2))
    scores = [points.get(p, 0) for p in table]
    return again, max(scores) - min(scores)


def _improve(tables: list[list[P]], met: Set[frozenset[P]], points: Mapping[P, float]) -> None:
    """Swap players between tables while a swap lowers (rematches, spread of points), summed
    over the two tables; each swap strictly lowers the total, so this ends."""
    improved = True
    while improved:
        improved = False
        for a, b in itertools.combinations(range(len(tables)), 2):
            for i, j in itertools.product(range(len(tables[a])), range(len(tables[b]))):
                before = _add(_cost(tables[a], met, points), _cost(tables[b], met, points))
                one, other = list(tables[a]), list(tables[b])
                one[i], other[j] = other[j], one[i]
                after = _add(_cost(one, met, points), _cost(other, met, points))
                if after < before:
                    tables[a], tables[b] = one, other
                    improved = True


def _add(x: tuple[int, float], y: tuple[int, float]) -> tuple[int, float]:
    return x[0] + y[0], x[1] + y[1]


def rematches(tables: Sequence[Sequence[P]], met: Set[frozenset[P]]) -> int:
    """How many pairs of `tables` met before (in `met`)."""
    return sum(frozenset(pair) in met for t in tables for pair in itertools.combinations(t, 2))


def seat_order(table: Sequence[P], seats: Mapping[P, Sequence[int]]) -> list[P]:
    """The table's players in seat order: the order that puts each where they sat least so far
    (`seats[p][k]`: how often p sat in seat k + 1), in all the least sum of those counts (which
    is the order that least raises the sum of the counts' squares); among equals, the first in
    the order of the table's permutations (the table as given first)."""
    return list(min(itertools.permutations(table), key=lambda order: _cost_of(order, seats)))


def _cost_of(order: Iterable[P], seats: Mapping[P, Sequence[int]]) -> int:
    return sum(_count(seats.get(p, ()), k) for k, p in enumerate(order))


def _count(counts: Sequence[int], seat: int) -> int:
    return counts[seat] if seat < len(counts) else 0


def add_seats(seats: dict[P, list[int]], tables: Sequence[Sequence[P]], times: int = 1) -> None:
    """Count each player's seat at `tables` (each in seat order) into `seats` (`times` -1: take
    them out again)."""
    for table in tables:
        for k, p in enumerate(table):
            counts = seats.setdefault(p, [])
            counts.extend([0] * (k + 1 - len(counts)))
            counts[k] += times


def seated(
    rounds: Sequence[Sequence[Sequence[P]]], seats: Mapping[P, Sequence[int]] | None = None
) -> tuple[list[list[list[P]]], dict[P, list[int]]]:
    """`rounds` with every table in seat order, and the seat counts after them, counting from
    `seats` (none taken yet by default). Each table is first given `seat_order` round after
    round; then, table after table, each is given again the best order with every other
    table's seats counted, until none changes (each change lowers the sum of the counts'
    squares, so this ends)."""
    counts: dict[P, list[int]] = {p: list(c) for p, c in (seats or {}).items()}
    out: list[list[list[P]]] = []
    for one in rounds:
        ordered = [seat_order(t, counts) for t in one]
        add_seats(counts, ordered)
        out.append(ordered)
    changed = True
    while changed:
        changed = False
        for one in out:
            for i, table in enumerate(one):
                add_seats(counts, [table], -1)
                best = seat_order(table, counts)
                if _cost_of(best, counts) < _cost_of(table, counts):
                    one[i], changed = best, True
                add_seats(counts, [one[i]])
    return out, counts
