"""Reports: the ready order file a player is sent, and who is sent one."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import new_game, write_skeletons
from helpers import SECRET, make_state

from pbem.core import rules, validation
from pbem.core.board import WILD
from pbem.core.events import (
    AttackStopped,
    Conquered,
    Dealt,
    DrewCard,
    Eliminated,
    Event,
    Fortified,
    Placed,
    Reinforced,
    Rolled,
    RolledForFirst,
    SeatsDecided,
    Won,
)
from pbem.core.order_parsing import parse_orders
from pbem.core.state import GameState, Phase
from pbem.game import processor
from pbem.present import context, report, skeleton, story, svgmap
from pbem.present.plan import forecast_with_warnings
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game
from pbem.records.store import Game

FIVE = ("Alaska", "Peru", "Ural", "Siam", "Egypt")


def _ready(state: GameState, player: str = "alice") -> str:
    return report.order_skeleton(state, player, SECRET)


def _accepted(state: GameState, text: str) -> list[str]:
    return [p.message for p in validation.validate(state, parse_orders(text, state.board))]


def test_the_ready_order_file_of_a_player_with_exactly_five_cards_trades() -> None:
    state = make_state({"Ukraine": ("alice", 5), "Siam": "alice"}, hands={"alice": FIVE})
    text = _ready(state)
    assert 'trade = "best"' in text.splitlines()[4]
    assert "# trade" not in text
    assert _accepted(state, text) == []
    without = text.replace(text.splitlines()[4] + "\n", "")
    assert _accepted(state, without) == []  # pbem makes the trade, with a warning
    assert "pbem trades" in forecast_with_warnings(state, parse_orders(without, state.board))[-1]


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


def test_a_view_file_built_alone_is_the_one_sent_with_the_report(game: Game) -> None:
    r = game.state.resolution - 1
    events = read_history(game.path, r).events
    for p in game.state.players:
        sent = (report_dir(game.path, r) / f"{p.name}.view.json").read_text(encoding="utf-8")
        assert report.view_file(game, r, events, p.name) == sent


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
    names = set(report.render_reports(dead, 9, [Eliminated(out, winner, 0)]))
    assert f"{out}.orders.toml" not in names
    assert {f"{out}.txt", f"{out}.html", f"{out}.view.json"} <= names
    for p in state.players:
        if p.name != out:  # only the players awaited are asked for orders
            assert (f"{p.name}.orders.toml" in names) == (p.name in dead.state.awaiting())
    assert {"_moderator.txt", "_moderator.html"} <= names


def test_no_order_file_is_written_when_the_game_is_over(game: Game) -> None:
    state = game.state
    winner = state.current_player.name
    over = game
    for p in state.players:
        if p.name != winner:
            over = _eliminate(over, p.name, winner)
    over = replace(over, state=replace(over.state, phase=Phase.OVER, winner=winner))
    files = report.render_reports(over, 9, [Won(winner)])
    assert not [name for name in files if name.endswith(".orders.toml")]
    assert "won" in files[f"{winner}.txt"]


# --- every event as one sentence ---------------------------------------------------------------


def test_narrate_tells_each_event_in_one_sentence() -> None:
    cases: list[tuple[Event, str]] = [
        (RolledForFirst("alice", 5), "alice rolled 5 for first player."),
        (SeatsDecided(("bob", "alice")), "Order of play: bob, alice."),
        (Dealt("alice", ("Peru", "Siam")), "alice was dealt 2 territories, one army each."),
        (
            Reinforced("alice", 3, 9, 3, (), 0),
            "Turn 3: alice receives 3 armies (3 for 9 territories).",
        ),
        (
            Reinforced("alice", 3, 12, 4, ("Australia", "South America"), 4),
            "Turn 3: alice receives 8 armies (4 for 12 territories, 4 for holding Australia "
            "and South America).",
        ),
        (Placed("alice", "Peru", 2, "card"), "alice placed 2 on Peru for its card."),
        (
            Placed("alice", "Peru", 6, "elimination"),
            "alice placed 6 on Peru from the forced trade.",
        ),
        (Placed("alice", "Peru", 4), "alice placed 4 on Peru."),
        (
            Rolled("alice", "Peru", "Brazil", "bob", (6, 1), (3,), 0, 1),
            "Peru → Brazil: 6 1 against 3; alice loses 0, bob loses 1.",
        ),
        (
            Conquered("alice", "Peru", "Brazil", "bob", 2, "asked to move 1, raised to 2"),
            "alice took Brazil from bob, moving in 2 from Peru (asked to move 1, raised to 2).",
        ),
        (
            Conquered("alice", "Peru", "Brazil", "bob", 2),
            "alice took Brazil from bob, moving in 2 from Peru.",
        ),
        (
            AttackStopped("alice", "Peru", "Brazil", "Peru is down to 2"),
            "alice stopped attacking Brazil: Peru is down to 2.",
        ),
        (
            Eliminated("bob", "alice", 1),
            "bob is out of the game, eliminated by alice, who takes 1 card.",
        ),
        (
            Eliminated("bob", "alice", 0),
            "bob is out of the game, eliminated by alice, who takes 0 cards.",
        ),
        (
            Fortified("alice", "Peru", "Brazil", 9, "asked to move 12, cut to 9"),
            "alice moved 9 from Peru to Brazil (asked to move 12, cut to 9).",
        ),
    ]
    for event, sentence in cases:
        assert report.narrate(event, "carol") == sentence


def test_placements_are_grouped_by_player_and_reason() -> None:
    events: list[Event] = [
        Placed("alice", "Peru", 3, "setup"),
        Placed("alice", "Siam", 2, "setup"),
        Placed("neutral", "Ural", 1, "random"),
        Placed("neutral", "Egypt", 2, "random"),
        Placed("bob", "Peru", 2, "card"),
        Placed("bob", "Siam", 2, "card"),
        Placed("bob", "Ural", 5, "elimination"),
        Placed("bob", "Japan", 1, "elimination"),
        Placed("carol", "Japan", 4),
    ]
    assert [i.text for i in report.tell(events, None, {})] == [
        "alice placed 5 setup armies: 3 on Peru and 2 on Siam.",
        "neutral's other 3 armies were placed at random: 1 on Ural and 2 on Egypt.",
        "bob placed 2 on Peru and Siam for its card.",
        "bob placed 6 from the forced trade: 5 on Ural and 1 on Japan.",
        "carol placed 4 on Japan.",
    ]
    assert [i.kind for i in report.tell(events, None, {})] == ["place"] * 5


def test_the_first_player_dice_are_told_round_by_round() -> None:
    events: list[Event] = [
        RolledForFirst("alice", 6),
        RolledForFirst("bob", 6),
        RolledForFirst("carol", 2),
        RolledForFirst("alice", 3),
        RolledForFirst("bob", 5),
        SeatsDecided(("bob", "carol", "alice")),
    ]
    items = report.tell(events, None, {})
    assert [(i.kind, i.text) for i in items] == [
        (
            "setup",
            "Dice for the first player: alice 6, bob 6, carol 2; a tie, so again: alice 3, bob 5.",
        ),
        ("setup", "Order of play: bob, carol, alice."),
    ]


def test_a_battle_then_another_from_the_same_territory_are_two_stories() -> None:
    events: list[Event] = [
        Rolled("alice", "Peru", "Brazil", "bob", (6,), (1,), 0, 1),
        Conquered("alice", "Peru", "Brazil", "bob", 1),
        Rolled("alice", "Peru", "Argentina", "bob", (1,), (6,), 1, 0),
        Rolled("alice", "Peru", "Argentina", "bob", (1,), (6,), 1, 0),
        AttackStopped("alice", "Peru", "Argentina", "Peru is down to 1"),
        DrewCard("alice", "Peru"),
    ]
    items = report.tell(events, "alice", {"Peru": 4, "Brazil": 1, "Argentina": 2})
    assert [i.kind for i in items] == ["battle", "battle", "card"]
    assert items[0].result == "alice took Brazil, moving in 1 (3 stay in Peru)."
    assert items[1].text == "alice attacked Argentina (bob) from Peru: 3 armies against 2."
    assert [(r.losses, r.source_left, r.target_left) for r in items[1].rolls] == [
        ("alice loses 1", 2, 2),
        ("alice loses 1", 1, 2),
    ]
    assert items[1].result == "alice stopped: Peru is down to 1; Argentina holds with 2."
    one = report.tell(events[:2], "alice", {"Peru": 2, "Brazil": 1})
    assert one[0].result == "alice took Brazil, moving in 1 (1 stays in Peru)."
    each = Rolled("alice", "Peru", "Brazil", "bob", (6, 1), (5, 2), 1, 1)
    assert report.tell([each], None, {"Peru": 5, "Brazil": 5})[0].rolls[0].losses == "each loses 1"


def test_working_back_and_forward_through_events_meet() -> None:
    state = make_state(
        {"Peru": ("alice", 5), "Brazil": ("alice", 3), "Venezuela": ("alice", 2)},
        default=("bob", 2),
    )
    events: list[Event] = [
        Placed("alice", "Venezuela", 3),
        Rolled("alice", "Peru", "Argentina", "bob", (6, 6), (1, 1), 0, 2),
        Conquered("alice", "Peru", "Argentina", "bob", 2),
        Fortified("alice", "Venezuela", "Brazil", 1),
    ]
    before = report.armies_before(state, events)
    assert {t: before[t] for t in ("Peru", "Brazil", "Venezuela", "Argentina")} == {
        "Peru": 7,
        "Brazil": 2,
        "Venezuela": 0,
        "Argentina": 2,
    }
    after = dict(before)
    for e in events:
        story._move(after, e)
    assert after == {t: h.armies for t, h in state.territories.items()}


# --- whose turn, for the report ----------------------------------------------------------------


def test_a_players_next_turn_counts_the_living_seats_between() -> None:
    state = make_state(
        {"Peru": "alice", "Siam": "bob", "Ural": "carol"},
        default="dave",
        players=("alice", "bob", "carol", "dave"),
        dead=("bob",),
        current=0,
        turn=10,
    )
    state = replace(
        state,
        territories={
            t: replace(h, owner="dave") if h.owner == "bob" else h
            for t, h in state.territories.items()
        },
    )
    assert [report.next_turn_of(state, p) for p in ("alice", "bob", "carol", "dave")] == [
        10,
        None,
        11,
        12,
    ]
    assert skeleton.players_before(state, "dave") == ["alice", "carol"]
    assert skeleton.players_before(state, "alice") == []
    setup = replace(state, phase=Phase.SETUP, turn=0)
    assert report.next_turn_of(setup, "carol") == 0
    assert report.next_turn_of(replace(state, phase=Phase.OVER), "alice") is None


# --- the dice check ----------------------------------------------------------------------------


def test_the_dice_check_reveals_the_hidden_key_only_at_the_end(game: Game) -> None:
    from pbem.core import dice

    section = report.dice_section(game, 3, [])
    assert section["key"] == game.key(3).hex()
    assert section["previous_key"] == game.key(2).hex()
    assert section["commitment"] == game.commitment
    assert "hidden_key" not in section and "first_player" not in section
    over = replace(game, state=replace(game.state, phase=Phase.OVER, winner="alice"))
    assert report.dice_section(over, 3, [])["hidden_key"] == dice.hidden_key(game.seed).hex()
    setup = report.dice_section(game, 0, [RolledForFirst("alice", 4)])
    assert setup["first_player"] == [{"player": "alice", "die": 4}]
    assert setup["previous_key"] == game.commitment
    command = context._check_command("ab12")
    assert "bytes.fromhex('ab12')" in command and command.startswith("python3 -c ")


# --- the map -----------------------------------------------------------------------------------


def _inside(point: tuple[int, int], hull: list[tuple[int, int]]) -> bool:
    """Whether a point is inside or on a counter-clockwise convex polygon."""
    for (x1, y1), (x2, y2) in zip(hull, hull[1:] + hull[:1], strict=True):
        if (x2 - x1) * (point[1] - y1) - (y2 - y1) * (point[0] - x1) < 0:
            return False
    return True


def test_each_continents_outline_holds_its_territories() -> None:
    board = make_state().board
    for continent in board.continents.values():
        points = [board.territories[t].position for t in continent.territories]
        hull = svgmap._hull(points)
        assert set(hull) <= set(points)
        assert all(_inside(p, hull) for p in points), continent.name
        if len(set(points)) > 2:
            assert len(hull) >= 3
    square = [(0, 0), (10, 0), (10, 10), (0, 10), (5, 5), (5, 0)]
    assert svgmap._hull(square) == [(0, 0), (10, 0), (10, 10), (0, 10)]
    assert svgmap._hull([(3, 3), (1, 1), (1, 1)]) == [(1, 1), (3, 3)]


def test_continent_names_stay_on_the_map_and_clear_of_territories() -> None:
    state = make_state()
    board = state.board
    shapes = report.map_shapes(state, None)
    for c in shapes["continents"]:
        half = len(c.label) * 3.8
        assert half <= c.label_x <= board.width - half, c.name
        assert 14 <= c.label_y <= board.height - 4, c.name
        for t in board.territories.values():
            x, y = t.position
            near_x = max(abs(x - c.label_x) - half, 0.0)
            assert (near_x**2 + (y - c.label_y + 4) ** 2) ** 0.5 >= svgmap.TERRITORY_RADIUS, (
                c.name,
                t.name,
            )
        assert c.padding == 2 * svgmap.CONTINENT_PADDING
        assert c.label == f"{c.name} +{board.continents[c.name].bonus}"
    tints = [c.tint for c in shapes["continents"]]
    assert tints == list(svgmap.CONTINENT_TINTS[: len(tints)])
    assert [c.name for c in shapes["continents"]] == list(board.continents)


SIDES = {
    "North America": "above",
    "South America": "below",
    "Europe": "above",
    "Africa": "below",
    "Asia": "above",
    "Australia": "above",
}
"""Where the classic map puts each continent's name: above its territories where that is clear,
else below (South America and Africa have other continents just above them)."""


def test_continent_names_sit_just_above_or_below_their_territories() -> None:
    state = make_state()
    board = state.board
    pad = svgmap.CONTINENT_PADDING
    for c in report.map_shapes(state, None)["continents"]:
        points = [board.territories[t].position for t in board.continents[c.name].territories]
        xs, ys = [x for x, _ in points], [y for _, y in points]
        above, below = min(ys) - pad + 2, max(ys) + pad + 26
        expected = above if SIDES[c.name] == "above" else below
        assert (c.label_x, c.label_y) == ((min(xs) + max(xs)) / 2, expected), c.name


def test_long_territory_names_are_split_in_two_balanced_lines() -> None:
    assert svgmap._label_lines("Peru") == ("Peru",)
    assert svgmap._label_lines("North Africa") == ("North Africa",)  # 12 characters
    assert svgmap._label_lines("Western United States") == ("Western", "United States")
    assert svgmap._label_lines("Eastern Australia") == ("Eastern", "Australia")
    assert svgmap._label_lines("Northwest Territory") == ("Northwest", "Territory")
    assert svgmap._label_lines("Kamchatkaaaaaaaa") == ("Kamchatkaaaaaaaa",)


def test_the_map_draws_every_border_and_colours_by_seat() -> None:
    state = make_state(
        {"Peru": "alice", "Siam": ("neutral", 3)}, default="bob", players=("alice", "bob")
    )
    shapes = report.map_shapes(state, "alice", ["Peru"])
    by_name = {t.name: t for t in shapes["territories"]}
    assert (by_name["Peru"].fill, by_name["Peru"].ink) == svgmap.PALETTE[0]
    assert (by_name["Ural"].fill, by_name["Ural"].ink) == svgmap.PALETTE[1]
    assert (by_name["Siam"].fill, by_name["Siam"].armies) == (svgmap.NEUTRAL_COLOUR[0], 3)
    assert by_name["Peru"].mine and by_name["Peru"].taken and not by_name["Ural"].mine
    peru = by_name["Peru"]
    assert (
        peru.label_y == peru.y + svgmap.TERRITORY_RADIUS + 11 and peru.r == svgmap.TERRITORY_RADIUS
    )
    kinds = {
        frozenset((a, b)): "border"
        if state.board.territories[a].continent == state.board.territories[b].continent
        else "sea"
        for a, b in state.board.borders()
    }
    lines = [ln for ln in shapes["lines"] if ln.kind != "wrap"]
    assert sorted(ln.kind for ln in lines) == sorted(
        k for pair, k in kinds.items() if pair != frozenset(("Alaska", "Kamchatka"))
    )
    assert not any(t.mine for t in report.map_shapes(state, None)["territories"])
    [left, right] = shapes["edge_labels"]
    assert (left.text, left.x, left.anchor) == ("← Kamchatka", 4, "start")
    assert (right.text, right.x, right.anchor) == ("Alaska →", state.board.width - 4, "end")
    wraps = [ln for ln in shapes["lines"] if ln.kind == "wrap"]
    assert wraps[0].y2 == wraps[1].y2
    alaska, kamchatka = (state.board.territories[t].position for t in ("Alaska", "Kamchatka"))
    assert min(alaska[1], kamchatka[1]) <= wraps[0].y2 <= max(alaska[1], kamchatka[1])
    assert left.y == wraps[0].y2 - 22
    (xl, yl), (xr, yr) = sorted((alaska, kamchatka))
    crossing = yl + (yr - yl) * xl / (xl - (xr - state.board.width))
    assert abs(wraps[0].y2 - crossing) <= 0.05
    assert {(ln.x1, ln.y1, ln.x2) for ln in wraps} == {(xl, yl, 0), (xr, yr, state.board.width)}


def test_player_colours_go_round_the_palette_by_seat() -> None:
    state = make_state(players=("a", "b", "c", "d", "e", "f"), default="a")
    colours = report.player_colours(state)
    assert [colours[p] for p in "abcdef"] == list(svgmap.PALETTE)
    assert colours["neutral"] == svgmap.NEUTRAL_COLOUR


# --- what every template is given --------------------------------------------------------------


def test_the_context_marks_held_continents_and_who_plays_next(game: Game) -> None:
    state = game.state
    me = state.current_player.name
    other = next(p.name for p in state.players if p.name != me)
    australia = state.board.continents["Australia"].territories
    europe = state.board.continents["Europe"].territories
    territories = dict(state.territories)
    for t in australia:
        territories[t] = replace(territories[t], owner=me)
    territories[europe[0]] = replace(territories[europe[0]], owner=me)
    territories[europe[1]] = replace(territories[europe[1]], owner=other)
    shown = replace(game, state=replace(state, territories=territories))
    colours = report.player_colours(shown.state)
    for viewer in (me, other, None):
        context = report.report_context(shown, 3, [], viewer)
        by_name = {c["name"]: c for c in context["continents"]}
        assert by_name["Australia"]["holder"] == me
        assert by_name["Australia"]["holder_colour"] == colours[me][0]
        assert by_name["Australia"]["mine"] is (viewer == me)
        assert by_name["Europe"]["holder"] is None and by_name["Europe"]["holder_colour"] is None
        assert not by_name["Europe"]["mine"]
        assert [p["next"] for p in context["players"]] == [
            p.name == me for p in shown.state.players
        ]
        assert [p["me"] for p in context["players"]] == [
            p.name == viewer for p in shown.state.players
        ]
        australia_rows = by_name["Australia"]["territories"]
        assert all(t["owner"] == me and t["mine"] is (viewer == me) for t in australia_rows)
        assert context["next_player"] == me and context["awaiting"] == [me]
    mine = report.report_context(shown, 3, [], me)
    assert "Australia" in next(p for p in mine["players"] if p["name"] == me)["continents"]


def test_a_players_context_holds_their_hand_sets_and_reinforcements(game: Game) -> None:
    state = game.state
    me = state.current_player.name
    owned = state.owned(me)
    card = owned[0]
    hand = tuple(c for c in state.deck if c != card and state.board.card_kind(c) is not None)
    kind = state.board.card_kind(card)
    same = [c for c in hand if state.board.card_kind(c) is kind and c not in owned][:2]
    cards = (card, *same, WILD, hand[-1])
    deck = tuple(c for c in state.deck if c not in cards)
    players = tuple(replace(p, hand=cards) if p.name == me else p for p in state.players)
    held = replace(game, state=replace(state, players=players, deck=deck, sets_traded=2))
    context = report.report_context(held, 3, [], me)
    assert context["must_trade"] is True
    assert [h["kind"] for h in context["hand"]][3] == "wild"
    assert context["hand"][0] == {"card": card, "kind": kind.value}  # type: ignore[union-attr]
    assert context["set_value"] == 8
    bonus = next(s for s in context["sets"] if card in s["cards"])
    assert bonus["bonus"] == [card] and bonus["value"] == 8
    base = rules.reinforcement(held.state, me)
    assert context["reinforcement"]["total"] == base.total
    assert context["reinforcement"]["best_set"] == 8
    assert context["reinforcement"]["with_set"] == base.total + 8
    assert context["my_turn_now"] is True and context["before_me"] == []
    assert context["skeleton"] is not None and 'trade = "best"' in context["skeleton"]
    empty = report.report_context(game, 3, [], me)
    assert empty["sets"] == [] and empty["must_trade"] is False
    assert empty["reinforcement"]["best_set"] == 0
    assert empty["reinforcement"]["with_set"] == empty["reinforcement"]["total"]


def test_the_fortify_example_moves_from_an_inner_territory_with_two_armies() -> None:
    south = {"Venezuela": "alice", "Peru": "alice", "Brazil": "alice", "Argentina": ("alice", 2)}
    state = make_state(south, default=("bob", 3))
    text = _ready(state)
    assert "# [fortify]" in text
    assert '# from = "Argentina"' in text
    one = make_state({**south, "Argentina": "alice"}, default=("bob", 3))
    assert '# from = "Argentina"' not in _ready(one)


def test_the_neutral_has_one_colour_on_the_map_and_in_the_legend(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "two", "alice,bob")
    game = read_game(directory)
    context = report.report_context(game, 0, [], "alice")
    fills = {t.fill for t in context["map"]["territories"] if t.owner == "neutral"}
    assert fills == {context["neutral_colour"]} == {svgmap.NEUTRAL_COLOUR[0]}


def test_the_fortify_example_between_two_borders_stays_at_home() -> None:
    state = make_state({"Ukraine": ("alice", 5), "Ural": "alice"}, default=("bob", 3))
    text = _ready(state)
    assert '# [fortify]\n# from = "Ukraine"\n# to = "Ural"\n# armies = 2' in text
