"""A view file as a player's tools read it back (`check --view`, the kit): every value checked,
so a crafted or damaged file is a sentence, never a state the rules cannot work with; and what
a view holds of the players as pbem writes it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import new_game, write_skeletons

from pbem.core.state import Phase
from pbem.game import processor
from pbem.present import view
from pbem.records.history import report_dir
from pbem.records.opening import read_game


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A view file of a game in play (after its deal, setup turn and one turn)."""
    d = new_game(tmp_path_factory.mktemp("views") / "g")
    for _ in range(2):
        write_skeletons(d)
        processor.resolve_game(d)
    data: dict[str, Any] = json.loads((report_dir(d, 2) / "alice.view.json").read_text())
    return data


def _player(data: dict[str, Any], i: int = 0) -> dict[str, Any]:
    entry: dict[str, Any] = data["players"][i]
    return entry


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        here: Any = data
        for key in parents:
            here = here[int(key)] if key.isdigit() else here[key]
        here[last] = value

    return change


def _seven_players(data: dict[str, Any]) -> None:
    data["players"] = [copy.deepcopy(_player(data)) for _ in range(7)]


def _one_player(data: dict[str, Any]) -> None:
    data["players"] = data["players"][:1]


def _twice_the_same(data: dict[str, Any]) -> None:
    data["players"][1] = {**copy.deepcopy(_player(data, 0)), "seat": 1}


CRAFTED = [
    ("seven players", _seven_players, "'players' is not a list of at most 6"),
    ("one player", _one_player, "'players' are not 2 to 6 different players"),
    ("the same player twice", _twice_the_same, "'players' are not 2 to 6 different players"),
    ("a player out who holds land", _set("players.0.alive", False), "out of the game but holds"),
    ("a winner not in the game", _set("winner", "zed"), "'winner' is not one of the players"),
    ("options not an object", _set("options", ["deal"]), "'options' is not an object of texts"),
    ("an option holding a list", _set("options.setup", ["deal"]), "'options' is not an object"),
    ("an option pbem does not know", _set("options.stop_at", "often"), "'options' are not pbem's"),
    ("armies that are text", _set("territories.Alaska.armies", "3"), "'Alaska' is not a whole"),
    ("armies true", _set("territories.Alaska.armies", True), "'Alaska' is not a whole number"),
    ("a game name that is a number", _set("game", 7), "'game' is not text"),
    ("missed turns below 0", _set("players.0.missed", -1), "missed turns' is not a whole number"),
    (
        "more armies than any view",
        _set("territories.Alaska.armies", view.ARMIES_LIMIT + 1),
        "Alaska",
    ),
    ("piles that are text", _set("piles", "none"), "'piles' is not a JSON object"),
    ("a discard that is no card", _set("piles.discards", [3]), "the discard pile holds something"),
    ("a discard of no board", _set("piles.discards", ["Atlantis"]), "the discard pile holds"),
]


@pytest.mark.parametrize(("change", "said"), [c[1:] for c in CRAFTED], ids=[c[0] for c in CRAFTED])
def test_a_crafted_view_is_refused_with_what_is_wrong(
    played: dict[str, Any], tmp_path: Path, change: Callable[[dict[str, Any]], None], said: str
) -> None:
    data = copy.deepcopy(played)
    change(data)
    path = tmp_path / "alice.view.json"
    path.write_text(json.dumps(data))
    with pytest.raises(view.ViewError) as caught:
        view.read_view(path)
    assert said in str(caught.value)
    assert str(caught.value).startswith(f"{path} is not a view file from a report: ")


def test_the_view_as_written_reads_back(played: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "alice.view.json"
    path.write_text(json.dumps(played))
    state = view.read_view(path)
    assert state.phase is Phase.PLAY
    # in play, the armies left to place are the setup's: none, whatever the view's
    # reinforcements (the next turn's) say
    assert all(p.to_place == 0 for p in state.players)
    assert any(p["reinforcements"] > 0 for p in played["players"])


def test_a_dropped_player_is_marked_in_every_view(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    game = read_game(d)
    bob = game.state.player("bob")
    gone = replace(bob, dropped=True, missed=3)
    state = replace(game.state, players=tuple(gone if p is bob else p for p in game.state.players))
    for reader in ("alice", "bob", None):
        entries = {p["name"]: p for p in view.game_view(state, reader, "00")["players"]}
        assert entries["bob"].get("dropped") is True and entries["bob"]["missed"] == 3
        assert "dropped" not in entries["alice"] and "missed" not in entries["alice"]


def test_a_deadline_is_in_the_view_until_the_game_is_over(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    state = read_game(d).state
    due = "2026-12-04T20:00:00+01:00"
    assert view.game_view(state, "alice", "00", deadline=due)["deadline"] == due
    assert "deadline" not in view.game_view(state, "alice", "00")
    over = replace(state, phase=Phase.OVER, winner="alice")
    assert "deadline" not in view.game_view(over, "alice", "00", deadline=due)


def test_the_most_armies_a_view_may_give_are_read(played: dict[str, Any], tmp_path: Path) -> None:
    data = copy.deepcopy(played)
    data["territories"]["Alaska"]["armies"] = 1_000_000  # the most a view may give
    path = tmp_path / "alice.view.json"
    path.write_text(json.dumps(data))
    assert view.read_view(path).armies("Alaska") == 1_000_000


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_json_allows_but_pbem_never_writes_is_refused(
    played: dict[str, Any], tmp_path: Path, number: str
) -> None:
    text = json.dumps(played).replace('"sets_traded": 0', f'"sets_traded": {number}', 1)
    assert number in text
    path = tmp_path / "alice.view.json"
    path.write_text(text)
    with pytest.raises(view.ViewError, match="is not a number a view file holds"):
        view.read_view(path)


def test_a_view_of_a_game_of_two_reads_back(tmp_path: Path) -> None:
    d = new_game(tmp_path / "duel", "alice,bob")
    write_skeletons(d)
    processor.resolve_game(d)
    state = view.read_view(report_dir(d, 1) / "bob.view.json")
    assert sorted(p.name for p in state.players) == ["alice", "bob"]  # in seat order
