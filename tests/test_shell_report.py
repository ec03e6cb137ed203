"""Reports: the ready order file a player is sent, and who is sent one."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import write_skeletons
from helpers import SECRET, make_state

from pbem.core import rules
from pbem.core.board import WILD
from pbem.core.events import Eliminated, Won
from pbem.core.orders import parse_orders
from pbem.core.state import GameState, Phase
from pbem.game import processor
from pbem.game.store import Game, read_game
from pbem.present import report

FIVE = ("Alaska", "Peru", "Ural", "Siam", "Egypt")


def _ready(state: GameState, player: str = "alice") -> str:
    return report.order_skeleton(state, player, SECRET)


def _accepted(state: GameState, text: str) -> list[str]:
    return [p.message for p in rules.validate(state, parse_orders(text, state.board))]


def test_the_ready_order_file_of_a_player_with_exactly_five_cards_trades() -> None:
    state = make_state({"Ukraine": ("alice", 5), "Siam": "alice"}, hands={"alice": FIVE})
    text = _ready(state)
    assert 'trade = "best"' in text.splitlines()[4]
    assert "# trade" not in text
    assert _accepted(state, text) == []
    without = text.replace(text.splitlines()[4] + "\n", "")
    assert any("must trade" in m for m in _accepted(state, without))


def test_the_ready_order_file_of_a_player_with_more_cards_trades() -> None:
    state = make_state({"Ukraine": ("alice", 5), "Siam": "alice"}, hands={"alice": FIVE + (WILD,)})
    assert 'trade = "best"' in _ready(state).splitlines()[4]
    assert _accepted(state, _ready(state)) == []


@pytest.mark.parametrize(
    ("hand", "line"),
    [
        (("Alaska", "Peru", "Ural", "Siam"), '# trade = "best"'),  # four cards with a set
        (("Alaska", "Peru", "Greenland", "Ontario"), None),  # four cards, no set
        ((), None),
    ],
)
def test_with_fewer_than_five_cards_a_trade_is_only_offered(
    hand: tuple[str, ...], line: str | None
) -> None:
    state = make_state({"Ukraine": ("alice", 5), "Siam": "alice"}, hands={"alice": hand})
    assert bool(rules.sets_in(state.board, hand)) == (line is not None)
    text = _ready(state)
    trades = [ln for ln in text.splitlines() if "trade" in ln]
    assert [ln.split("  ")[0] for ln in trades] == ([line] if line else [])
    assert "a trade is required" not in text
    assert _accepted(state, text) == []


def test_the_ready_order_file_attacks_the_weakest_neighbour_when_uncommented() -> None:
    state = make_state(
        {"Ukraine": ("alice", 6), "Siam": "alice", "Ural": ("bob", 3), "Scandinavia": ("bob", 1)},
        default=("bob", 4),
    )
    text = _ready(state)
    assert 'territory = "Ukraine"' in text
    assert '# from = "Ukraine"\n# to = "Scandinavia"' in text


@pytest.fixture
def game(playing_dir: Path, tmp_path: Path) -> Game:
    write_skeletons(playing_dir)
    processor.resolve_game(playing_dir)
    return replace(read_game(playing_dir), path=Path(shutil.copytree(playing_dir, tmp_path / "c")))


def _eliminate(game: Game, out: str, by: str) -> Game:
    state = game.state
    territories = {
        t: replace(h, owner=by) if h.owner == out else h for t, h in state.territories.items()
    }
    players = tuple(replace(p, alive=False, hand=()) if p.name == out else p for p in state.players)
    return replace(game, state=replace(state, territories=territories, players=players))


def test_no_order_file_is_written_for_an_eliminated_player(game: Game) -> None:
    state = game.state
    winner = state.current_player.name
    out = next(p.name for p in state.players if p.name != winner)
    dead = _eliminate(game, out, winner)
    written = report.write_reports(dead, 9, [Eliminated(out, winner, 0)])
    folder = game.path / "reports" / "0009"
    names = {p.name for p in written}
    assert f"{out}.orders.toml" not in names and not (folder / f"{out}.orders.toml").exists()
    assert {f"{out}.txt", f"{out}.html", f"{out}.view.json"} <= names
    for p in state.players:
        if p.name != out:
            assert (folder / f"{p.name}.orders.toml").exists()
    assert {"_moderator.txt", "_moderator.html"} <= names
    assert all(p.parent == folder and p.exists() for p in written)


def test_no_order_file_is_written_when_the_game_is_over(game: Game) -> None:
    state = game.state
    winner = state.current_player.name
    over = game
    for p in state.players:
        if p.name != winner:
            over = _eliminate(over, p.name, winner)
    over = replace(over, state=replace(over.state, phase=Phase.OVER, winner=winner))
    written = report.write_reports(over, 9, [Won(winner)])
    assert not [p for p in written if p.name.endswith(".orders.toml")]
    text = (game.path / "reports" / "0009" / f"{winner}.txt").read_text()
    assert "won" in text
