"""View files stay bounded however long the game (docs/views.md, "How much of the past a view
file carries"), and `pbem dice --json` is written entry by entry, the same bytes as the whole
list."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import new_game, write_bot_orders, write_skeletons
from long_game import short_orders, three_player_game
from test_kit import bare
from test_undo import NOW, WHY, _resolved_twice

from pbem.cli import main
from pbem.core.state import FogLevel, Options, Phase
from pbem.errors import PbemError
from pbem.files import VIEW_FILE_LIMIT
from pbem.game import processor, undo
from pbem.kit import KIT_NAME
from pbem.present import bounds, report
from pbem.present.context import dice_section
from pbem.present.fog_verify import fog_lines
from pbem.present.json_text import json_list_pieces
from pbem.present.stats import stats_text
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

LONG = 10_000


def run(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def long_played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game of three 10,000 resolutions long (its history written directly), and one more
    resolution by `pbem resolve`'s own code, which writes the reports and their view files."""
    directory = tmp_path_factory.mktemp("long") / "game"
    three_player_game(directory, LONG)
    game = read_game(directory)
    for name in game.state.awaiting():
        reg = game.registration(name)
        assert reg is not None
        orders = short_orders(game.state, name, random.Random(3), reg.secret)
        (directory / "orders" / f"{name}.toml").write_text(orders.to_toml(), "utf-8")
    processor.resolve_game(directory)
    assert read_game(directory).state.resolution == LONG + 1
    return directory


def test_the_view_of_a_10000_resolution_game_is_accepted_and_far_under_the_limit(
    long_played: Path, tmp_path: Path
) -> None:
    game = read_game(long_played)
    folder = report_dir(long_played, LONG)
    name = game.state.awaiting()[0]
    view = folder / f"{name}.view.json"
    assert view.stat().st_size < VIEW_FILE_LIMIT // 8, view.stat().st_size
    data = json.loads(view.read_text("utf-8"))
    assert data["dice"]["resolution"] == LONG
    assert len(data["stats"]["timeline"]) <= 2 * bounds.TIMELINE_POINTS
    reg = game.registration(name)
    assert reg is not None
    orders = tmp_path / "orders.toml"
    orders.write_text(short_orders(game.state, name, random.Random(4), reg.secret).to_toml())
    code, out = run("check", "--view", view, orders)
    assert code == 0 and "valid" in out, out
    code, out = run("verify", "--report", view)
    assert code == 0 and "chain OK" in out, out
    code, out = run("kit", tmp_path)
    assert code == 0, out
    code, out = bare(sys.executable, tmp_path / KIT_NAME, tmp_path, "verify", "--report", str(view))
    assert code == 0 and "chain OK" in out, out
    code, out = bare(
        sys.executable, tmp_path / KIT_NAME, tmp_path, "check", "--view", str(view), str(orders)
    )
    assert code == 0, out


def _territories_part(text: str) -> str:
    return text.split("Territories and armies")[1].split("The biggest battles")[0]


def test_the_story_a_long_view_tells_is_the_games_start_middle_and_now(long_played: Path) -> None:
    """`pbem stats --view` of the thinned timeline names the same three turns with the same
    figures as `pbem stats` of the game's whole history."""
    view = report_dir(long_played, LONG) / "alice.view.json"
    code, told = run("stats", "--view", view)
    assert code == 0, told
    code, whole = run("stats", long_played)
    assert code == 0, whole
    assert _territories_part(told) == _territories_part(whole)


