"""Fog of war: what each player sees, and the battle keys that let them verify the dice they
are told of without learning any other (docs/fog.md).

Pure: no files, no clock.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pbem.core import dice
from pbem.core.board import Board
from pbem.core.state import FogLevel, GameState, Holding, Phase, replaced

UNKNOWN = "?"
"""The owner of a territory whose owner a player may not know (heavy fog), as a state read from
their view holds it: no player's name can be it."""

MOST_ATTACKS_ON_A_PAIR = 8
"""The most attacks a turn of a fog game may make from one territory on another: each has a
battle key of its own, committed to before the turn (docs/fog.md)."""


# --- sight -------------------------------------------------------------------------------------


def sight(state: GameState, player: str) -> frozenset[str]:
    """The territories `player` sees: those they or a team-mate hold, and those next to one."""
    team = state.team(player)
    held = [t for t, h in state.territories.items() if h.owner in team]
    seen = set(held)
    for t in held:
        seen.update(state.board.neighbours(t))
    return frozenset(seen)


@dataclass(frozen=True)
class Sight:
    """What one player knows of the board now, under fog: the territories they see (owner and
    armies), and whether every owner is known anyway (light fog)."""

    player: str
    team: tuple[str, ...]
    seen: frozenset[str]
    owners: bool

    def owner_known(self, territory: str) -> bool:
        return self.owners or territory in self.seen

    def armies_known(self, territory: str) -> bool:
        return territory in self.seen

    def knows_player(self, name: str) -> bool:
        """Whether everything about `name`'s side of the board is known: their own, or a
        team-mate's."""
        return name in self.team


def sight_of(state: GameState, player: str | None) -> Sight | None:
    """What `player` may know under the game's fog; None when they may know everything (a game
    without fog, the moderator, a game that is over, and the draft, when no one holds land)."""
    if player is None or not state.options.fogged or state.phase in (Phase.OVER, Phase.DRAFT):
        return None
    level = state.options.fog
    return Sight(player, state.team(player), sight(state, player), level is FogLevel.LIGHT)


def as_known(state: GameState, player: str) -> tuple[GameState, frozenset[str]]:
    """The state as `player` may know it under fog, and the territories whose armies they do
    not know (none without fog): armies not seen are 0, owners not seen (heavy fog) UNKNOWN,
    the hands of another side empty. What the order check and the forecast work from, so that
    an answer to a player never says more than their view holds; unchanged without fog."""
    seen = sight_of(state, player)
    if seen is None:
        return state, frozenset()
    territories = {}
    unknown = []
    for t, h in state.territories.items():
        if t in seen.seen:
            territories[t] = h
        else:
            unknown.append(t)
            territories[t] = Holding(h.owner if seen.owners else UNKNOWN, 0)
    players = tuple(p if p.name in seen.team else replaced(p, hand=()) for p in state.players)
    return replaced(state, territories=territories, players=players), frozenset(unknown)


# --- battle keys and their commitment ------------------------------------------------------------


def label(source: str, target: str, n: int) -> str:
    """The label of the `n`-th attack (from 1) of a turn from `source` on `target`."""
    return f"{source}|{target}|{n}"


@functools.lru_cache(maxsize=8)
def labels(board: Board) -> tuple[str, ...]:
    """Every label a battle of a turn may have, in order: each territory in board order, each
    of its neighbours in board order, `n` from 1 to MOST_ATTACKS_ON_A_PAIR."""
    order = {t: i for i, t in enumerate(board.names)}
    return tuple(
        label(source, target, n)
        for source in board.names
        for target in sorted(board.neighbours(source), key=order.__getitem__)
        for n in range(1, MOST_ATTACKS_ON_A_PAIR + 1)
    )


def battle_key(key: bytes, name: str) -> bytes:
    """b_L = HMAC-SHA256(k[r+1], "pbem/fog/" || L): the key of the battle labelled `name`."""
    return hmac.digest(key, b"pbem/fog/" + name.encode(), "sha256")


def leaf(name: str, key: bytes) -> bytes:
    """The tree's leaf of a label and its battle key: SHA-256(0x00 || L || b_L)."""
    return hashlib.sha256(b"\x00" + name.encode() + key).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _levels(leaves: Sequence[bytes]) -> list[list[bytes]]:
    """The tree's levels from the leaves up to the root (an odd node is carried up)."""
    if not leaves:
        raise ValueError("a tree needs at least one leaf")
    levels = [list(leaves)]
    while len(levels[-1]) > 1:
        below = levels[-1]
        above = [_node(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)]
        if len(below) % 2:
            above.append(below[-1])
        levels.append(above)
    return levels


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    return _levels(leaves)[-1][0]


def merkle_path(leaves: Sequence[bytes], index: int) -> tuple[bytes, ...]:
    """The sibling hashes from leaf `index` up to the root (none where a node is carried up)."""
    path = []
    for level in _levels(leaves)[:-1]:
        sibling = index ^ 1
        if sibling < len(level):
            path.append(level[sibling])
        index //= 2
    return tuple(path)


def path_root(leaf_hash: bytes, index: int, size: int, path: Iterable[bytes]) -> bytes:
    """The root a leaf and its path lead to, for a tree of `size` leaves (what a player checks
    against the root they were shown before the turn)."""
    node, siblings = leaf_hash, iter(path)
    while size > 1:
        if index ^ 1 < size:
            sibling = next(siblings, None)
            if sibling is None:
                raise ValueError("the path is shorter than the tree is deep")
            node = _node(sibling, node) if index % 2 else _node(node, sibling)
        index, size = index // 2, (size + 1) // 2
    if next(siblings, None) is not None:
        raise ValueError("the path is longer than the tree is deep")
    return node


@functools.lru_cache(maxsize=64)
def _leaves(key: bytes, board: Board) -> tuple[bytes, ...]:
    return tuple(leaf(name, battle_key(key, name)) for name in labels(board))


def battle_root(key: bytes, board: Board) -> bytes:
    """R_r: the commitment to every battle key of the resolution keyed `key` = k[r+1]."""
    return merkle_root(_leaves(key, board))


def battle_proof(key: bytes, board: Board, name: str) -> tuple[bytes, int, tuple[bytes, ...]]:
    """What a player told of the battle `name` is given: its key, its place among the labels
    and its path to the root."""
    index = labels(board).index(name)
    return battle_key(key, name), index, merkle_path(_leaves(key, board), index)


def check_battle(
    board: Board, name: str, key: bytes, index: int, path: Iterable[bytes], root: bytes
) -> bool:
    """Whether a battle key given for label `name` is the one committed to by `root`."""
    names = labels(board)
    if not 0 <= index < len(names) or names[index] != name:
        return False
    try:
        return hmac.compare_digest(path_root(leaf(name, key), index, len(names), path), root)
    except ValueError:
        return False


Roll = tuple[tuple[int, ...], tuple[int, ...]]
"""A roll: the attacker's dice, the defender's."""


def battle_dice_key(battle: bytes, orders: bytes | None, again: bytes | None = None) -> bytes:
    """The key a battle's dice come from: its battle key with the orders' digest (and the salt
    of a resolution played again), as docs/dice.md keys a resolution's dice."""
    if orders is None:
        return battle
    return dice.dice_key(battle, orders, again)
