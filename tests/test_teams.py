"""Team games: teams made from the command line, team-mates who never attack each other and win
together, fortification into a team-mate's territories, missions and round limits for teams,
what each player's report and view show of their team, and what they never show."""

from __future__ import annotations

import html
import json
from dataclasses import replace
from pathlib import Path

import pytest
import tomli as tomllib
import tomli_w
from click.testing import CliRunner
from conftest import force_state, write_bot_orders, write_skeletons
from helpers import BOARD, make_state, orders

from pbem.cli import main
from pbem.core import missions, rules, validation
from pbem.core.autopilot import autopilot_orders, borders
from pbem.core.engine import Randomness, resolve
from pbem.core.events import (
    Conquered,
    Dropped,
    Eliminated,
    Fortified,
    MissionCompleted,
    RoundsOver,
    Skipped,
    Won,
    event_from_dict,
)
from pbem.core.forecast import forecast_plan
from pbem.core.orders import ALL, Attack, Fortify
from pbem.core.state import FortifyMode, Options, Phase, state_digest
from pbem.core.teams import parse_teams, seating
from pbem.game import processor
from pbem.mail.reports import report_subject
from pbem.present.view import ViewError, game_view, state_from_view
from pbem.records.opening import read_game

RANDOMNESS = Randomness(bytes(32), bytes(32))
TEAMS = (("alice", "carol"), ("bob", "dave"))
SEATS = ["alice", "bob", "carol", "dave"]
TEAM_GAME = Options(teams=TEAMS)
TEAM_FORTIFY = Options(teams=TEAMS, team_fortify=True)


def problems(state: object, o: object) -> list[str]:
    return [p.message for p in validation.validate(state, o)]  # type: ignore[arg-type]


def table(owners: dict[str, object], options: Options = TEAM_GAME, **kw: object) -> object:
    """A state of the four players (alice and carol against bob and dave), alice to play; every
    territory not named is dave's."""
    return make_state(owners, default="dave", players=SEATS, options=options, **kw)  # type: ignore[arg-type]


# --- the teams a game is made with --------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "names", "teams"),
    [
        ("2x2", "abcd", (("a", "c"), ("b", "d"))),
        ("2x3", "abcdef", (("a", "c", "e"), ("b", "d", "f"))),
        ("3x2", "abcdef", (("a", "d"), ("b", "e"), ("c", "f"))),
        ("a+c,b+d", "abcd", (("a", "c"), ("b", "d"))),
        (" A + b , c+D ", "abcd", (("a", "b"), ("c", "d"))),
        ("a+b+c,d+e", "abcde", (("a", "b", "c"), ("d", "e"))),
        ("a+b,c", "abc", (("a", "b"), ("c",))),  # a team of two against one player
    ],
)
def test_teams_are_read_from_a_shape_or_from_names(spec: str, names: str, teams: object) -> None:
    assert parse_teams(spec, list(names)) == teams