def test_evenly_keeps_the_first_the_middle_and_the_last() -> None:
    for count in (1, 2, 100, 101, 102, 1000, 10_001, 10_002):
        items = list(range(count))
        kept = bounds.evenly(items, 101)
        assert len(kept) == min(count, 101)
        assert kept == sorted(set(kept))
        assert kept[0] == 0 and kept[-1] == count - 1
        assert kept[len(kept) // 2] == items[count // 2]


def test_a_timeline_where_the_readers_side_is_out_keeps_its_middle_too() -> None:
    """Under fog a player's story holds their side's figures only: once out, zeros; the
    resolutions they held land in are thinned apart from the others, so the text's three
    points are the whole timeline's."""
    timeline = [
        {"resolution": r, "turn": r, "territories": {"a": 5 if r < 700 else 0}, "armies": {"a": r}}
        for r in range(3000)
    ]
    stats = {
        "resolutions": 2999,
        "turns": 2999,
        "winner": None,
        "players": ["a"],
        "eliminated": [],
        "timeline": timeline,
        "biggest_battles": [],
        "trades": [],
        "luck": {"a": _no_luck()},
    }
    cut = bounds.bounded_story(stats)
    assert len(cut["timeline"]) == 2 * bounds.TIMELINE_POINTS
    assert stats_text(cut) == stats_text(stats)


def _no_luck() -> dict[str, object]:
    side = {"rolls": 0, "luck": 0.0, "z": 0.0, "losses": 0, "expected": 0.0}
    return {"attack": side, "defence": side, "total": side, "longest_losing_streak": 0}


def test_a_view_lists_the_latest_trades_and_counts_those_before() -> None:
    trades = [
        {"resolution": r, "turn": r, "player": "a", "cards": ["x", "y", "z"], "armies": 4}
        for r in range(bounds.TRADES_KEPT + 7)
    ]
    stats = {"timeline": [], "trades": trades}
    cut = bounds.bounded_story(stats)
    assert cut["trades"] == trades[7:] and cut["trades_before"] == 7
    few = bounds.bounded_story({"timeline": [], "trades": trades[:3]})
    assert few == {"timeline": [], "trades": trades[:3]}  # (a short game's: as it was)


# --- a finished fog game ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_fog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fog") / "misty"
    processor.new_game(
        directory,
        [(n, "") for n in ["ann", "ben", "cy"]],
        Options(fog=FogLevel.LIGHT),
        seed=bytes(range(3, 35)),
    )
    rng = random.Random(8)
    for _ in range(400):
        if read_game(directory).state.phase is Phase.OVER:
            break
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
    assert read_game(directory).state.phase is Phase.OVER
    return directory


def test_a_finished_fog_games_view_lists_the_latest_battles_and_verifies(
    finished_fog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = read_game(finished_fog)
    last = game.state.resolution - 1
    events = read_history(finished_fog, last).events
    whole = json.loads((report_dir(finished_fog, last) / "ann.view.json").read_text("utf-8"))
    assert "game_from" not in whole["dice"]  # (a game shorter than the window: every battle)
    monkeypatch.setattr(bounds, "FOG_RESOLUTIONS", 10)
    view = json.loads(report.view_file(game, last, events, "ann"))
    section = view["dice"]
    assert section["game_from"] == last - 9
    assert [e for e in whole["dice"]["game"] if e["resolution"] >= last - 9] == section["game"]
    lines, ok = fog_lines(view)
    assert ok, lines
    assert f"every battle of resolutions {last - 9} to {last} OK" in "\n".join(lines)
    section["game"][0]["battles"][0]["rolls"][0] = "111/66"
    assert not fog_lines(view)[1]  # (a die changed is still caught)
    section["game"][0]["resolution"] = last - 10  # (one from before the window given)
    with pytest.raises(PbemError, match="out of the game"):
        fog_lines(view)
    moderator = dice_section(game, last, events, None)  # (the public record's: every battle)
    assert "game_from" not in moderator
    assert moderator["game"] == whole["dice"]["game"]


# --- pbem dice --json ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "items", [[], [1], [{"a": [1, 2], "b": {}}, [], "x\ny", {"c": {"d": None}}], [[[]]]]
)
def test_the_json_list_in_pieces_is_the_whole_lists_text(items: list[object]) -> None:
    assert "".join(json_list_pieces(iter(items))) == json.dumps(items, indent=2)


def test_pbem_dice_json_is_the_whole_lists_bytes_and_written_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same bytes as the list built whole (an undone resolution's entry included), for
    every filter; a turn not played refused with nothing written; entries written as they
    are read, so that those before a history file that cannot be read are out already."""
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    write_skeletons(d)
    processor.resolve_game(d)
    undo.undo_last(d, NOW, WHY)
    assert any("undone" in e for e in processor.dice_history(d))
    for resolution, turn in ((None, None), (None, 1), (0, None), (2, None)):
        args = [*(("--resolution", resolution) if resolution is not None else ())]
        args += [*(("--turn", turn) if turn is not None else ())]
        code, out = run("dice", d, "--json", *args)
        assert code == 0, out
        assert out == json.dumps(processor.dice_history(d, resolution, turn), indent=2) + "\n"
    code, out = run("dice", d, "--json", "--turn", 9)
    assert code == 1 and "there is no turn 9" in out and "[" not in out, out

    def broken(*args: object) -> Iterator[dict[str, object]]:
        yield {"resolution": 0}
        raise PbemError("history/0001.toml cannot be read")

    monkeypatch.setattr(processor, "dice_entries", broken)
    code, out = run("dice", d, "--json")
    assert code == 1 and out.startswith('[\n  {\n    "resolution": 0\n  }'), out
    assert "history/0001.toml cannot be read" in out


def test_a_resolution_of_tens_of_thousands_of_rolls_makes_a_view_every_reader_takes(
    playing_dir: Path, tmp_path: Path
) -> None:
    """Each roll of a view file's dice check is written on a line of its own, and view files
    are read up to 4 MiB: a battle between two stacks of 30,000 armies fought to the end
    (about 20,000 rolls, a view file that passed 1 MiB before) is checked by `pbem verify`, and
    the next turn's orders by `pbem check --view` and by the kit, from the player's view."""
    from conftest import force_state

    game = read_game(playing_dir)
    state = game.state
    player = state.awaiting()[0]
    source = next(
        t
        for t in state.owned(player)
        if any(state.owner(n) != player for n in state.board.neighbours(t))
    )
    target = next(n for n in state.board.neighbours(source) if state.owner(n) != player)
    territories = dict(state.territories)
    territories[source] = replace(territories[source], armies=30_000)
    territories[target] = replace(territories[target], armies=30_000)
    force_state(playing_dir, replace(state, territories=territories))
    reg = game.registration(player)
    assert reg is not None
    text = report.order_skeleton(read_game(playing_dir).state, player, reg.secret)
    text += f'\n[[attack]]\nfrom = "{source}"\nto = "{target}"\n'
    (playing_dir / "orders" / f"{player}.toml").write_text(text, "utf-8")
    processor.resolve_game(playing_dir)
    view = report_dir(playing_dir, state.resolution) / f"{player}.view.json"
    rolls = json.loads(view.read_text("utf-8"))["dice"]["rolls"]
    assert len(rolls) > 12_000 and 1024 * 1024 < view.stat().st_size < VIEW_FILE_LIMIT
    assert view.read_text("utf-8").count("\n") < len(rolls) + 2_000  # (a line a roll)
    code, out = run("verify", "--report", view)
    assert code == 0 and "chain OK" in out, out
    after = read_game(playing_dir)
    nxt = after.state.awaiting()[0]
    mine = tmp_path / "next.toml"
    nxt_reg = after.registration(nxt)
    assert nxt_reg is not None
    mine.write_text(report.order_skeleton(after.state, nxt, nxt_reg.secret))
    nxt_view = report_dir(playing_dir, state.resolution) / f"{nxt}.view.json"
    code, out = run("check", "--view", nxt_view, mine)
    assert code == 0 and "valid" in out, out
    code, out = run("kit", tmp_path)
    assert code == 0, out
    code, out = bare(sys.executable, tmp_path / KIT_NAME, tmp_path, "verify", "--report", str(view))
    assert code == 0 and "chain OK" in out, out
