"""Tournaments: the schedules (every pair meets in a round-robin, Swiss rounds by points
without rematches where possible, seats balanced), the tournament file, its games made with
`pbem new`'s library function, the next round made by `pbem run` once the last game of a
round is over, refusals that change nothing, and a round whose making was interrupted."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import force_state, held_lock, write_bot_orders
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.cli import main
from pbem.club import schedule
from pbem.club import tournament as tour
from pbem.core.events import Eliminated
from pbem.core.state import Holding, Options, Phase
from pbem.errors import PbemError
from pbem.game import processor
from pbem.records import clock
from pbem.records.history import history_count, read_history
from pbem.records.opening import read_game

NOW = "2027-03-01T12:00:00+00:00"
EIGHT = ["ann", "ben", "cy", "dee", "eve", "fay", "gus", "hal"]


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def refused(*args: object) -> str:
    """A command refused with a sentence: exit 1, an `Error:` line, no traceback."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and "Error: " in result.output
    return result.output


def everything(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def create(root: Path, name: str = "spring", *extra: object, players: list[str] = EIGHT) -> str:
    return run(
        "tournament",
        root,
        name,
        "--format",
        "round-robin",
        "--table-size",
        "4",
        "--players",
        ",".join(players),
        "--now",
        NOW,
        *extra,
    )


def seats_of(directory: Path) -> list[str]:
    return [p.name for p in read_game(directory).state.players]


def round_the_table(seats: list[str], given: list[str]) -> bool:
    return any(given[k:] + given[:k] == seats for k in range(len(given)))


def play_on(root: Path, games: list[str], rng: random.Random) -> str:
    """The bots' orders for every awaited player of `games`, then one `pbem run` of the root."""
    for name in games:
        if read_game(root / name).state.phase is not Phase.OVER:
            write_bot_orders(root / name, rng)
    return run("run", root, "--now", NOW)


def over(root: Path, name: str) -> bool:
    return read_game(root / name).state.phase is Phase.OVER


def end_game(directory: Path, winner: str, out: tuple[str, ...] = ()) -> None:
    """Force a game over: `winner` won, the players of `out` lost their seats."""
    state = read_game(directory).state
    players = tuple(replace(p, alive=p.name not in out) for p in state.players)
    land = {
        t: Holding(winner, h.armies) if h.owner in out else h for t, h in state.territories.items()
    }
    over = replace(state, phase=Phase.OVER, winner=winner, players=players, territories=land)
    force_state(directory, over)


# The schedules --------------------------------------------------------------------------


def test_tables_are_as_even_as_possible_and_never_under_two() -> None:
    assert schedule.table_sizes(8, 4) == [4, 4]
    assert schedule.table_sizes(10, 4) == [4, 3, 3]
    assert schedule.table_sizes(9, 4) == [3, 3, 3]
    assert schedule.table_sizes(5, 4) == [3, 2]
    assert schedule.table_sizes(7, 2) == [3, 2, 2]
    assert schedule.table_sizes(13, 6) == [5, 4, 4]


def test_eight_players_at_tables_of_four_meet_in_three_rounds() -> None:
    rounds = schedule.round_robin(EIGHT, 4)
    assert schedule.lower_bound(8, 4) == 3 and len(rounds) == 3
    assert schedule.pairs_met(rounds) == {frozenset(p) for p in itertools.combinations(EIGHT, 2)}
    for one in rounds:
        assert sorted(len(t) for t in one) == [4, 4]
        assert sorted(p for t in one for p in t) == sorted(EIGHT)
    assert schedule.round_robin(EIGHT, 4) == rounds  # deterministic


def test_known_optimal_round_robins_are_found() -> None:
    assert len(schedule.round_robin(list(range(9)), 3)) == 4  # Kirkman's schoolgirls, in small
    assert len(schedule.round_robin(list(range(16)), 4)) == 5
    assert len(schedule.round_robin(list(range(10)), 2)) == 9  # the circle method


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=2, max_value=6).flatmap(
        lambda k: st.tuples(st.just(k), st.integers(k + 1, 22))
    )
)
def test_every_pair_meets_in_a_round_robin(case: tuple[int, int]) -> None:
    size, n = case
    players = [f"p{i}" for i in range(n)]
    rounds = schedule.round_robin(players, size)
    assert schedule.pairs_met(rounds) == {frozenset(p) for p in itertools.combinations(players, 2)}
    assert len(rounds) >= schedule.lower_bound(n, size)
    for one in rounds:
        assert sorted(p for t in one for p in t) == sorted(players)  # everyone once a round
        assert all(2 <= len(t) <= 6 for t in one)
        assert sorted((len(t) for t in one), reverse=True) == schedule.table_sizes(n, size)
        assert max(len(t) for t in one) - min(len(t) for t in one) <= 1


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=2, max_value=6),
    st.integers(min_value=3, max_value=40),
    st.integers(min_value=0, max_value=2**32),
)
def test_a_swiss_round_seats_everyone_once_at_tables_of_two_to_six(
    size: int, n: int, seed: int
) -> None:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(n)]
    points = {p: rng.randrange(3) for p in players}
    met = {frozenset(pair) for pair in itertools.combinations(players, 2) if rng.random() < 0.2}
    standing = sorted(players, key=lambda p: -points[p])
    tables = schedule.swiss_round(standing, size, met, points)
    assert sorted(p for t in tables for p in t) == sorted(players)
    assert all(2 <= len(t) <= 6 for t in tables)
    assert sorted((len(t) for t in tables), reverse=True) == schedule.table_sizes(n, size)
    if not met:
        assert schedule.rematches(tables, met) == 0