@pytest.mark.parametrize(
    ("spec", "names", "reason"),
    [
        ("1x4", "abcd", "not a team game"),
        ("4x1", "abcd", "not a team game"),
        ("2x2", "abcdef", "2 teams of 2 make 4 players, and 6 are listed"),
        ("a+c,b+x", "abcd", "'x' is in a team but not among the players"),
        ("a+c,b", "abcd", "d must play in a team"),
        ("a+c,b+d+a", "abcd", "a cannot play in two teams"),
        ("a+b+c+d", "abcd", "two or more teams"),
        ("a,b,c,d", "abcd", "every team has one player"),
        ("a+,b+c+d", "abcd", "leaves a name out"),
    ],
)
def test_a_bad_team_spec_is_refused_with_its_reason(spec: str, names: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_teams(spec, list(names))


def test_team_mates_sit_apart_one_of_each_team_in_turn() -> None:
    assert seating((("a", "c", "e"), ("b", "d"))) == ("a", "b", "c", "d", "e")
    assert seating((("x", "y"), ("p", "q"), ("m", "n"))) == ("x", "p", "m", "y", "q", "n")


def test_teams_are_recorded_only_in_a_team_game_so_old_digests_stay() -> None:
    assert "teams" not in Options().to_dict()
    assert "team_fortify" not in Options(team_fortify=True).to_dict()  # (no teams: nothing)
    varied = Options(teams=TEAMS, team_fortify=True, team_cards=True)
    data = varied.to_dict()
    assert data["teams"] == [["alice", "carol"], ["bob", "dave"]]
    assert data["team_fortify"] is True and data["team_cards_visible"] is True
    assert Options.from_dict(data) == varied
    state = table({})
    assert state_digest(state) != state_digest(replace(state, options=Options()))
    for bad in ("alice+carol", [["alice", "carol"]], [["alice"], ["alice", "bob"]], [[1], [2]]):
        with pytest.raises(ValueError, match="teams"):
            Options.from_dict({**Options().to_dict(), "teams": bad})


# --- team-mates never attack each other -----------------------------------------------------------


def test_an_attack_on_a_team_mate_is_refused_and_never_made() -> None:
    state = table({"Ukraine": ("alice", 20), "Ural": "carol", "Afghanistan": "bob"})
    o = orders(state, place=[("Ukraine", 3)], attack=[Attack("Ukraine", "Ural")])
    assert problems(state, o) == ["cannot attack 'Ural': carol, your team-mate, holds it"]
    new, events = resolve(state, (o,), RANDOMNESS)  # (made anyway: skipped, with the reason)
    assert [e.reason for e in events if isinstance(e, Skipped)] == [
        "carol, your team-mate, holds Ural"
    ]
    assert new.owner("Ural") == "carol" and new.armies("Ural") == 1
    fine = orders(state, place=[("Ukraine", 3)], attack=[Attack("Ukraine", "Afghanistan")])
    assert problems(state, fine) == []
    alone = replace(state, options=Options())  # (the same attack in a game without teams)
    assert problems(alone, o) == []


def test_the_team_wins_when_no_player_of_another_team_is_left() -> None:
    # dave is out; alice takes bob's last territory: alice and carol win together.
    owners = {"Ukraine": ("alice", 30), "Ural": "bob", "Siam": "carol"}
    state = make_state(owners, default="carol", players=SEATS, dead=["dave"], options=TEAM_GAME)
    new, events = resolve(state, (orders(state, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert any(isinstance(e, Eliminated) and e.player == "bob" for e in events)
    assert events[-1] == Won("alice", ("alice", "carol"))
    assert new.phase is Phase.OVER and new.winner == "alice" and new.won_by == "alice + carol"
    assert event_from_dict(events[-1].to_dict()) == events[-1]
    assert game_view(new, "carol")["winners"] == ["alice", "carol"]


def test_the_team_goes_on_while_a_player_of_the_other_team_is_in() -> None:
    owners = {"Ukraine": ("alice", 30), "Ural": "bob", "Siam": "dave"}
    state = make_state(owners, default="carol", players=SEATS, options=TEAM_GAME)
    new, events = resolve(state, (orders(state, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert any(isinstance(e, Eliminated) and e.player == "bob" for e in events)
    assert not any(isinstance(e, Won) for e in events) and new.phase is Phase.PLAY
    assert game_view(new, "alice").get("winners") is None


def test_a_player_out_of_the_game_wins_with_their_team() -> None:
    owners = {"Ukraine": ("alice", 30), "Ural": "bob"}
    state = make_state(owners, default="alice", players=SEATS, dead=["carol", "dave"])
    state = replace(state, options=TEAM_GAME)
    new, events = resolve(state, (orders(state, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert events[-1] == Won("alice", ("alice", "carol"))
    assert new.won_by == "alice + carol"


def test_the_last_opponents_dropped_for_missed_turns_hand_the_team_the_game() -> None:
    options = replace(TEAM_GAME, drop_after=1)
    state = make_state({"Ural": "bob"}, default="alice", players=SEATS, dead=["dave"])
    state = replace(state, options=options, current=1)  # bob's turn: he sent nothing
    autopilot = autopilot_orders(state, "bob", "x")
    new, events = resolve(state, (autopilot,), RANDOMNESS, autopilot={"bob"})
    assert any(isinstance(e, Dropped) for e in events)
    assert events[-1] == Won("alice", ("alice", "carol")) and new.phase is Phase.OVER


# --- fortifying into a team-mate's territory ------------------------------------------------------


def test_with_team_fortification_armies_go_into_a_team_mates_territory_and_stay_theirs() -> None:
    owners = {"Ukraine": ("alice", 6), "Ural": ("carol", 2), "Afghanistan": "bob"}
    state = table(owners, TEAM_FORTIFY)
    o = orders(state, place=[("Ukraine", 3)], fortify=Fortify("Ukraine", "Ural", 4))
    assert problems(state, o) == []
    assert rules.can_fortify(state, "alice", "Ukraine", "Ural") is None
    new, events = resolve(state, (o,), RANDOMNESS)
    assert Fortified("alice", "Ukraine", "Ural", 4, None) in events
    assert new.owner("Ural") == "carol" and new.armies("Ural") == 6
    assert new.armies("Ukraine") == 5
    plan = forecast_plan(state, o)  # the forecast keeps Ural carol's
    assert plan.fortify is not None and plan.fortify.happens == 1


def test_without_team_fortification_a_team_mates_territory_is_not_yours_to_fortify() -> None:
    owners = {"Ukraine": ("alice", 6), "Ural": ("carol", 2)}
    state = table(owners)
    o = orders(state, place=[("Ukraine", 3)], fortify=Fortify("Ukraine", "Ural", 4))
    assert problems(state, o) == ["cannot fortify with 'Ural': it is not yours"]
    assert rules.can_fortify(state, "alice", "Ukraine", "Ural") == "you do not hold Ural"


def test_a_team_mates_territory_is_never_a_source_nor_an_enemys_a_target() -> None:
    owners = {"Ukraine": ("alice", 6), "Ural": ("carol", 5), "Afghanistan": "bob"}
    state = table(owners, TEAM_FORTIFY)
    out = orders(state, place=[("Ukraine", 3)], fortify=Fortify("Ural", "Ukraine", 2))
    assert problems(state, out) == ["cannot fortify with 'Ural': it is not yours"]
    enemy = orders(state, place=[("Ukraine", 3)], fortify=Fortify("Ukraine", "Afghanistan", 2))
    assert problems(state, enemy) == [
        "cannot fortify 'Afghanistan': neither you nor a team-mate holds it"
    ]
    assert rules.can_fortify(state, "alice", "Ukraine", "Afghanistan") == (
        "neither you nor a team-mate holds Afghanistan"
    )


def test_a_chain_may_pass_through_team_mates_territories_only_with_team_fortification() -> None:
    # Ukraine (alice) - Ural (carol) - Siberia (alice): a chain through carol's Ural.
    owners = {"Ukraine": ("alice", 6), "Ural": "carol", "Siberia": "alice"}
    chained = Options(teams=TEAMS, team_fortify=True, fortify=FortifyMode.CONNECTED)
    state = table(owners, chained)
    assert rules.can_fortify(state, "alice", "Ukraine", "Siberia") is None
    new, _ = resolve(
        state,
        (orders(state, place=[("Ukraine", 3)], fortify=Fortify("Ukraine", "Siberia", ALL)),),
        RANDOMNESS,
    )
    assert new.armies("Siberia") == 9
    alone = replace(state, options=replace(chained, team_fortify=False))
    assert rules.can_fortify(alone, "alice", "Ukraine", "Siberia") == (
        "no chain of your territories leads from Ukraine to Siberia"
    )
    blocked = table({**owners, "Ural": "bob"}, chained)
    assert rules.can_fortify(blocked, "alice", "Ukraine", "Siberia") == (
        "no chain of your team's territories leads from Ukraine to Siberia"
    )


def test_unlimited_team_fortification_reaches_any_team_mates_territory() -> None:
    owners = {"Alaska": ("alice", 5), "Argentina": "carol"}
    state = table(owners, Options(teams=TEAMS, team_fortify=True, fortify=FortifyMode.UNLIMITED))
    assert rules.can_fortify(state, "alice", "Alaska", "Argentina") is None


# --- missions and round limits for teams --------------------------------------------------------


def test_a_destroy_mission_aimed_at_a_team_mate_is_played_as_24_territories() -> None:
    state = table({"Ukraine": "alice"}, Options(teams=TEAMS, missions=True))
    seat = replace(state.player("alice"), mission="destroy:carol")
    assert missions.current(seat, state.mates("alice")) == missions.Mission.parse("territories:24")
    assert missions.current(seat) == missions.Mission.parse("destroy:carol")  # (no teams)
    assert not missions.falls_back(seat, "carol", state.mates("alice"))
    against = replace(seat, mission="destroy:bob")
    assert missions.falls_back(against, "bob", state.mates("alice"))


def test_a_mission_done_wins_the_game_for_the_whole_team() -> None:
    # alice's mission: 24 territories; she holds 23 and takes Ural.
    held = {t: ("alice", 1) for t in BOARD.names[:23]}
    owners = {**held, "Ukraine": ("alice", 30), "Ural": "bob"}
    state = table(owners, Options(teams=TEAMS, missions=True))
    players = tuple(
        replace(p, mission="territories:24" if p.name == "alice" else "territories:18,2")
        for p in state.players
    )
    state = replace(state, players=players)
    assert len(state.owned("alice")) == 23
    new, events = resolve(state, (orders(state, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert any(isinstance(e, Conquered) for e in events)
    assert any(isinstance(e, MissionCompleted) and e.player == "alice" for e in events)
    assert events[-1] == Won("alice", ("alice", "carol")) and new.won_by == "alice + carol"


def test_at_the_round_limit_the_team_with_the_most_territories_together_wins() -> None:
    # bob alone holds the most (16), but alice and carol hold 22 together against 20.
    names = ["alice"] * 11 + ["carol"] * 11 + ["bob"] * 16 + ["dave"] * 4
    owners = {t: (n, 2) for t, n in zip(BOARD.names, names, strict=True)}
    options = Options(teams=TEAMS, rounds=3, fortify=FortifyMode.NONE)
    state = make_state(owners, players=SEATS, options=options, current=3)
    state = replace(state, round=3, first_seat=0)  # dave plays last in each round
    new, events = resolve(state, (orders(state, place=[(state.owned("dave")[0], 3)]),), RANDOMNESS)
    over = [e for e in events if isinstance(e, RoundsOver)]
    assert over == [RoundsOver(3, "alice", 22, 44, ("alice", "carol"))]
    assert events[-1] == Won("alice", ("alice", "carol")) and new.won_by == "alice + carol"


# --- what the autopilot does in a team game -------------------------------------------------------


def test_the_autopilot_guards_borders_with_the_other_team_not_with_team_mates() -> None:
    # Ukraine borders carol only; Ural borders bob's Siberia.
    owners = {
        "Ukraine": "alice",
        "Ural": "alice",
        "Scandinavia": "carol",
        "Northern Europe": "carol",
        "Southern Europe": "carol",
        "Middle East": "carol",
        "Afghanistan": "carol",
        "Siberia": "bob",
        "China": "carol",
    }
    state = table(owners)
    assert borders(state, "alice") == ("Ural",)
    alone = replace(state, options=Options())
    assert borders(alone, "alice") == ("Ukraine", "Ural")


# --- views: what a team-mate may see --------------------------------------------------------------


def hands_shown(view: dict[str, object]) -> set[str]:
    return {p["name"] for p in view["players"] if "hand" in p}  # type: ignore[attr-defined, index]


def test_a_view_shows_team_mates_hands_only_when_the_game_says_so() -> None:
    hands = {"alice": ["Ural"], "bob": ["Siam"], "carol": ["Peru"], "dave": ["Egypt"]}
    for cards, shown in ((False, {"alice"}), (True, {"alice", "carol"})):
        options = Options(teams=TEAMS, team_cards=cards)
        state = table({"Ukraine": "alice", "Ural": "bob", "Peru": "carol"}, options, hands=hands)
        assert hands_shown(game_view(state, "alice")) == shown
        assert hands_shown(game_view(state, "bob")) == ({"bob", "dave"} if cards else {"bob"})
        assert hands_shown(game_view(state)) == set(SEATS)  # the moderator's


def test_a_team_mates_mission_stays_secret() -> None:
    state = table(
        {"Ukraine": "alice", "Ural": "bob", "Peru": "carol"},
        Options(teams=TEAMS, missions=True, team_cards=True),
    )
    players = tuple(replace(p, mission="territories:24") for p in state.players)
    state = replace(state, players=players)
    view = game_view(state, "alice")
    assert [p["name"] for p in view["players"] if "mission" in p] == ["alice"]


def test_a_players_view_carries_the_teams_so_the_kit_checks_as_pbem_does() -> None:
    state = table({"Ukraine": ("alice", 20), "Ural": "carol", "Siam": "bob"}, TEAM_FORTIFY)
    view = json.loads(json.dumps(game_view(state, "alice")))
    again = state_from_view(view, BOARD)
    assert again.options.teams == TEAMS and again.options.team_fortify
    o = orders(again, place=[("Ukraine", 3)], attack=[Attack("Ukraine", "Ural")])
    assert problems(again, o) == ["cannot attack 'Ural': carol, your team-mate, holds it"]
    view["options"]["teams"] = [["alice", "carol"], ["bob", "erin"]]
    with pytest.raises(ViewError, match="teams"):
        state_from_view(view, BOARD)


# --- the game from the command line: teams made, told, won ---------------------------------------


def new_team_game(tmp_path: Path, *extra: str) -> tuple[Path, object]:
    game = tmp_path / "league"
    result = CliRunner().invoke(
        main,
        [
            "new",
            str(game),
            "--players",
            "ann,ben,cy,dee",
            "--teams",
            "ann+cy,ben+dee",
            *extra,
            "--seed",
            "22" * 32,
            "--now",
            "2027-03-01T12:00Z",
        ],
    )
    assert result.exit_code == 0, result.output
    return game, result


def test_pbem_new_makes_a_team_game_that_every_report_tells(tmp_path: Path) -> None:
    game, result = new_team_game(tmp_path, "--team-fortify")
    assert "Teams: ann + cy; ben + dee" in result.output  # type: ignore[attr-defined]
    state = read_game(game).state
    assert state.options.teams == (("ann", "cy"), ("ben", "dee"))
    assert state.options.team_fortify and not state.options.team_cards
    order = [p.name for p in state.players]
    assert all(
        state.team(a) != state.team(b) for a, b in zip(order, order[1:] + order[:1], strict=True)
    )
    write_skeletons(game)
    processor.resolve_game(game)
    folder = sorted((game / "reports").iterdir())[-1]
    told = (
        "This game's rules: teams [1] ann + cy; [2] ben + dee: team-mates never attack each "
        "other and win together; you may fortify into and through your team-mates' territories."
    )
    for name in ("ann", "ben", "cy", "dee", "_moderator"):
        text = " ".join((folder / f"{name}.txt").read_text().split())
        assert told in text, name
        assert told in " ".join(html.unescape((folder / f"{name}.html").read_text()).split())
    ann = " ".join((folder / "ann.txt").read_text().split())
    assert "Your team: ann + cy" in ann and "cy holds 0 cards." in ann
    assert "(* = yours, + = your team-mates')" in ann and "ann [1]" in ann and "ben [2]" in ann
    board = (folder / "ann.txt").read_text()
    cy_land = state.owned("cy")[0]
    assert any(line.startswith(f"  + {cy_land}") for line in board.splitlines())
    audit = CliRunner().invoke(main, ["audit", str(game)])
    assert audit.exit_code == 0, audit.output
    shown = CliRunner().invoke(main, ["show", str(game)])
    assert "rules: teams [1] ann + cy; [2] ben + dee" in shown.output


def test_team_cards_visible_shows_each_team_mates_hand_in_the_report(tmp_path: Path) -> None:
    game, _ = new_team_game(tmp_path, "--team-cards-visible")
    state = read_game(game).state
    hands = {"ann": ("Ural", "Siam"), "cy": ("Peru",), "ben": ("Egypt",), "dee": ()}
    players = tuple(replace(p, hand=hands[p.name]) for p in state.players)
    deck = tuple(c for c in state.deck if c not in {"Ural", "Siam", "Peru", "Egypt"})
    force_state(game, replace(state, players=players, deck=deck))
    write_skeletons(game)
    processor.resolve_game(game)
    folder = sorted((game / "reports").iterdir())[-1]
    ann = " ".join((folder / "ann.txt").read_text().split())
    cy = " ".join((folder / "cy.txt").read_text().split())
    ben = " ".join((folder / "ben.txt").read_text().split())
    assert "Hand of cy: Peru." in ann and "Hand of ann: Ural, Siam." in cy
    assert "Hand of dee: no cards." in ben and "Hand of ben" not in ann
    assert "Egypt" not in " ".join((folder / "ann.view.json").read_text().split("territories")[0])
    view = json.loads((folder / "ann.view.json").read_text())
    assert hands_shown(view) == {"ann", "cy"}


def test_a_team_game_won_is_told_to_each_player_as_their_teams(tmp_path: Path) -> None:
    game, _ = new_team_game(tmp_path)
    state = read_game(game).state
    while state.phase is not Phase.PLAY:
        write_skeletons(game)
        processor.resolve_game(game)
        state = read_game(game).state
    me = state.current_player.name
    foe = next(p.name for p in state.players if p.name not in state.team(me))
    other = next(n for n in ("ben", "dee", "ann", "cy") if n not in state.team(me) and n != foe)
    mate = state.mates(me)[0]
    src, dst = "Ukraine", "Ural"
    owners = {t: (mate, 1) for t in BOARD.names}
    owners[src], owners[dst] = (me, 30), (foe, 1)
    territories = {
        t: replace(state.territories[t], owner=o, armies=a) for t, (o, a) in owners.items()
    }
    players = tuple(replace(p, alive=p.name != other, hand=()) for p in state.players)
    force_state(game, replace(state, territories=territories, players=players, deck=BOARD.cards()))
    (game / "orders" / f"{me}.toml").write_text(
        f'game = "{state.game}"\nturn = {state.turn}\nplayer = "{me}"\n'
        f'secret = "{read_game(game).registration(me).secret}"\n'  # type: ignore[union-attr]
        f'[[place]]\nterritory = "{src}"\narmies = "rest"\n'
        f'[[attack]]\nfrom = "{src}"\nto = "{dst}"\n'
    )
    processor.resolve_game(game)
    over = read_game(game).state
    assert over.phase is Phase.OVER and over.won_by == f"{me} + {mate}"
    folder = sorted((game / "reports").iterdir())[-1]
    for name in (me, mate):
        text = " ".join((folder / f"{name}.txt").read_text().split())
        assert f"The game is over: your team, {me} + {mate}, has won. Congratulations!" in text
    for name in (foe, other, "_moderator"):
        text = " ".join((folder / f"{name}.txt").read_text().split())
        assert f"The game is over: the team {me} + {mate} has won." in text
    assert f"The team {me} + {mate} has won the game!" in " ".join(
        (folder / f"{foe}.txt").read_text().split()
    )
    view = json.loads((folder / f"{foe}.view.json").read_text())
    assert report_subject(view, foe, "turn 9") == f"game over: {me} + {mate} won together"
    page = html.unescape((folder / f"{foe}.html").read_text())
    assert f"{me} + {mate} won together in turn {state.turn}." in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "a,b,c,d", "--team-fortify"], "--team-fortify and --team-cards-visible"),
        (["--players", "a,b,c", "--teams", "2x2"], "2 teams of 2 make 4 players, and 3"),
        (["--players", "a,b,c,d", "--teams", "a+b,c+x"], "'x' is in a team but not among"),
        (["--players", "a,b,c,d", "--teams", "a+b+c+d"], "two or more teams"),
    ],
)
def test_a_bad_team_game_is_refused_and_nothing_is_made(
    tmp_path: Path, args: list[str], message: str
) -> None:
    game = tmp_path / "nope"
    result = CliRunner().invoke(main, ["new", str(game), *args, "--seed", "33" * 32])
    assert result.exit_code != 0 and message in result.output, result.output
    assert "Traceback" not in result.output
    assert not (game / "game.toml").exists()


# --- privacy over whole games ----------------------------------------------------------------


@pytest.mark.parametrize("visible", [False, True])
def test_over_a_whole_team_game_a_player_sees_team_mates_hands_only_as_the_game_says(
    tmp_path: Path, visible: bool
) -> None:
    """Bots play a team game of missions to its end; after every resolution each player's view
    holds their own hand and, only when the game shows team cards, their team-mates' (exactly
    the hands the team-mates hold then); never another team's hand; no other player's mission
    until the game is over; and the text report names a hand only of a team-mate."""
    import random

    directory = tmp_path / "secret"
    names = ["ann", "ben", "cy", "dee"]
    options = Options(
        teams=(("ann", "cy"), ("ben", "dee")), team_cards=visible, missions=True, team_fortify=True
    )
    processor.new_game(directory, [(n, "") for n in names], options, seed=bytes(range(32)))
    rng = random.Random(11)
    for _ in range(300):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            break
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
    final = read_game(directory).state
    assert final.phase is Phase.OVER
    mates = {"ann": {"cy"}, "cy": {"ann"}, "ben": {"dee"}, "dee": {"ben"}}
    folders = sorted((directory / "reports").iterdir())
    assert len(folders) > 10
    shown_mates = 0
    for folder in folders:
        views = {n: json.loads((folder / f"{n}.view.json").read_text()) for n in names}
        own = {n: next(p for p in views[n]["players"] if p["name"] == n) for n in names}
        over = views["ann"]["phase"] == "over"
        for name in names:
            view = views[name]
            allowed = {name} | (mates[name] if visible else set())
            assert hands_shown(view) == allowed, (folder.name, name)
            for p in view["players"]:
                if "hand" in p and p["name"] != name:
                    assert p["hand"] == own[p["name"]]["hand"]  # the team-mate's own, then
                    shown_mates += bool(p["hand"])
                if "mission" in p and not over:
                    assert p["name"] == name, (folder.name, name, p["name"])
            text = " ".join((folder / f"{name}.txt").read_text().split())
            for other in names:
                if other in mates[name] and visible:
                    continue
                assert f"Hand of {other}:" not in text, (folder.name, name, other)
            if not over:
                assert "Secret missions, revealed" not in text
    assert shown_mates if visible else not shown_mates
    audit = CliRunner().invoke(main, ["audit", str(directory)])
    assert audit.exit_code == 0, audit.output


# --- found in review: the draft, the winner of a drop, the aids, the stats, a bad history -------


def test_a_draft_turn_whose_drops_leave_one_team_ends_the_game() -> None:
    from pbem.core.engine import new_game
    from pbem.core.state import SetupMode

    options = Options(teams=TEAMS, setup=SetupMode.DRAFT, drop_after=1)
    state, _ = new_game("g", SEATS, BOARD, options, RANDOMNESS)
    assert state.phase is Phase.DRAFT
    sent = [autopilot_orders(state, n, "x") for n in state.awaiting()]
    new, events = resolve(state, sent, RANDOMNESS, autopilot={"alice", "carol"})
    assert sorted(e.player for e in events if isinstance(e, Dropped)) == ["alice", "carol"]
    assert new.phase is Phase.OVER and new.won_by == "bob + dave"


def test_a_drop_that_ends_the_game_names_the_winning_teams_first_player_in_the_order_of_play() -> (
    None
):
    # dave sits first (seat 0), bob third: bob is named first in the team, dave plays first.
    options = replace(TEAM_GAME, drop_after=1)
    seats = ["dave", "alice", "bob", "carol"]
    state = make_state({"Ural": "bob", "Siam": "dave"}, default="alice", players=seats)
    state = replace(state, options=options, current=1)
    state = replace(
        state, players=tuple(replace(p, alive=p.name != "carol") for p in state.players)
    )
    new, events = resolve(
        state, (autopilot_orders(state, "alice", "x"),), RANDOMNESS, autopilot={"alice"}
    )
    assert events[-1] == Won("dave", ("bob", "dave")) and new.winner == "dave"


def test_the_reports_aids_and_ready_order_file_never_aim_at_a_team_mate() -> None:
    from pbem.present.aids import decision_aids
    from pbem.present.skeleton import order_skeleton

    # alice's Ukraine (30) borders carol's weak territories and bob's strong Ural.
    owners = {
        "Ukraine": ("alice", 30),
        "Scandinavia": ("carol", 1),
        "Northern Europe": ("carol", 1),
        "Southern Europe": ("carol", 1),
        "Middle East": ("carol", 1),
        "Afghanistan": ("carol", 1),
        "Ural": ("bob", 9),
    }
    state = table(owners)
    aids = decision_aids(state, "alice")
    assert {a.target for a in aids["attacks"]} == {"Ural"}  # type: ignore[attr-defined]
    ukraine = next(b for b in aids["borders"] if b.territory == "Ukraine")  # type: ignore[attr-defined]
    assert ukraine.threat == 9
    skeleton = order_skeleton(state, "alice", "x")
    assert '# to = "Ural"' in skeleton
    alone = replace(state, options=Options())
    assert len(decision_aids(alone, "alice")["attacks"]) > 1  # type: ignore[arg-type]


def test_the_story_of_a_team_game_names_its_winner_and_the_team() -> None:
    from pbem.present.stats import game_stats, stats_text

    story = game_stats([(9, 7, (Won("dave", ("bob", "dave")),))], SEATS)
    assert story["winner"] == "dave" and story["winners"] == ["bob", "dave"]
    assert stats_text(story)[0] == "bob + dave won together in turn 7."
    alone = game_stats([(9, 7, (Won("dave"),))], SEATS)
    assert "winners" not in alone and stats_text(alone)[0] == "dave won in turn 7."


def test_a_history_with_teams_made_up_is_refused_by_the_audit_without_a_traceback(
    tmp_path: Path,
) -> None:
    game, _ = new_team_game(tmp_path)
    bad = [["ann", "zz"], ["ben", "cy", "dee"]]
    for path, section in ((game / "game.toml", "options"), (game / "history/0000.toml", "setup")):
        data = tomllib.loads(path.read_text())
        assert data[section]["teams"] == [["ann", "cy"], ["ben", "dee"]]
        data[section]["teams"] = bad
        path.write_text(tomli_w.dumps(data, multiline_strings=True))
    audit = CliRunner().invoke(main, ["audit", str(game)])
    assert audit.exit_code != 0 and "Traceback" not in audit.output
    assert "restore the game from a backup" in audit.output, audit.output


def test_a_team_shape_of_a_thousand_digits_is_a_clear_refusal() -> None:
    with pytest.raises(ValueError, match="not among the players"):
        parse_teams("9" * 5000 + "x2", ["a", "b", "c", "d"])
