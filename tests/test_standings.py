"""Standings across a root's games: the ranking of each finished game, the ratings (worked out
again here with openskill from the histories read as plain TOML), the turns played, missed and
away, substitutes, team wins, damaged games skipped, and `pbem standings`."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import tomli as tomllib
import tomli_w
from click.testing import CliRunner
from conftest import write_bot_orders
from openskill.models import PlackettLuce

from pbem.cli import main
from pbem.club.standings import Standings, standings
from pbem.club.standings_text import standings_text
from pbem.core.state import Options, Phase
from pbem.game import processor
from pbem.records.history import report_dir
from pbem.records.opening import read_game

JAN = datetime(2027, 1, 4, 9, tzinfo=timezone.utc)
FEB = datetime(2027, 2, 1, 9, tzinfo=timezone.utc)


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def play_out(directory: Path, seed: int, now: datetime | None = None, most: int = 400) -> Path:
    """The test bots play the game to its end, each resolution a minute after the last (when
    the game keeps times)."""
    rng = random.Random(seed)
    for _ in range(most):
        if read_game(directory).state.phase is Phase.OVER:
            return directory
        write_bot_orders(directory, rng)
        if now is not None:
            now += timedelta(minutes=1)
        processor.resolve_game(directory, now=now)
    raise AssertionError(f"{directory.name} is not over after {most} resolutions")


def bot_game(
    root: Path,
    name: str,
    players: Sequence[str],
    seed: int,
    options: Options | None = None,
    start: datetime | None = None,
    end: bool = True,
) -> Path:
    directory = root / name
    processor.new_game(
        directory,
        [(p, f"{p}@example.org") for p in players],
        options or Options(),
        seed=bytes([seed]) * 32,
        name=name,
        now=start,
    )
    return play_out(directory, seed, start) if end else directory


def history(directory: Path) -> list[dict[str, Any]]:
    """The history files of a game read as plain TOML (nothing of pbem's reading)."""
    out = []
    while (path := directory / "history" / f"{len(out):04d}.toml").is_file():
        out.append(tomllib.loads(path.read_text("utf-8")))
    return out


def events(directory: Path, *kinds: str) -> list[dict[str, Any]]:
    return [e for h in history(directory) for e in h.get("events", []) if e["type"] in kinds]


def ranks_by_hand(directory: Path) -> list[tuple[str, int]]:
    """The ranking of a game won by eliminating everyone else: the winner or the winning team
    tied first, then the others by elimination, the last eliminated first."""
    [won] = events(directory, "won")
    winners = won.get("team", [won["player"]])
    fallen = [e["player"] for e in events(directory, "eliminated", "dropped")]
    others = [p for p in reversed(fallen) if p not in winners]
    return [(p, 1) for p in winners] + [(p, len(winners) + 1 + i) for i, p in enumerate(others)]


def rated_by_hand(games: Sequence[Path]) -> dict[str, Any]:
    """openskill's Plackett-Luce, default parameters, over the games in the order given."""
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    for directory in games:
        ranking = ranks_by_hand(directory)
        teams_of_setup = history(directory)[0]["setup"].get("teams")
        if teams_of_setup:  # a team game: team against team, each at its best place
            rank = dict(ranking)
            sides = sorted(
                ([p for p in team], min(rank[p] for p in team)) for team in teams_of_setup
            )
            sides.sort(key=lambda side: side[1])
        else:
            sides = [([p], r) for p, r in ranking]
        teams = [[ratings.get(p) or model.rating(name=p) for p in side] for side, _ in sides]
        new = model.rate(teams, ranks=[float(rank) for _, rank in sides])
        for (side, _), rated in zip(sides, new, strict=True):
            ratings.update(zip(side, rated, strict=True))
    return ratings


def by_name(table: Standings) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in table.to_dict()["players"]}


def unranked(table: Standings) -> dict[str, dict[str, Any]]:
    """The players, their place in the table left out."""
    return {name: {**p, "rank": None} for name, p in by_name(table).items()}


def game_of(table: Standings, name: str) -> dict[str, Any]:
    [game] = [g for g in table.to_dict()["games"] if g["name"] == name]
    return game