def test_swiss_puts_the_winners_together_and_avoids_rematches() -> None:
    players = [f"p{i}" for i in range(16)]
    first = schedule.first_swiss_round(players, 4)
    assert [t[0] for t in first] == ["p0", "p1", "p2", "p3"]  # the seeds head a table each
    met = schedule.pairs_met([first])
    winners = [t[-1] for t in first]
    points = {p: 1 if p in winners else 0 for p in players}
    standing = sorted(players, key=lambda p: (-points[p], players.index(p)))
    tables = schedule.swiss_round(standing, 4, met, points)
    assert sorted(tables[0]) == sorted(winners)
    assert schedule.rematches(tables, met) == 0


def test_swiss_rematches_only_when_it_cannot_be_helped() -> None:
    nine = [f"p{i}" for i in range(9)]
    met = schedule.pairs_met([[nine[0:3], nine[3:6], nine[6:9]]])
    points = {p: 1 if p in ("p0", "p3", "p6") else 0 for p in nine}
    standing = sorted(nine, key=lambda p: -points[p])
    tables = schedule.swiss_round(standing, 3, met, points)
    assert schedule.rematches(tables, met) == 0
    assert sorted(tables[0]) == ["p0", "p3", "p6"]
    # Eight at two tables of four after one round: every table of the next has met pairs.
    eight = EIGHT
    met = schedule.pairs_met([[eight[:4], eight[4:]]])
    points = {p: 1 if p in ("ann", "eve") else 0 for p in eight}
    standing = sorted(eight, key=lambda p: -points[p])
    tables = schedule.swiss_round(standing, 4, met, points)
    assert {"ann", "eve"} <= set(tables[0])
    assert schedule.rematches(tables, met) == 4  # two a table: the fewest possible


def test_swiss_rounds_are_enough_for_one_player_to_win_every_game() -> None:
    assert schedule.swiss_rounds(8, 4) == 2
    assert schedule.swiss_rounds(16, 2) == 4
    assert schedule.swiss_rounds(17, 4) == 3
    assert schedule.swiss_rounds(5, 4) == 2


def test_seats_are_balanced_over_a_round_robin() -> None:
    rounds, seats = schedule.seated(schedule.round_robin(EIGHT, 4))
    assert all(max(c) == 1 for c in seats.values())  # three rounds, never the same seat twice
    assert all(sum(c) == 3 for c in seats.values())
    twelve = [f"p{i}" for i in range(12)]
    rounds, seats = schedule.seated(schedule.round_robin(twelve, 4))
    assert all(max(c) - min(c + [0] * (4 - len(c))) <= 1 for c in seats.values())


def test_a_game_result_gives_points_and_the_tie_break() -> None:
    result = tour.GameResult(("cy",), ("ann", "ben"))
    table = ("ann", "ben", "cy", "dee")
    assert result.points(table) == {"ann": 0, "ben": 0, "cy": 1, "dee": 0}
    assert result.outlasted(table) == {"ann": 0, "ben": 1, "cy": 3, "dee": 2}


