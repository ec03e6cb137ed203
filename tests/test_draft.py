"""The draft setup: ranked lists, dealt round by round in seat order, the fill-in rule, the
order file's checks, the autopilot's list, and a whole game from the draft to its end."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from bots import SECRET, orders_for
from conftest import SEED
from helpers import BOARD, make_state, order_text, randomness
from test_deadlines import ROME, SETUP_DUE, new, run

from pbem.core import draft, validation
from pbem.core.autopilot import autopilot_orders
from pbem.core.engine import new_game, resolve
from pbem.core.events import Drafted, MissedTurn, Placed
from pbem.core.order_parsing import parse_orders
from pbem.core.orders import REST, Orders
from pbem.core.state import NEUTRAL, Options, Phase, SetupMode, TwoPlayer
from pbem.errors import OrderError
from pbem.game import processor
from pbem.present import report
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

DRAFT = Options(setup=SetupMode.DRAFT)
NAMES = ["alice", "bob", "carol"]
EUROPE = BOARD.continents["Europe"].territories


def drafting(names: list[str] = NAMES, options: Options = DRAFT):  # type: ignore[no-untyped-def]
    state, _ = new_game("test-game", names, BOARD, options, randomness())
    return state


def draft_orders(state, player: str, *ranked: str) -> Orders:  # type: ignore[no-untyped-def]
    return Orders(state.game, state.turn, player, SECRET, draft=tuple(ranked))


def test_a_drafted_game_starts_with_every_territory_unclaimed() -> None:
    state = drafting()
    assert state.phase is Phase.DRAFT and state.turn == 0
    assert state.awaiting() == tuple(p.name for p in state.players)
    assert all((h.owner, h.armies) == (NEUTRAL, 0) for h in state.territories.values())
    assert all(p.to_place == 35 for p in state.players)
    assert not state.has_neutral()


def test_ties_go_to_the_earlier_seat_and_the_later_takes_their_next_choice() -> None:
    picks = draft.run(
        BOARD,
        ["bob", "alice"],
        {"bob": ["Peru", "Brazil", REST], "alice": ["Peru", "Iceland", "Brazil", REST]},
    )
    assert picks[:4] == [
        draft.Pick("bob", "Peru", 1, "list"),
        draft.Pick("alice", "Iceland", 1, "list"),
        draft.Pick("bob", "Brazil", 2, "list"),
        # alice's next free choice is gone: "rest" picks for her, in the continent she holds
        # most of (Europe, for Iceland), first in board order.
        draft.Pick("alice", next(t for t in EUROPE if t != "Iceland"), 2, "rest"),
    ]


def test_the_fill_in_rule_takes_the_continent_held_most_then_board_order() -> None:
    picks = draft.run(BOARD, ["alice", "bob"], {"alice": [REST], "bob": ["Siam", REST]})
    assert picks[0] == draft.Pick("alice", BOARD.names[0], 1, "rest")  # nothing held yet
    assert picks[1] == draft.Pick("bob", "Siam", 1, "list")
    bob = [p.territory for p in picks if p.player == "bob"]
    assert bob[1] == next(t for t in BOARD.continents["Asia"].territories if t != "Siam")
    assert Counter(p.player for p in picks) == {"alice": 21, "bob": 21}
    assert sorted(p.territory for p in picks) == sorted(BOARD.names)


def test_the_draft_deals_round_by_round_and_then_the_setup_turn_places_the_rest() -> None:
    state = drafting()
    first, second, third = (p.name for p in state.players)
    lists = [
        draft_orders(state, first, "Peru", "Brazil", REST),
        draft_orders(state, second, "Peru", "Alaska", REST),
        draft_orders(state, third, *reversed(BOARD.names)),
    ]
    for o in lists:
        assert validation.validate(state, o) == []
    new, events = resolve(state, lists, randomness())
    picks = [e for e in events if isinstance(e, Drafted)]
    assert picks[:3] == [
        Drafted(first, "Peru", 1, "list"),
        Drafted(second, "Alaska", 1, "list"),
        Drafted(third, BOARD.names[-1], 1, "list"),
    ]
    assert len(picks) == 42 and {e.round for e in picks} == set(range(1, 15))
    assert new.phase is Phase.SETUP and new.turn == 0
    for p in new.players:
        assert len(new.owned(p.name)) == 14 and p.to_place == 35 - 14
    assert all(h.armies == 1 for h in new.territories.values())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'draft = ["Peru", "Brazil", "peru", "rest"]\n',
            "Peru is in your draft list twice (entries 1 and 3): list each territory once",
        ),
        (
            'draft = ["Peru", "Brazill", "rest"]\n',
            "draft entry 2: unknown territory 'Brazill'; did you mean 'Brazil'?",
        ),
        (
            'draft = ["rest", "Peru"]\n',
            '"rest" is entry 1 of your draft list, not the last: it stands for every '
            "territory not listed before it, so end the list with it",
        ),
        ('draft = "Peru"\n', "draft must be a list of territories, best first"),
        ("draft = [3]\n", "draft entry 1 must be a territory name in quotes"),
    ],
)
def test_a_bad_draft_list_is_refused_with_what_to_do(body: str, message: str) -> None:
    with pytest.raises(OrderError) as caught:
        parse_orders(order_text(body, turn=0), BOARD)
    assert any(message in p.message for p in caught.value.problems), caught.value.problems
    assert all(p.line == 5 for p in caught.value.problems)


def test_a_short_list_without_rest_is_refused() -> None:
    state = drafting()
    orders = draft_orders(state, "alice", "Peru", "Brazil")
    [problem] = validation.validate(state, orders)
    assert problem.message.startswith(
        "your draft list names 2 of the 42 territories: add the other 40 (Alaska, "
    )
    assert problem.message.endswith('or end the list with "rest"')


@pytest.mark.parametrize(
    ("left_out", "message"),
    [
        (
            5,
            "your draft list names 37 of the 42 territories: add the other 5 (Alaska, Northwest "
            'Territory, Greenland, Alberta, Ontario) or end the list with "rest"',
        ),
        (
            6,
            "your draft list names 36 of the 42 territories: add the other 6 (Alaska, Northwest "
            'Territory, Greenland, Alberta, Ontario, ...) or end the list with "rest"',
        ),
    ],
)
def test_a_short_list_shows_five_of_the_territories_it_leaves_out(
    left_out: int, message: str
) -> None:
    state = drafting()
    orders = draft_orders(state, "alice", *BOARD.names[left_out:])
    assert [p.message for p in validation.validate(state, orders)] == [message]


def test_the_draft_turn_takes_only_a_list_and_the_setup_turn_no_list() -> None:
    state = drafting()
    placing = Orders(state.game, 0, "alice", SECRET, place=())
    assert "the draft turn needs your ranked list" in validation.validate(state, placing)[0].message
    after = make_state({"Alaska": "alice"}, phase=Phase.SETUP, turn=0, to_place={"alice": 1})
    late = Orders(after.game, 0, "alice", SECRET, draft=(REST,))
    assert any("the draft is over" in p.message for p in validation.validate(after, late))


def test_a_missing_list_gets_the_fill_in_rule_through_the_autopilot() -> None:
    state = drafting()
    silent = state.players[0].name
    auto = autopilot_orders(state, silent, "x")
    assert auto.draft == (REST,) and validation.validate(state, auto) == []
    others = [draft_orders(state, p.name, "Peru", REST) for p in state.players[1:]]
    new, events = resolve(state, [auto, *others], randomness(), autopilot={silent})
    assert MissedTurn(silent, 0, 1) in events
    assert [e for e in events if isinstance(e, Drafted)][0] == Drafted(
        silent, BOARD.names[0], 1, "rest"
    )
    assert new.player(silent).missed == 1


def test_a_two_player_draft_gives_the_neutral_its_share_and_random_armies() -> None:
    state = drafting(["alice", "bob"], Options(setup=SetupMode.DRAFT, two_player=TwoPlayer.NEUTRAL))
    lists = [draft_orders(state, p.name, REST) for p in state.players]
    new, events = resolve(state, lists, randomness())
    assert Counter(h.owner for h in new.territories.values()) == {
        "alice": 14,
        "bob": 14,
        NEUTRAL: 14,
    }
    assert new.total_armies(NEUTRAL) == 40
    assert {e.why for e in events if isinstance(e, Placed)} == {"random"}


def test_a_whole_game_from_the_draft_to_its_end(tmp_path: Path) -> None:
    directory = tmp_path / "game"
    processor.new_game(
        directory,
        processor.parse_player_list(NAMES),
        Options(setup=SetupMode.DRAFT, missions=True),
        seed=SEED,
        name="test-game",
    )
    skeleton = (report_dir(directory, 0) / "alice.orders.toml").read_text()
    assert 'draft = ["rest"]' in skeleton and '#   "Alaska",' in skeleton
    rng = random.Random(7)
    phases = []
    for _ in range(400):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            break
        phases.append(game.state.phase)
        for name in game.state.awaiting():
            reg = game.registration(name)
            assert reg is not None
            orders = replace(orders_for(game.state, name, rng), secret=reg.secret)
            (directory / "orders" / f"{name}.toml").write_text(orders.to_toml())
        processor.resolve_game(directory)
    final = read_game(directory).state
    assert final.phase is Phase.OVER and final.winner
    assert phases[:3] == [Phase.DRAFT, Phase.SETUP, Phase.PLAY]
    assert processor.audit_game(directory).resolutions == len(phases) + 1
    text = report.render(read_game(directory), len(phases), (), "alice", "txt")
    assert "Secret missions, revealed" in text


def test_reports_and_show_call_the_land_of_the_draft_unclaimed(tmp_path: Path) -> None:
    directory = tmp_path / "game"
    processor.new_game(
        directory, processor.parse_player_list(NAMES), DRAFT, seed=SEED, name="test-game"
    )
    game = read_game(directory)
    text = report.render(game, 0, (), "alice", "txt")
    assert "Draft turn: every player sends a ranked list of territories" in text
    assert re.search(r"^    Alaska +unclaimed +0$", text, re.M) and "held by neutral" not in text
    table = processor.show_table(game.state, report.game_view(game.state, None))
    assert "  Alaska                   unclaimed       0" in table and "neutral" not in table


def test_check_tells_what_a_draft_list_asks_for_with_the_game_or_the_view(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "game"
    processor.new_game(
        directory, processor.parse_player_list(NAMES), DRAFT, seed=SEED, name="test-game"
    )
    text = (report_dir(directory, 0) / "alice.orders.toml").read_text()
    path = tmp_path / "alice.toml"
    path.write_text(text.replace('draft = ["rest"]', 'draft = ["Peru", "Brazil", "rest"]'))
    _, [(submission, lines)] = processor.check_files(directory, [path])
    assert submission.accepted
    assert lines == ["draft: 2 territories ranked (Peru, Brazil), then the fill-in rule"]
    view = report_dir(directory, 0) / "alice.view.json"
    [(own, own_lines)] = processor.check_with_view(view, [path])
    assert own.accepted and own_lines == lines


def test_a_list_missing_at_the_deadline_gets_the_fill_in_rule(tmp_path: Path) -> None:
    directory = new(tmp_path / "g", *ROME, "--setup", "draft", "--missions")
    for name in ("alice", "bob"):
        text = (report_dir(directory, 0) / f"{name}.orders.toml").read_text()
        (directory / "orders" / f"{name}.toml").write_text(
            text.replace('draft = ["rest"]', 'draft = ["Peru", "rest"]')
        )
    run("resolve", directory, "--now", SETUP_DUE)
    carol = next(o for o in read_history(directory, 1).orders if o.player == "carol")
    assert carol.autopilot and 'draft = [\n  "rest",\n]' in carol.text
    picks = [e for e in read_history(directory, 1).events if isinstance(e, Drafted)]
    assert {e.by for e in picks if e.player == "carol"} == {"rest"}
    game = read_game(directory)
    assert game.state.phase is Phase.SETUP and game.state.player("carol").missed == 1
    text = (report_dir(directory, 1) / "carol.txt").read_text()
    assert "No orders from carol by the deadline" in text
    assert "(fill-in rule)" in text
    assert processor.audit_game(directory).resolutions == 2