# --- a root of finished games ---------------------------------------------------------------


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root of games: 'zeta' ends in January and 'alpha' in February (so the order by time
    is not the order by name), both with ann and bob; a team game, a game of one round and a
    game of missions, each with players of its own; a game under way."""
    root = tmp_path_factory.mktemp("club")
    bot_game(root, "alpha", ["ann", "bob", "dee"], 4, start=FEB)
    bot_game(root / "old", "zeta", ["ann", "bob", "cy"], 3, start=JAN)
    team = Options(teams=(("kim", "max"), ("lou", "ned")))
    bot_game(root, "teams", ["kim", "lou", "max", "ned"], 5, team, start=FEB)
    bot_game(root, "rounds", ["pia", "quin", "rex"], 5, Options(rounds=1), start=JAN)
    bot_game(root, "missions", ["sam", "tea", "uma"], 5, Options(missions=True))
    going = bot_game(root, "going", ["vic", "wes"], 7, start=JAN, end=False)
    for _ in range(3):
        write_bot_orders(going, random.Random(7))
        processor.resolve_game(going, now=JAN + timedelta(days=40))
    return root


@pytest.fixture(scope="module")
def table(club: Path) -> Standings:
    return standings(club)


def test_a_finished_game_ranks_its_winner_first_and_the_first_eliminated_last(
    club: Path, table: Standings
) -> None:
    for name, folder in (("alpha", club / "alpha"), ("zeta", club / "old" / "zeta")):
        game = game_of(table, name)
        [won] = events(folder, "won")
        first_out = events(folder, "eliminated")[0]["player"]
        assert game["path"] == folder.relative_to(club).as_posix()
        assert game["finished"] and game["victory"] == "conquest"
        assert game["winners"] == [won["player"]]
        places = game["places"]
        assert [p["rank"] for p in places] == [1, 2, 3]
        assert places[0]["seat"] == won["player"] and places[0]["end"] == "won"
        assert places[-1]["seat"] == first_out and places[-1]["end"] == "eliminated"
        assert [(p["seat"], p["rank"]) for p in places] == ranks_by_hand(folder)
        assert places[0]["territories"] == 42 and places[-1]["territories"] == 0
        assert game["time"] == history(folder)[-1]["time"]


def test_games_are_rated_in_the_order_they_ended_and_the_ratings_are_openskills(
    club: Path, table: Standings
) -> None:
    rated = [g["name"] for g in table.to_dict()["games"] if g["finished"]]
    assert rated.index("zeta") < rated.index("alpha")  # January before February
    assert rated[0] == "missions"  # no time recorded: first
    in_time = [club / "old" / "zeta", club / "alpha", club / "teams"]
    by_hand = rated_by_hand(in_time)
    players = by_name(table)
    for name in ("ann", "bob", "cy", "dee", "kim", "lou", "max", "ned"):
        rating = by_hand[name]
        assert players[name]["mu"] == round(rating.mu, 3), name
        assert players[name]["sigma"] == round(rating.sigma, 3), name
        assert players[name]["ordinal"] == round(rating.ordinal(), 1), name
        assert players[name]["ordinal"] == round(rating.mu - 3 * rating.sigma, 1), name
    # the order matters: rated by name, alpha first, ann and bob would stand otherwise
    by_name_order = rated_by_hand([club / "alpha", club / "old" / "zeta"])
    assert any(round(by_name_order[p].mu, 3) != players[p]["mu"] for p in ("ann", "bob")), (
        "the order of the games made no difference: the test cannot tell"
    )
    ranks = [p["rank"] for p in table.to_dict()["players"] if p["rank"] is not None]
    assert ranks == sorted(ranks) and ranks[0] == 1
    ordinals = [p["ordinal"] for p in table.to_dict()["players"] if p["rank"] is not None]
    assert ordinals == sorted(ordinals, reverse=True)


def test_the_winning_team_is_tied_first_and_wins_as_a_team(club: Path, table: Standings) -> None:
    game = game_of(table, "teams")
    [won] = events(club / "teams", "won")
    team = sorted(won["team"])
    assert game["victory"] == "team" and sorted(game["winners"]) == team
    first = [p for p in game["places"] if p["rank"] == 1]
    assert sorted(p["player"] for p in first) == team and all(p["end"] == "won" for p in first)
    assert [p["rank"] for p in game["places"]] == [1, 1, 3, 4]
    players = by_name(table)
    a, b = (players[p] for p in team)
    assert a["wins_by"]["team"] == b["wins_by"]["team"] == 1
    assert (a["mu"], a["sigma"]) == (b["mu"], b["sigma"])  # tied: the same from the same start
    losers = [p for p in ("kim", "lou", "max", "ned") if p not in team]
    assert all(players[p]["won"] == 0 for p in losers)
    assert game["teams"] and len(game["teams"]) == 2
    for loser in losers:  # a team game is rated team against team: every loser below
        assert players[loser]["mu"] < min(players[p]["mu"] for p in team), loser
        assert players[loser]["ordinal"] < min(players[p]["ordinal"] for p in team), loser


def test_a_round_limit_game_ranks_the_survivors_by_their_territories(
    club: Path, table: Standings
) -> None:
    game = game_of(table, "rounds")
    assert game["victory"] == "rounds"
    [over] = events(club / "rounds", "rounds_over")
    state = read_game(club / "rounds").state  # (game.toml: what the history must agree with)
    held = {p.name: len(state.owned(p.name)) for p in state.players}
    places = game["places"]
    assert (
        places[0]["player"] == over["player"] and places[0]["territories"] == held[over["player"]]
    )
    assert all(p["territories"] == held[p["seat"]] for p in places)
    for better, worse in zip(places, places[1:], strict=False):
        assert better["territories"] >= worse["territories"]
        assert (better["rank"] == worse["rank"]) == (
            better["end"] == worse["end"] == "survived"
            and better["territories"] == worse["territories"]
        )
    assert by_name(table)[over["player"]]["wins_by"]["rounds"] == 1


def test_a_mission_game_is_won_by_a_mission(club: Path, table: Standings) -> None:
    game = game_of(table, "missions")
    [done] = events(club / "missions", "mission_completed")
    assert game["victory"] == "mission" and game["winners"] == [done["player"]]
    assert game["time"] is None
    assert by_name(table)[done["player"]]["wins_by"] == {
        "conquest": 0,
        "mission": 1,
        "rounds": 0,
        "team": 0,
    }


def test_every_count_is_the_histories(club: Path, table: Standings) -> None:
    players = by_name(table)
    ann = players["ann"]
    assert (ann["games"], ann["finished"]) == (2, 2)
    assert ann["won"] == sum(e["player"] == "ann" for e in events(club / "alpha", "won")) + sum(
        e["player"] == "ann" for e in events(club / "old" / "zeta", "won")
    )
    turns = sum(
        "ann" in h["players"]
        for d in (club / "alpha", club / "old" / "zeta")
        for h in history(d)[1:]
    )
    assert ann["turns_played"] == turns and ann["turns_missed"] == ann["turns_away"] == 0
    assert ann["reliability"] == 100.0
    # a game under way counts its turns but rates nobody
    assert game_of(table, "going")["finished"] is False
    for name in ("vic", "wes"):
        assert players[name]["games"] == 1 and players[name]["finished"] == 0
        assert players[name]["rank"] is None and players[name]["ordinal"] == 0.0
    assert [p["name"] for p in table.to_dict()["players"][-2:]] == ["vic", "wes"]
    assert table.skipped == ()


def test_pbem_standings_prints_the_table_and_its_json(club: Path, table: Standings) -> None:
    data = json.loads(run("standings", club, "--json"))
    assert data == json.loads(json.dumps(table.to_dict()))
    assert data["model"]["name"] == "PlackettLuce" and data["model"]["mu"] == 25.0
    text = run("standings", club)
    assert text.splitlines() == standings_text(table)
    lines = text.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.split()[:2] == ["#", "PLAYER"])
    for i, player in enumerate(data["players"]):
        row = lines[heading + 1 + i].split()
        assert row[1] == player["name"]
        if player["rank"] is not None:
            assert row[0] == str(player["rank"]) and row[2] == f"{player['ordinal']:.1f}"
    assert "  1. missions (no time recorded):" in text
    assert "going: after turn" in text
    assert text.index(". zeta (ended 2027-01") < text.index(". alpha (ended 2027-02")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the recipe reads TOML with tomllib")
def test_the_recipe_of_the_docs_works_the_ratings_out_again(
    club: Path, table: Standings, tmp_path: Path
) -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "standings.md").read_text()
    [recipe] = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "PlackettLuce()" in b]
    script = tmp_path / "standings.py"
    script.write_text(recipe)
    out = subprocess.run(
        [sys.executable, str(script), str(club)], capture_output=True, text=True, check=True
    ).stdout
    worked = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out.splitlines()}
    rated = {p["name"]: p for p in table.to_dict()["players"] if p["rank"] is not None}
    assert sorted(worked) == sorted(rated) and len(rated) == 14
    for name, (ordinal, mu, sigma) in worked.items():
        assert (ordinal, mu, sigma) == (
            rated[name]["ordinal"],
            rated[name]["mu"],
            rated[name]["sigma"],
        ), name


# --- turns missed, turns away, substitutes, drops ----------------------------------------------


def ready(d: Path, *players: str) -> None:
    """The players send the ready order file of their latest report."""
    for p in players:
        source = report_dir(d, read_game(d).state.resolution - 1) / f"{p}.orders.toml"
        (d / "orders" / f"{p}.toml").write_text(source.read_text())


def test_a_missed_turn_lowers_reliability_and_a_vacation_turn_does_not(tmp_path: Path) -> None:
    d = tmp_path / "g"
    run("new", d, "--players", "alice,bob,carol", "--seed", "09" * 32, "--turn-time", "2d",
        "--now", "2027-03-01T10:00Z", "--vacation-mode", "autopilot")  # fmt: skip
    run("vacation", d, "bob", "--from", "2027-03-02", "--to", "2027-03-05",
        "--now", "2027-03-01T12:00Z")  # fmt: skip
    ready(d, "alice")
    run("resolve", d, "--now", "2027-03-03T11:00Z", "--force")  # bob away, carol silent
    assert {
        e["type"]: e["player"]
        for e in history(d)[1]["events"]
        if "turn" in e and e["type"] in ("away", "missed_turn")
    } == {"away": "bob", "missed_turn": "carol"}
    for minute in range(3):  # three turns, each played by its own player
        ready(d, read_game(d).state.current_player.name)
        run("resolve", d, "--now", f"2027-03-03T12:0{minute}Z")
    players = by_name(standings(tmp_path))
    assert (players["carol"]["turns_played"], players["carol"]["turns_missed"]) == (1, 1)
    assert players["carol"]["reliability"] == 50.0
    bob = players["bob"]
    assert (bob["turns_played"], bob["turns_missed"], bob["turns_away"]) == (1, 0, 1)
    assert bob["reliability"] == 100.0
    assert players["alice"]["reliability"] == 100.0 and players["alice"]["turns_played"] == 2


def test_a_dropped_player_ranks_as_eliminated_when_dropped(tmp_path: Path) -> None:
    d = tmp_path / "g"
    start = "2027-03-01T10:00:00+00:00"
    run("new", d, "--players", "alice,bob,carol", "--seed", "0a" * 32, "--turn-time", "2d",
        "--now", start, "--drop-after", "1")  # fmt: skip
    ready(d, "alice", "bob")
    run("resolve", d, "--now", "2027-03-03T11:00Z")  # carol missed the setup turn: dropped
    assert [e["player"] for e in events(d, "dropped")] == ["carol"]
    play_out(d, 4, datetime(2027, 3, 3, 12, tzinfo=timezone.utc))
    game = game_of(standings(tmp_path), "g")
    assert game["places"][-1] == {
        "rank": 3,
        "seat": "carol",
        "player": "carol",
        "end": "dropped",
        "territories": 0,
        "turn": 0,
    }
    assert [p["end"] for p in game["places"]] == ["won", "eliminated", "dropped"]
    carol = by_name(standings(tmp_path))["carol"]
    assert (carol["turns_played"], carol["turns_missed"], carol["reliability"]) == (0, 1, 0.0)


def test_a_substitute_gets_the_result_and_each_player_their_own_turns(tmp_path: Path) -> None:
    d = bot_game(tmp_path, "g", ["alice", "bob", "carol"], 3, end=False)
    rng = random.Random(1)
    for _ in range(3):
        write_bot_orders(d, rng)
        processor.resolve_game(d)
    run("substitute", d, "carol", "--to", "erin=erin@example.org", "--why", "a move",
        "--now", "2027-03-02T09:30:00+00:00")  # fmt: skip
    play_out(d, 3)
    records = history(d)
    [taken] = [
        r for r, h in enumerate(records) if any(e["type"] == "seat_taken" for e in h["events"])
    ]
    carol_turns = sum("carol" in h["players"] for h in records[1:taken])
    erin_turns = sum("carol" in h["players"] for h in records[taken:])
    assert carol_turns and erin_turns
    table = standings(tmp_path)
    players = by_name(table)
    assert (players["carol"]["turns_played"], players["erin"]["turns_played"]) == (
        carol_turns,
        erin_turns,
    )
    assert (players["carol"]["games"], players["carol"]["finished"]) == (1, 0)
    assert (players["erin"]["games"], players["erin"]["finished"]) == (1, 1)
    assert players["carol"]["rank"] is None
    [place] = [p for p in game_of(table, "g")["places"] if p["seat"] == "carol"]
    assert place["player"] == "erin"
    assert "erin (seat carol)" in "\n".join(standings_text(table))
    [won] = events(d, "won")
    if won["player"] == "carol":
        assert players["erin"]["won"] == 1 and players["carol"]["won"] == 0


# --- damaged games ----------------------------------------------------------------------------


def damage_text(path: Path) -> str:
    path.write_text(path.read_text()[:200])
    return "is damaged"


def damage_setup(path: Path) -> str:
    data = tomllib.loads(path.read_text())
    del data["setup"]
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    return "history/0000.toml has no [setup]"


def damage_event(path: Path) -> str:
    data = tomllib.loads(path.read_text())
    data["events"].append({"type": "eliminated", "player": "zed", "by": "ann", "cards_taken": 0})
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    return "names 'zed', who has no seat in the game"


def damage_time(path: Path) -> str:
    data = tomllib.loads(path.read_text())
    data["time"] = "last Tuesday"
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    return "is not an ISO 8601 time"


@pytest.mark.parametrize(
    ("file", "damage"),
    [("0003", damage_text), ("0000", damage_setup), ("0004", damage_event), ("last", damage_time)],
)
def test_a_damaged_game_is_skipped_with_its_reason_and_the_others_count(
    club: Path, table: Standings, tmp_path: Path, file: str, damage: Any
) -> None:
    root = tmp_path / "club"
    shutil.copytree(club, root)
    folder = root / "old" / "zeta"
    last = len(history(folder)) - 1
    path = folder / "history" / f"{last if file == 'last' else int(file):04d}.toml"
    said = damage(path)
    damaged = standings(root)
    [skipped] = damaged.skipped
    assert skipped.path == "old/zeta" and said in skipped.reason
    assert str(folder) not in skipped.reason  # (the game's files named within it)
    assert "zeta" not in [g.name for g in damaged.games]
    players = unranked(damaged)
    assert "cy" not in players  # (cy played only there)
    assert players["ann"]["games"] == 1
    assert players["dee"] == unranked(standings(root / "alpha"))["dee"]  # (as if zeta were not)
    assert players["kim"] == unranked(table)["kim"]
    out = run("standings", root)
    assert "Skipped (their history cannot be read):" in out and "old/zeta: " in out
    assert "Traceback" not in out


def test_a_folder_that_is_not_there_is_refused_in_a_sentence(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["standings", str(tmp_path / "nowhere")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "does not exist" in result.output
    empty = standings(tmp_path)
    assert empty.to_dict()["players"] == [] and empty.games == ()
    assert "No players: no game could be read." in standings_text(empty)