def test_a_played_game_s_result_comes_from_its_history(tmp_path: Path) -> None:
    from test_old_games import play_to_the_end

    directory = play_to_the_end(tmp_path)
    fallen = [
        e.player
        for r in range(history_count(directory))
        for e in read_history(directory, r).events
        if isinstance(e, Eliminated)
    ]
    result = tour.game_result(directory)
    assert result is not None
    assert result.winners == (read_game(directory).state.winner,)
    assert list(result.out) == fallen and len(fallen) == 2


# Creating and advancing ---------------------------------------------------------------


def test_a_round_robin_makes_its_first_round_and_the_next_when_the_last_game_ends(
    tmp_path: Path,
) -> None:
    root = tmp_path / "games"
    root.mkdir()
    said = create(root, "spring", "--game-rounds", "1", "--turn-time", "48h")
    assert "spring-r1-t1 (" in said and "spring-r1-t2 (" in said
    data = tour.tournament_table(root, "spring")
    assert data["round_count"] == 3 and data["current_round"] == 1
    rounds = [[t["players"] for t in one["tables"]] for one in data["rounds"]]
    assert schedule.pairs_met(rounds) == {frozenset(p) for p in itertools.combinations(EIGHT, 2)}
    assert all(len(t) == 4 for one in rounds for t in one)
    assert all(max(c) == 1 and sum(c) == 3 for c in data["seats"].values())
    made = sorted(p.name for p in root.iterdir() if (p / "game.toml").is_file())
    assert made == ["spring-r1-t1", "spring-r1-t2"]
    for table in data["rounds"][0]["tables"]:
        game = read_game(root / table["game"])
        assert game.name == table["game"] and game.state.options.rounds == 1
        assert round_the_table(seats_of(root / table["game"]), table["players"])
        assert table["commitment"] == game.commitment  # the creation is checkable
        assert game.schedule is not None and game.deadline is not None
    stored = tour.read_tournament(root, "spring")
    assert [r.made is not None for r in stored.rounds] == [True, False, False]

    rng = random.Random(7)
    while not over(root, "spring-r1-t1"):  # the first table plays to its end, the other waits
        said = play_on(root, ["spring-r1-t1"], rng)
        assert "round 2" not in said
    assert not (root / "spring-r2-t1").exists()
    assert tour.read_tournament(root, "spring").rounds[0].tables[0].result is not None
    while not over(root, "spring-r1-t2"):
        said = play_on(root, ["spring-r1-t2"], rng)
    second = ", ".join(
        f"{t['game']} ({', '.join(t['players'])})" for t in data["rounds"][1]["tables"]
    )
    assert f"tournament spring: round 2 created: {second}" in said
    assert said.count("round 2 created") == 1
    for table in data["rounds"][1]["tables"]:
        assert round_the_table(seats_of(root / table["game"]), table["players"])
    assert "round 2" not in run("run", root, "--now", NOW)  # made once

    data = tour.tournament_table(root, "spring")
    assert [r["state"] for r in data["rounds"]] == ["over", "playing", "waiting"]
    winners = [w for t in data["rounds"][0]["tables"] for w in t["winners"]]
    assert len(winners) == 2 and sorted(data["points"].values()) == [0] * 6 + [1, 1]
    top = data["standings"][:2]
    assert {s["player"] for s in top} == set(winners) and all(s["tiebreak"] == 3 for s in top)
    assert all(s["games"] == 1 for s in data["standings"])
    json.dumps(data)  # what the club's pages render
    shown = run("tournament", "show", root, "spring")
    assert "Round 1: over" in shown and "Standings:" in shown and "spring-r3-t2" in shown
    assert json.loads(run("tournament", "show", root, "spring", "--json")) == data
    assert run("tournament", "list", root).startswith("spring: round-robin, 8 players")


