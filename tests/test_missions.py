"""Secret Mission Risk: the deck, the deal, each card's test, the "destroy" fallback, winning
(on one's own turn and on another's), and the reveal at the end."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SEED
from helpers import BOARD, HIDDEN, make_state, only, orders, play, randomness

from pbem.cli import main
from pbem.core import missions
from pbem.core.autopilot import autopilot_orders
from pbem.core.engine import new_game, resolve
from pbem.core.events import (
    Eliminated,
    MissionCompleted,
    MissionDealt,
    MissionFellBack,
    Placed,
    Won,
)
from pbem.core.orders import Attack, Fortify
from pbem.core.state import GameState, Options, Phase, state_digest
from pbem.errors import PbemError
from pbem.game import processor
from pbem.present import report, verify
from pbem.present.view import game_view
from pbem.records.opening import read_game
from pbem.records.store import write_game

MISSIONS = Options(missions=True)
NA = BOARD.continents["North America"].territories
AFRICA = BOARD.continents["Africa"].territories
EUROPE = BOARD.continents["Europe"].territories
SOUTH_AMERICA = BOARD.continents["South America"].territories
AUSTRALIA = BOARD.continents["Australia"].territories
ASIA = BOARD.continents["Asia"].territories


def with_missions(
    state: GameState, cards: Mapping[str, str], fallback: tuple[str, ...] = ()
) -> GameState:
    """`state` as a game with missions, each player holding the card given (others: 18
    territories with 2 armies each, which no test state with 1 army a territory completes)."""
    players = tuple(
        replace(
            p,
            mission=cards.get(p.name, "territories:18,2"),
            mission_fallback=p.name in fallback,
        )
        for p in state.players
    )
    return replace(state, options=replace(state.options, missions=True), players=players)


def holding(territories: tuple[str, ...] | list[str], armies: int = 1) -> dict[str, object]:
    return {t: ("alice", armies) for t in territories}


def first_n(n: int, armies: int = 1) -> dict[str, object]:
    return holding(list(BOARD.names[:n]), armies)


# --- the deck and the deal -----------------------------------------------------------------


def test_the_deck_has_the_published_cards_and_one_destroy_card_per_seat() -> None:
    cards = missions.deck(["alice", "bob", "carol"])
    assert len(cards) == 11
    assert cards[:8] == missions.FIXED_CARDS
    assert cards[8:] == ("destroy:alice", "destroy:bob", "destroy:carol")
    assert len(missions.deck(["a", "b", "c", "d", "e", "f"])) == 14
    for card in cards:
        assert missions.Mission.parse(card).describe()


def test_the_deal_takes_cards_from_the_mission_stream_of_the_card_key() -> None:
    seats = ("bob", "carol", "alice")
    # The documented rule, written out: randbelow over HMAC-SHA256(h, "pbem/missions/" || i).
    stream = bytearray()
    for i in range(4):
        stream += hmac.new(HIDDEN, b"pbem/missions/%d" % i, hashlib.sha256).digest()
    cards = list(missions.deck(seats))
    expected = []
    position = 0
    for _ in seats:
        n = len(cards)
        while stream[position] >= 256 - 256 % n:
            position += 1
        expected.append(cards.pop(stream[position] % n))
        position += 1
    assert missions.deal(seats, HIDDEN) == tuple(expected)
    assert len(set(expected)) == 3


def test_a_new_game_with_missions_deals_one_secret_card_per_seat() -> None:
    state, events = new_game("g", ["alice", "bob", "carol"], BOARD, MISSIONS, randomness())
    seats = tuple(p.name for p in state.players)
    dealt = missions.deal(seats, HIDDEN)
    assert [p.mission for p in state.players] == list(dealt)
    assert only(events, MissionDealt) == [
        MissionDealt(n, m) for n, m in zip(seats, dealt, strict=True)
    ]


def test_missions_need_three_to_six_players(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="3 to 6 players, not 2"):
        new_game("g", ["alice", "bob"], BOARD, MISSIONS, randomness())
    with pytest.raises(PbemError, match="played by 3 to 6 players, not 2: add players"):
        processor.new_game(
            tmp_path / "g", processor.parse_player_list(["a", "b"]), MISSIONS, seed=SEED
        )
    assert not (tmp_path / "g").exists()


def test_a_game_without_missions_digests_as_before() -> None:
    state = make_state({"Alaska": "alice"})
    assert "mission" not in json.dumps(state.players[0].to_dict())
    assert "missions" not in state.options.to_dict()
    assert state_digest(state) == state_digest(
        replace(state, options=Options(dice=state.options.dice))
    )


# --- each card's test: complete, and one territory short -----------------------------------

CARD_CASES = [
    ("continents:North America,Africa", holding(NA + AFRICA), "Madagascar"),
    ("continents:North America,Australia", holding(NA + AUSTRALIA), "Alaska"),
    ("continents:Asia,South America", holding(ASIA + SOUTH_AMERICA), "Peru"),
    ("continents:Asia,Africa", holding(ASIA + AFRICA), "Siam"),
    (
        "continents:Europe,South America,+1",
        holding(EUROPE + SOUTH_AMERICA + AUSTRALIA),
        "Western Australia",
    ),
    (
        "continents:Europe,Australia,+1",
        holding(EUROPE + AUSTRALIA + SOUTH_AMERICA),
        "Brazil",
    ),
    ("territories:24", first_n(24), BOARD.names[0]),
    ("territories:18,2", first_n(18, 2), BOARD.names[0]),
]


@pytest.mark.parametrize(("card", "owners", "short"), CARD_CASES, ids=[c[0] for c in CARD_CASES])
def test_each_mission_card_is_done_exactly_when_its_test_holds(
    card: str, owners: dict[str, object], short: str
) -> None:
    done = with_missions(make_state(owners, players=["alice", "bob", "carol"]), {"alice": card})
    assert missions.completed(done, "alice")
    one_short = dict(owners)
    if card == "territories:18,2":
        one_short[short] = ("alice", 1)  # 17 territories with 2 armies, one with 1
    else:
        one_short[short] = "bob"
    state = make_state(one_short, players=["alice", "bob", "carol"])  # type: ignore[arg-type]
    assert not missions.completed(with_missions(state, {"alice": card}), "alice")


def test_a_destroy_mission_is_done_when_its_target_is_out() -> None:
    alive = with_missions(
        make_state({"Alaska": "bob"}, default="alice", players=["alice", "bob", "carol"]),
        {"alice": "destroy:bob"},
    )
    assert not missions.completed(alive, "alice")
    out = replace(alive, players=tuple(replace(p, alive=p.name != "bob") for p in alive.players))
    assert missions.completed(out, "alice")


def test_a_destroy_mission_aimed_at_its_holder_is_occupy_24() -> None:
    state = with_missions(make_state(first_n(24)), {"alice": "destroy:alice"})
    assert missions.current(state.player("alice")) == missions.Mission.parse("territories:24")
    assert missions.completed(state, "alice")


def test_the_plus_one_card_needs_a_third_continent() -> None:
    state = make_state(holding(EUROPE + SOUTH_AMERICA), players=["alice", "bob", "carol"])
    state = with_missions(state, {"alice": "continents:Europe,South America,+1"})
    assert not missions.completed(state, "alice")
    assert missions.progress(state, "alice") == (
        "you hold 7/7 of Europe, 4/4 of South America; one more continent: none held yet"
    )


def test_progress_says_how_far_each_mission_is() -> None:
    owners = holding(ASIA[:9]) | holding(AFRICA[:4])
    state = with_missions(
        make_state(owners, players=["alice", "bob", "carol"]), {"alice": "continents:Asia,Africa"}
    )
    assert missions.progress(state, "alice") == "you hold 9/12 of Asia, 4/6 of Africa"
    assert missions.progress(state, "alice", "alice holds").startswith("alice holds 9/12")


# --- winning -------------------------------------------------------------------------------


def test_a_conquest_that_completes_the_mission_wins_at_once() -> None:
    owners = holding(NA + AFRICA) | {
        "Madagascar": "bob",
        "Peru": "bob",
        "East Africa": ("alice", 20),
    }
    state = with_missions(
        make_state(owners, default="carol", players=["alice", "bob", "carol"]),
        {"alice": "continents:North America,Africa"},
    )
    new, events = play(
        state,
        orders(
            state,
            place=[("East Africa", "rest")],
            attack=[Attack("East Africa", "Madagascar"), Attack("Brazil", "Peru")],
        ),
        check=False,
    )
    assert events[-2:] == (
        MissionCompleted("alice", "continents:North America,Africa", missions.FIXED_CARDS[0]),
        Won("alice"),
    )
    assert new.phase is Phase.OVER and new.winner == "alice"
    assert {p.name for p in new.players if p.alive} == {"alice", "bob", "carol"}


def test_a_placement_that_completes_the_mission_wins_before_any_attack() -> None:
    owners = first_n(17, 2) | {BOARD.names[17]: ("alice", 1)}
    state = with_missions(
        make_state(owners, players=["alice", "bob", "carol"], default="bob"),
        {"alice": "territories:18,2"},
    )
    new, events = play(
        state,
        orders(
            state,
            place=[(BOARD.names[17], 1), (BOARD.names[0], 4)],
            attack=[Attack(BOARD.names[0], BOARD.names[20])],
        ),
        check=False,
    )
    assert events[-3:] == (
        Placed("alice", BOARD.names[17], 1),
        MissionCompleted("alice", "territories:18,2", "territories:18,2"),
        Won("alice"),
    )
    assert new.winner == "alice"


def test_a_fortification_that_completes_the_mission_wins() -> None:
    # Alaska and Northwest Territory are adjacent; Alaska gets the armies to move.
    owners = first_n(18, 2) | {"Alaska": ("alice", 1), "Northwest Territory": ("alice", 9)}
    state = with_missions(
        make_state(owners, players=["alice", "bob", "carol"]), {"alice": "territories:18,2"}
    )
    new, events = play(
        state,
        orders(
            state,
            place=[("Northwest Territory", "rest")],
            fortify=Fortify("Northwest Territory", "Alaska", 1),
        ),
        check=False,
    )
    assert isinstance(events[-2], MissionCompleted) and new.winner == "alice"


def test_destroying_the_target_wins() -> None:
    owners = {"Madagascar": "bob", "East Africa": ("alice", 30)}
    state = with_missions(
        make_state(owners, default="carol", players=["alice", "bob", "carol"]),
        {"alice": "destroy:bob"},
    )
    new, events = play(
        state,
        orders(
            state, place=[("East Africa", "rest")], attack=[Attack("East Africa", "Madagascar")]
        ),
    )
    assert only(events, Eliminated) == [Eliminated("bob", "alice", 0)]
    assert events[-2:] == (MissionCompleted("alice", "destroy:bob", "destroy:bob"), Won("alice"))
    assert new.winner == "alice" and new.player("carol").alive


def test_a_target_eliminated_by_another_player_turns_the_mission_into_24_territories() -> None:
    owners = {"Madagascar": "bob", "East Africa": ("alice", 30), "Alaska": "carol"}
    state = with_missions(
        make_state(owners, default="alice", players=["alice", "bob", "carol"]),
        {"carol": "destroy:bob", "alice": "territories:24"},
    )
    # alice holds 40 territories: give her a mission she has not done yet.
    state = with_missions(state, {"carol": "destroy:bob", "alice": "continents:Asia,Africa"})
    state = replace(
        state,
        territories={
            **state.territories,
            **{t: replace(state.territories[t], owner="carol") for t in ASIA[:2]},
        },
    )
    new, events = play(
        state,
        orders(
            state, place=[("East Africa", "rest")], attack=[Attack("East Africa", "Madagascar")]
        ),
    )
    assert MissionFellBack("carol", "bob", "bob was eliminated by alice") in events
    assert new.player("carol").mission_fallback
    assert missions.current(new.player("carol")) == missions.Mission.parse("territories:24")
    assert new.phase is Phase.PLAY  # carol holds 3 territories, far from 24


def test_a_fallen_back_mission_can_win_on_another_players_turn() -> None:
    carol = {t: ("carol", 1) for t in [t for t in BOARD.names if t not in AFRICA][:24]}
    owners = carol | {"Madagascar": "bob", "East Africa": ("alice", 30)}
    state = with_missions(
        make_state(owners, default="alice", players=["alice", "bob", "carol"]),
        {"carol": "destroy:bob", "alice": "continents:Asia,Africa"},
    )
    new, events = play(
        state,
        orders(
            state, place=[("East Africa", "rest")], attack=[Attack("East Africa", "Madagascar")]
        ),
    )
    assert events[-3:] == (
        MissionFellBack("carol", "bob", "bob was eliminated by alice"),
        MissionCompleted("carol", "territories:24", "destroy:bob"),
        Won("carol"),
    )
    assert new.winner == "carol" and new.turn == state.turn


def test_a_dropped_target_turns_the_mission_into_24_territories() -> None:
    state = with_missions(
        make_state(
            {"Alaska": "bob", "Peru": "carol"}, default="alice", players=["bob", "carol", "alice"]
        ),
        {"carol": "destroy:bob", "alice": "continents:Asia,Africa"},
    )
    state = replace(
        state,
        options=replace(state.options, drop_after=1),
        territories={
            **state.territories,
            **{t: replace(state.territories[t], owner="carol") for t in ASIA[:3]},
        },
    )
    new, events = resolve(
        state, [autopilot_orders(state, "bob", "x")], randomness(), autopilot={"bob"}
    )
    assert MissionFellBack("carol", "bob", "bob left the game after missed turns") in events
    assert new.player("carol").mission_fallback and new.phase is Phase.PLAY


def test_eliminating_the_last_opponent_still_wins() -> None:
    owners = {"Madagascar": "bob", "East Africa": ("alice", 30)}
    state = with_missions(
        make_state(owners, default="alice", players=["alice", "bob", "carol"], dead=["carol"]),
        {"bob": "territories:24"},
    )
    new, events = play(
        state,
        orders(
            state, place=[("East Africa", "rest")], attack=[Attack("East Africa", "Madagascar")]
        ),
    )
    assert events[-1] == Won("alice") and not only(events, MissionCompleted)
    assert new.winner == "alice"


# --- secrecy and the reveal ----------------------------------------------------------------


def mission_game(tmp_path: Path) -> Path:
    directory = tmp_path / "game"
    processor.new_game(
        directory,
        processor.parse_player_list(["alice", "bob", "carol"]),
        MISSIONS,
        seed=SEED,
        name="test-game",
    )
    return directory


def test_each_view_shows_its_own_mission_and_the_moderators_every_one(tmp_path: Path) -> None:
    game = read_game(mission_game(tmp_path))
    for p in game.state.players:
        view = game_view(game.state, p.name)
        shown = {q["name"]: q.get("mission") for q in view["players"]}
        assert shown[p.name] is not None and shown[p.name]["card"] == p.mission
        assert [n for n, m in shown.items() if m] == [p.name]
    moderator = game_view(game.state, None)
    assert all(q["mission"]["card"] for q in moderator["players"])


def test_the_game_file_records_the_missions(tmp_path: Path) -> None:
    directory = mission_game(tmp_path)
    text = (directory / "game.toml").read_text()
    assert "missions = true" in text and 'mission = "' in text
    assert read_game(directory).state.options.missions


def finished(directory: Path, winner: str = "alice") -> processor.Game:  # type: ignore[name-defined]
    game = read_game(directory)
    return replace(game, state=replace(game.state, phase=Phase.OVER, winner=winner))


def test_the_end_reveals_every_mission_to_everyone(tmp_path: Path) -> None:
    game = finished(mission_game(tmp_path))
    for p in game.state.players:
        view = json.loads(report.view_file(game, 9, (), p.name))
        assert {q["name"]: q["mission"]["card"] for q in view["players"]} == {
            q.name: q.mission for q in game.state.players
        }
        text = report.render(game, 9, (), p.name, "txt")
        assert "Secret missions, revealed" in text
        for q in game.state.players:
            assert q.mission is not None
            goal = missions.current(q)
            assert goal is not None
            said = goal.describe()  # (another's choice is theirs, one's own is "yours")
            if q.name != p.name:
                said = said.replace("of your choice", "of their choice")
            assert said in text


def test_verify_checks_the_revealed_missions_against_the_card_key(tmp_path: Path) -> None:
    game = finished(mission_game(tmp_path))
    path = tmp_path / "alice.view.json"
    path.write_text(report.view_file(game, 9, (), "alice"))
    deal = verify.read_mission_deal(path)
    assert deal is not None and deal.ok
    result = CliRunner().invoke(main, ["verify", "--report", str(path)])
    assert result.exit_code == 0, result.output
    assert "card key OK" in result.output and "mission of alice OK" in result.output
    data = json.loads(path.read_text())
    data["players"][0]["mission"]["card"] = (
        "territories:24"
        if (data["players"][0]["mission"]["card"] != "territories:24")
        else "territories:18,2"
    )
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["verify", "--report", str(path)])
    assert result.exit_code == 1 and "does NOT match" in result.output


def test_a_final_view_with_a_mission_taken_away_does_not_verify(tmp_path: Path) -> None:
    """A final view of a game with missions that leaves one player's mission out is not a
    deal that verifies by skipping it: it is incomplete."""
    game = finished(mission_game(tmp_path))
    data = json.loads(report.view_file(game, 9, (), "alice"))
    del data["players"][1]["mission"]
    path = tmp_path / "alice.view.json"
    path.write_text(json.dumps(data))
    with pytest.raises(verify.VerifyError, match="the view file's missions are incomplete"):
        verify.read_mission_deal(path)
    result = CliRunner().invoke(main, ["verify", "--report", str(path)])
    assert result.exit_code != 0 and "missions are incomplete" in result.output


def test_no_mission_check_before_the_end(tmp_path: Path) -> None:
    game = read_game(mission_game(tmp_path))
    path = tmp_path / "alice.view.json"
    path.write_text(report.view_file(game, 0, (), "alice"))
    assert verify.read_mission_deal(path) is None


def test_audit_checks_the_deal_against_the_card_key(tmp_path: Path) -> None:
    directory = mission_game(tmp_path)
    assert processor.audit_game(directory).resolutions == 1
    history = directory / "history" / "0000.toml"
    text = history.read_text()
    game = read_game(directory)
    first = game.state.players[0]
    other = next(
        c for c in missions.FIXED_CARDS if c not in {p.mission for p in game.state.players}
    )
    history.write_text(text.replace(f'mission = "{first.mission}"', f'mission = "{other}"', 1))
    with pytest.raises(
        PbemError,
        match=r"the deal \(resolution 0, history/0000.toml\): event \d+: recorded '\w+ was "
        r"dealt the secret mission: .*' but the replay gives '\w+ was dealt the secret mission",
    ):
        processor.audit_game(directory)


def test_a_game_file_that_mislays_a_mission_is_refused(tmp_path: Path) -> None:
    directory = mission_game(tmp_path)
    game = read_game(directory)
    players = tuple(
        replace(p, mission="destroy:zed") if p.seat == 0 else p for p in game.state.players
    )
    write_game(replace(game, state=replace(game.state, players=players)))
    with pytest.raises(PbemError, match="'destroy:zed' is not a mission card of this game"):
        read_game(directory)


def test_a_game_file_that_does_not_say_whether_it_plays_missions_is_refused(
    tmp_path: Path,
) -> None:
    directory = mission_game(tmp_path)
    path = directory / "game.toml"
    path.write_text(path.read_text().replace("missions = true\n", "", 1))
    with pytest.raises(PbemError, match="write missions = false .classic Risk. or missions = true"):
        read_game(directory)


def test_pbem_new_with_missions_says_so_and_refuses_two_players(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["new", str(tmp_path / "a"), "--players", "a,b,c", "--missions"])
    assert ok.exit_code == 0 and "secret mission is in their own report only" in ok.output
    bad = runner.invoke(main, ["new", str(tmp_path / "b"), "--players", "a,b", "--missions"])
    assert bad.exit_code != 0 and "Secret Mission Risk is played by 3 to 6 players" in bad.output
    assert "Traceback" not in bad.output


def test_the_moderators_summary_names_the_mission_that_won() -> None:
    state = make_state(first_n(24), phase=Phase.OVER, winner="alice")
    events = (MissionCompleted("alice", "territories:24", "destroy:alice"), Won("alice"))
    text = processor.summary(processor.Outcome(7, state, events))
    assert (
        "alice has done their secret mission: occupy 24 territories (the card dealt: eliminate "
        "alice from the game)." in text
    )
    assert "The game is over: alice won." in text


# --- how a mission is told ------------------------------------------------------------------


def test_the_progress_of_a_mission_with_armies_is_told_to_its_holder_and_to_others() -> None:
    from pbem.present import missions as told

    state = with_missions(make_state(first_n(5, 2)), {})
    assert told.progress(state, "alice", "alice") == (
        "you hold 5/18 territories with at least 2 armies"
    )
    assert told.progress(state, "alice", None) == (
        "alice holds 5/18 territories with at least 2 armies"
    )


def test_a_mission_is_done_only_for_the_winner_who_completed_it() -> None:
    from pbem.present import missions as told

    state = with_missions(make_state(first_n(18, 2)), {})
    alice, bob = state.player("alice"), state.player("bob")
    won = replace(state, phase=Phase.OVER, winner="alice")
    assert told.mission_entry(won, alice, "alice").get("done") is True
    assert "done" not in told.mission_entry(won, bob, "alice")
    assert "done" not in told.mission_entry(state, alice, "alice")  # not over yet
    by_conquest = with_missions(make_state(first_n(5, 2)), {})
    over = replace(by_conquest, phase=Phase.OVER, winner="alice")
    assert "done" not in told.mission_entry(over, alice, "alice")  # won, mission not done


def test_a_draft_round_is_told_in_one_sentence_with_the_fill_in_picks_marked() -> None:
    from pbem.core.events import Drafted
    from pbem.present import missions as told

    events = [
        Drafted("alice", "Alaska", 1, "list"),
        Drafted("bob", "Peru", 1, "rest"),
        Drafted("carol", "Siam", 1, "list"),
        Drafted("alice", "Ural", 2, "list"),
    ]
    assert told.draft_round(events, 0) == (
        "Draft round 1: alice Alaska, bob Peru (fill-in rule), carol Siam.",
        3,
    )
    assert told.draft_round(events, 3) == ("Draft round 2: alice Ural.", 4)


def test_a_draft_forecast_names_the_first_three_picks() -> None:
    from pbem.present import missions as told

    assert told.draft_forecast(["Alaska", "Peru", "Ural", "Siam", "rest"]) == (
        "draft: 4 territories ranked (Alaska, Peru, Ural, ...), then the fill-in rule"
    )
    assert told.draft_forecast(["Alaska", "Peru", "Ural", "rest"]) == (
        "draft: 3 territories ranked (Alaska, Peru, Ural), then the fill-in rule"
    )
    assert told.draft_forecast(["rest"]) == "draft: every pick by the fill-in rule"
    every = list(BOARD.names)
    assert told.draft_forecast(every) == (
        f"draft: all 42 territories ranked ({', '.join(every[:3])}, ...)"
    )
