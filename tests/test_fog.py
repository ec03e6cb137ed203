"""Fog of war: what a player sees, and battle keys committed to before a turn that let a player
verify the dice they are told of without learning any other (docs/fog.md)."""

from __future__ import annotations

import hashlib

import pytest
from helpers import BOARD, make_state

from pbem.core import fog
from pbem.core.state import Options


def test_a_player_sees_their_territories_their_team_mates_and_those_next_to_them() -> None:
    state = make_state({"Alaska": "alice", "Peru": "carol"}, players=["alice", "bob", "carol"])
    near = {"Alaska", "Northwest Territory", "Alberta", "Kamchatka"}
    assert fog.sight(state, "alice") == near
    teams = make_state(
        {"Alaska": "alice", "Peru": "carol"},
        players=["alice", "bob", "carol", "dave"],
        options=Options(teams=(("alice", "carol"), ("bob", "dave"))),
    )
    assert fog.sight(teams, "alice") == near | {"Peru", "Venezuela", "Brazil", "Argentina"}
    assert fog.sight(teams, "carol") == fog.sight(teams, "alice")


def test_every_directed_pair_of_neighbours_has_eight_labels_in_board_order() -> None:
    labels = fog.labels(BOARD)
    assert len(labels) == len(set(labels)) == 2 * len(BOARD.borders()) * 8
    assert labels[:2] == ("Alaska|Northwest Territory|1", "Alaska|Northwest Territory|2")


def root_of(leaf: bytes, index: int, size: int, path: tuple[bytes, ...]) -> bytes | None:
    try:
        return fog.path_root(leaf, index, size, path)
    except ValueError:  # a path of another length than the leaf's
        return None


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 64, 100])
def test_each_leaf_and_its_path_lead_to_the_root_and_nothing_else_does(size: int) -> None:
    leaves = [hashlib.sha256(b"%d" % i).digest() for i in range(size)]
    root = fog.merkle_root(leaves)
    for index, leaf in enumerate(leaves):
        path = fog.merkle_path(leaves, index)
        assert fog.path_root(leaf, index, size, path) == root
        assert root_of(b"\x00" * 32, index, size, path) != root
        if size > 1:
            assert root_of(leaf, (index + 1) % size, size, path) != root


def test_a_battle_key_checks_against_the_root_of_its_resolution_only() -> None:
    key, other = bytes(32), bytes([1] * 32)
    root = fog.battle_root(key, BOARD)
    name = fog.label("Ukraine", "Ural", 2)
    battle, index, path = fog.battle_proof(key, BOARD, name)
    assert battle == fog.battle_key(key, name)
    assert fog.check_battle(BOARD, name, battle, index, path, root)
    assert not fog.check_battle(BOARD, name, battle, index, path, fog.battle_root(other, BOARD))
    assert not fog.check_battle(BOARD, name, bytes(32), index, path, root)  # a key made up
    wrong = fog.label("Ukraine", "Ural", 3)
    assert not fog.check_battle(BOARD, wrong, battle, index, path, root)  # another label
    assert not fog.check_battle(BOARD, name, battle, index, path[:-1], root)
    assert not fog.check_battle(BOARD, name, battle, index, (*path, path[0]), root)
    assert len(path) == (len(fog.labels(BOARD)) - 1).bit_length()