def test_a_tournament_is_over_after_its_last_round(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    players = [tour.Entrant(n) for n in EIGHT[:5]]
    made = tour.create_tournament(root, "duel", players, "swiss", 4, clock.parse_instant(NOW), 2)
    assert [len(t.players) for t in made.rounds[0].tables] == [3, 2]
    when = clock.parse_instant(NOW)
    for number in (1, 2):
        for table in tour.read_tournament(root, "duel").rounds[number - 1].tables:
            end_game(root / table.game, table.players[0])
        said = tour.advance_tournaments(root, when)
    top = tour.standings(tour.read_tournament(root, "duel"))
    leaders = [s["player"] for s in top if s["rank"] == 1]
    points = top[0]["points"]
    assert said == [
        f"tournament duel is over: {' and '.join(leaders)} "
        + ("wins with 2 points" if len(leaders) == 1 else f"share first place with {points} point")
    ]
    assert all(s["games"] == 2 for s in top) and sum(s["points"] for s in top) == 4
    assert tour.advance_tournaments(root, when) == []  # said once
    assert tour.tournament_table(root, "duel")["state"] == "over"


def test_swiss_pairs_the_next_round_by_points_without_rematches(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    nine = [f"p{i}" for i in range(1, 10)]
    run(
        "tournament", "new", root, "autumn", "--format", "swiss", "--table-size", "3",
        "--players", ",".join(nine[:5]), *(a for p in nine[5:] for a in ("--player", p)),
        "--now", NOW,
    )  # fmt: skip
    first = tour.read_tournament(root, "autumn")
    assert first.round_count == 2 and len(first.rounds) == 1
    assert [sorted(t.players) for t in first.rounds[0].tables] == [
        ["p1", "p4", "p7"],
        ["p2", "p5", "p8"],
        ["p3", "p6", "p9"],
    ]
    winners = {"p7", "p5", "p3"}
    for table in first.rounds[0].tables:
        (winner,) = winners & set(table.players)
        out = tuple(p for p in table.players if p != winner)
        end_game(root / table.game, winner, out)
    said = run("run", root, "--now", NOW)
    assert "tournament autumn: round 2 created: autumn-r2-t1 (" in said
    second = tour.read_tournament(root, "autumn")
    tables = [t.players for t in second.rounds[1].tables]
    assert set(tables[0]) == winners  # the three with a point
    assert (
        schedule.rematches(
            tables, schedule.pairs_met([[t.players for t in first.rounds[0].tables]])
        )
        == 0
    )
    for table in second.rounds[1].tables:
        assert round_the_table(seats_of(root / table.game), list(table.players))
    points = tour.tournament_table(root, "autumn")["points"]
    assert {p for p, n in points.items() if n} == winners


def test_odd_counts_make_tables_as_even_as_possible(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    ten = [f"q{i}" for i in range(10)]
    create(root, "ten", players=ten)
    data = tour.tournament_table(root, "ten")
    for one in data["rounds"]:
        assert sorted(len(t["players"]) for t in one["tables"]) == [3, 3, 4]
    assert schedule.pairs_met([[t["players"] for t in r["tables"]] for r in data["rounds"]]) == {
        frozenset(p) for p in itertools.combinations(ten, 2)
    }
    assert sorted(len(seats_of(root / t["game"])) for t in data["rounds"][0]["tables"]) == [3, 3, 4]


# Refusals -------------------------------------------------------------------------------


def test_a_tournament_that_exists_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    create(root)
    before = everything(root)
    said = refused(
        "tournament", root, "spring", "--format", "round-robin", "--table-size", "4",
        "--players", ",".join(EIGHT), "--now", NOW,
    )  # fmt: skip
    assert "tournament 'spring' already exists" in said and "nothing was changed" in said
    said = refused(
        "tournament", "new", root, "SPRING", "--format", "swiss", "--players", ",".join(EIGHT)
    )
    assert "already exists" in said
    assert everything(root) == before


def test_too_few_players_and_other_mistakes_are_refused_with_a_sentence(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    said = refused("tournament", root, "x", "--format", "swiss", "--players", "ann,ben,cy,dee")
    assert "too few players: 4 given" in said and "at least 5" in said
    said = refused("tournament", root, "x", "--format", "swiss", "--players", "ann,ben,ann")
    assert "listed twice" in said
    said = refused("tournament", root, "x", "--format", "swiss", "--player", "ann=nope")
    assert "not an email address" in said
    said = refused("tournament", root, "x", "--format", "round-robin", "--rounds", "3",
                   "--players", ",".join(EIGHT))  # fmt: skip
    assert "--rounds is for a Swiss tournament" in said
    said = refused("tournament", root, "a/b", "--format", "swiss", "--players", ",".join(EIGHT))
    assert "cannot be a tournament name" in said
    said = refused("tournament", root, "x", "--format", "swiss", "--table-size", "4",
                   "--missions", "--players", ",".join(EIGHT[:5]))  # fmt: skip
    assert "Secret Mission Risk" in said and "table of 2" in said
    said = refused("tournament", root, "x", "--format", "swiss", "--players", "ann,ben,cy",
                   "--table-size", "2", "--due-at", "20:00")  # fmt: skip
    assert "--due-at and --timezone need --turn-time" in said
    assert list(root.iterdir()) == []
    said = refused("tournament", "show", root, "nothing")
    assert "there is no tournament 'nothing'" in said


def test_a_game_name_the_root_has_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "games"
    processor.new_game(
        root / "old" / "x", processor.parse_player_list(["a", "b"]), Options(), name="cup-r2-t1"
    )
    before = everything(root)
    said = refused("tournament", root, "cup", "--format", "swiss", "--players", ",".join(EIGHT))
    assert "already holds a game called 'cup-r2-t1'" in said
    assert everything(root) == before and not (root / "tournaments").exists()


def test_a_newer_tournament_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    create(root)
    path = tour.tournament_path(root, "spring")
    path.write_text(path.read_text().replace("format = 1", "format = 2", 1))
    assert "upgrade pbem" in refused("tournament", "show", root, "spring")
    path.write_text(
        path.read_text().replace("format = 2", "format = 1", 1).replace("system", "sys")
    )
    assert "is damaged: 'system' is missing" in refused("tournament", "show", root, "spring")
    said = tour.advance_tournaments(root, clock.parse_instant(NOW))
    assert said and said[0].startswith("tournament spring: ") and "damaged" in said[0]


# Interrupted --------------------------------------------------------------------------


def failing_on(
    monkeypatch: pytest.MonkeyPatch, call: int, error: BaseException, what: str = "new_game"
) -> None:
    """`processor.new_game` fails at its `call`-th call (from 1), as a full disk or a kill;
    or, with `what` "write_game", half way through, when it writes the game file."""
    real = getattr(processor, what)
    calls = [0]

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == call:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(processor, what, failing)


def test_a_round_whose_second_game_failed_is_completed_by_the_next_advance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "games"
    root.mkdir()
    create(root)
    for table in tour.read_tournament(root, "spring").rounds[0].tables:
        end_game(root / table.game, table.players[1])
    when = clock.parse_instant(NOW)
    with monkeypatch.context() as patch:
        failing_on(patch, 2, PbemError("the disk is full"), "write_game")
        said = tour.advance_tournaments(root, when)
    assert said[0].startswith("tournament spring: round 2 created: spring-r2-t1 (")
    assert "round 2 is not complete: spring-r2-t2: the disk is full" in said[1]
    stored = tour.read_tournament(root, "spring")
    assert stored.rounds[1].made is None and stored.rounds[1].tables[0].made
    assert not (root / "spring-r2-t2" / "game.toml").exists()  # new_game took back what it wrote
    said = tour.advance_tournaments(root, when)
    assert said == [
        "tournament spring: round 2 completed (interrupted earlier): "
        + stored.rounds[1].listed(stored.rounds[1].tables[1:])
    ]
    stored = tour.read_tournament(root, "spring")
    assert stored.rounds[1].made is not None
    for table in stored.rounds[1].tables:
        assert table.commitment == read_game(root / table.game).commitment
    assert tour.advance_tournaments(root, when) == []


def test_a_creation_killed_half_way_is_completed_by_the_next_advance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "games"
    root.mkdir()
    with monkeypatch.context() as patch, pytest.raises(KeyboardInterrupt):
        failing_on(patch, 2, KeyboardInterrupt())
        players = [tour.Entrant(n) for n in EIGHT]
        tour.create_tournament(root, "spring", players, "round-robin", 4, clock.parse_instant(NOW))
    assert (root / "spring-r1-t1" / "game.toml").is_file()
    assert not (root / "spring-r1-t2").exists()
    said = refused("tournament", root, "spring", "--format", "round-robin",
                   "--players", ",".join(EIGHT))  # fmt: skip
    assert "already exists" in said and "0 rounds made" in said
    said = run("tournament", "advance", root, "--now", NOW)
    assert said.startswith(
        "tournament spring: round 1 completed (interrupted earlier): spring-r1-t2 ("
    )
    stored = tour.read_tournament(root, "spring")
    assert stored.rounds[0].made is not None
    assert all(t.commitment == read_game(root / t.game).commitment for t in stored.rounds[0].tables)
    assert "No round to make" in run("tournament", "advance", root, "--now", NOW)


def test_a_first_game_that_cannot_be_made_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "games"
    root.mkdir()
    with monkeypatch.context() as patch:
        failing_on(patch, 1, PbemError("the disk is full"))
        said = refused("tournament", root, "spring", "--format", "round-robin",
                       "--players", ",".join(EIGHT))  # fmt: skip
    assert "spring-r1-t1: the disk is full" in said
    assert tour.list_tournaments(root) == []
    assert not (root / "spring-r1-t1").exists()
    create(root)
    assert tour.list_tournaments(root) == ["spring"]


def test_the_game_options_go_to_every_round_and_a_clubs_board_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    islands = Path(processor.__file__).parent.parent / "core" / "boards" / "islands.toml"
    source = tmp_path / "our.toml"
    source.write_text(islands.read_text().replace('name = "islands"', 'name = "our-islands"'))
    five = EIGHT[:5]
    run("tournament", root, "isles", "--format", "swiss", "--table-size", "3", "--board", source,
        "--fortify", "connected", "--game-rounds", "2", "--players", ",".join(five),
        "--now", NOW)  # fmt: skip
    source.unlink()  # the tournament keeps its copy
    assert (root / "tournaments" / "boards" / "isles.toml").is_file()
    for table in tour.read_tournament(root, "isles").rounds[0].tables:
        end_game(root / table.game, table.players[0])
    said = tour.advance_tournaments(root, clock.parse_instant(NOW))
    assert said[0].startswith("tournament isles: round 2 created: isles-r2-t1 (")
    for table in tour.read_tournament(root, "isles").rounds[1].tables:
        state = read_game(root / table.game).state
        assert state.board.name == "our-islands"
        assert state.options.fortify.value == "connected" and state.options.rounds == 2
    run("tournament", root, "spies", "--format", "round-robin", "--table-size", "3",
        "--missions", "--players", ",".join(EIGHT[:6]), "--now", NOW)  # fmt: skip
    for table in tour.read_tournament(root, "spies").rounds[0].tables:
        assert read_game(root / table.game).state.options.missions
    assert tour.list_tournaments(root) == ["isles", "spies"]


def test_a_run_at_the_same_time_leaves_the_tournaments_to_the_other(tmp_path: Path) -> None:
    root = tmp_path / "games"
    root.mkdir()
    create(root)
    before = everything(root)
    with held_lock(root / "tournaments"):
        said = tour.advance_tournaments(root, clock.parse_instant(NOW))
        assert said == [
            f"tournaments: another run is making the games of the tournaments of {root}; try "
            "again when it is done"
        ]
        assert "another run" in refused(
            "tournament", root, "other", "--format", "swiss", "--players", ",".join(EIGHT)
        )
    assert everything(root) == before


def test_the_next_rounds_first_reports_go_out_in_the_same_run(tmp_path: Path) -> None:
    from test_mail import running_server

    root = tmp_path / "games"
    root.mkdir()
    players = [tour.Entrant(n, f"{n}@club.example") for n in EIGHT[:4]]
    tour.create_tournament(root, "cup", players, "swiss", 2, clock.parse_instant(NOW), 2)
    for server in running_server():
        run("config", root, "from=games@club.example", "smtp_host=127.0.0.1")
        run("config", root, f"smtp_port={server.port}")
        run("run", root, "--send", "--now", NOW)  # the first round's reports
        server.recorder.messages().clear()
        for table in tour.read_tournament(root, "cup").rounds[0].tables:
            end_game(root / table.game, table.players[0])
        said = run("run", root, "--send", "--now", NOW)
        assert "tournament cup: round 2 created" in said
        second = tour.read_tournament(root, "cup").rounds[1].tables
        sent = {(str(m["To"]), str(m["Subject"])) for m in server.recorder.messages()}
        for table in second:
            for player in table.players:
                assert any(
                    to == f"{player}@club.example" and f"[{table.game}]" in subject
                    for to, subject in sent
                ), (player, table.game, sorted(sent))
            assert not list((root / table.game / "outbox").glob("*.eml"))
