"""The card deck as the rule texts have it: traded sets are kept face up beside the board, out of
the draw pile, until it runs out; then they are shuffled into a new one. Games that began before
pbem recorded this rule keep theirs (traded cards back into the deck), and game files say which
rule, in which format, they follow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from click.testing import CliRunner
from conftest import new_game
from helpers import BOARD, HIDDEN, make_state, only, orders, play
from test_engine import WIN_3_VS_1
from test_selfplay import make_case
from test_selfplay import play as self_play

from pbem.cli import main
from pbem.core.board import WILD
from pbem.core.dice import Stream
from pbem.core.events import DiceKeyed, DrewCard, DrewNoCard, Reshuffled, Traded
from pbem.core.orders import Attack, Orders
from pbem.core.state import (
    AutopilotRule,
    DiceRule,
    GameState,
    Options,
    Phase,
    StopAt,
    TradedCards,
    state_digest,
    state_from_dict,
    state_to_dict,
)
from pbem.errors import GameFileError
from pbem.game import processor
from pbem.present import report
from pbem.present.report import narrate
from pbem.present.view import game_view
from pbem.records.history import history_count, read_history, report_dir
from pbem.records.opening import read_game
from pbem.records.store import FORMAT, Game, game_document, write_game

OLD_RULE = Options(
    traded_cards=TradedCards.DECK, stop_at=StopAt.THRESHOLD, autopilot=AutopilotRule.FRONT
)
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "format1-example"
CARD_ORDER = {c: i for i, c in enumerate(BOARD.cards())}

# alice takes Ural from Ukraine (WIN_3_VS_1) and so draws a card at the end of her turn.
TAKES_URAL = {"Ukraine": ("alice", 10), "Siam": "alice", "Ural": "bob"}


def conquering(state: GameState, **more: Any) -> Orders:
    """alice's orders: place her armies on Siam, take Ural from Ukraine (and `more`)."""
    return orders(state, place=[("Siam", "rest")], attack=[Attack("Ukraine", "Ural")], **more)


def cards_but(*cards: str) -> list[str]:
    """The board's cards in board order without `cards` (each named once per copy)."""
    rest = list(BOARD.cards())
    for card in cards:
        rest.remove(card)
    return rest


def drawn_index(resolution: int, cards: int) -> int:
    """What the hidden stream of a resolution draws: card number randbelow(cards)."""
    return Stream.hidden(HIDDEN, resolution).randbelow(cards)


# --- where traded cards go ---------------------------------------------------------------------


def test_traded_cards_go_to_the_discard_pile_in_the_order_traded() -> None:
    hand = ("Alaska", "Peru", WILD, "Japan", "Siam", "India")
    state = make_state({"Siam": "alice"}, hands={"alice": hand}, discards=("Brazil",))
    sets = [("Alaska", "Peru", WILD), ("Japan", "Siam", "India")]
    new, _ = play(state, orders(state, trade=sets, place=[("Siam", "rest")]))
    assert new.discards == ("Brazil", "Alaska", "Peru", WILD, "Japan", "Siam", "India")
    assert new.deck == state.deck
    assert new.player("alice").hand == ()


def test_a_trade_forced_at_five_cards_goes_to_the_discard_pile() -> None:
    hand = ("Alaska", "Peru", "Venezuela", "Japan", "Brazil")
    state = make_state({"Siam": "alice"}, hands={"alice": hand})
    new, events = play(state, orders(state, trade="best", place=[("Siam", "rest")]))
    traded = only(events, Traded)[0].cards
    assert new.discards == traded
    assert Counter(new.player("alice").hand) == Counter(hand) - Counter(traded)


def test_a_trade_forced_by_an_elimination_goes_to_the_discard_pile() -> None:
    state = make_state(
        {"Japan": ("alice", 10), "Argentina": "alice", "Kamchatka": "bob"},
        default="carol",
        hands={
            "alice": ("Alaska", "Venezuela", "Greenland", "Alberta"),
            "bob": ("Peru", "Quebec", WILD),
        },
    )
    attack = [Attack("Japan", "Kamchatka")]
    new, events = play(
        state, orders(state, place=[("Argentina", "rest")], attack=attack), WIN_3_VS_1
    )
    assert only(events, Traded) == [
        Traded("alice", ("Alaska", "Venezuela", "Peru"), 4, 1, forced=True)
    ]
    assert new.discards == ("Alaska", "Venezuela", "Peru")
    assert not set(new.discards) & set(new.deck)


def test_the_old_rule_puts_traded_cards_back_where_they_can_be_drawn_at_once() -> None:
    hand = ("Alaska", "Peru", WILD)
    rest = cards_but("Japan", *hand)
    # The deck holds one card; the trade puts three back, and the draw takes any of the four.
    state = make_state(TAKES_URAL, hands={"alice": hand, "bob": rest}, options=OLD_RULE)
    assert state.deck == ("Japan",)
    new, events = play(state, conquering(state, trade=[hand]), WIN_3_VS_1)
    pile = sorted(("Japan", *hand), key=CARD_ORDER.__getitem__)
    assert only(events, DrewCard) == [DrewCard("alice", pile[drawn_index(1, 4)])]
    assert new.discards == ()
    assert only(events, Reshuffled) == []


# --- drawing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("resolution", range(1, 41))
def test_a_traded_card_is_never_drawn_while_the_draw_pile_holds_a_card(resolution: int) -> None:
    hand = ("Alaska", "Peru", WILD)
    pile = ("Brazil", "Japan")
    others = cards_but(*hand, *pile)
    state = make_state(
        TAKES_URAL,
        hands={"alice": hand, "bob": others[:10]},
        discards=others[10:],
        resolution=resolution,
    )
    new, events = play(state, conquering(state, trade=[hand]), WIN_3_VS_1)
    assert only(events, DrewCard) == [DrewCard("alice", pile[drawn_index(resolution, 2)])]
    assert only(events, Reshuffled) == []
    assert new.discards == (*others[10:], *hand)


def test_an_empty_draw_pile_takes_the_discards_and_says_so() -> None:
    discards = ("Peru", "Alaska", WILD, "Japan", "Brazil")
    others = cards_but(*discards)
    state = make_state(TAKES_URAL, hands={"bob": others}, discards=discards, resolution=7)
    assert state.deck == ()
    new, events = play(state, conquering(state), WIN_3_VS_1)
    # The new pile is the discards in board order; the draw is the shuffle (docs/dice.md).
    pile = ["Alaska", "Peru", "Brazil", "Japan", WILD]
    card = pile[drawn_index(7, 5)]
    assert events[-2:] == (Reshuffled("alice", 5), DrewCard("alice", card))
    assert new.discards == ()
    assert list(new.deck) == [c for c in pile if c != card]
    assert new.player("alice").hand == (card,)


def test_no_reshuffle_while_the_draw_pile_holds_one_card() -> None:
    discards = ("Peru", "Alaska", WILD)
    others = cards_but(*discards, "Japan")
    state = make_state(TAKES_URAL, hands={"bob": others}, discards=discards)
    assert state.deck == ("Japan",)
    new, events = play(state, conquering(state), WIN_3_VS_1)
    assert only(events, Reshuffled) == []
    assert only(events, DrewCard) == [DrewCard("alice", "Japan")]
    assert (new.deck, new.discards) == ((), discards)


@pytest.mark.parametrize("rule", list(TradedCards))
def test_no_card_is_drawn_when_every_card_is_in_a_hand(rule: TradedCards) -> None:
    state = make_state(TAKES_URAL, hands={"bob": BOARD.cards()}, options=Options(traded_cards=rule))
    new, events = play(state, conquering(state), WIN_3_VS_1)
    assert events[-1] == DrewNoCard(
        "alice", "the draw pile and the discard pile are empty: every card is in a hand"
    )
    assert only(events, DrewCard) == []
    assert new.player("alice").hand == ()
    assert "alice draws no card: the draw pile and the discard pile are empty" in narrate(
        events[-1], None
    )


# --- the state and its digest ------------------------------------------------------------------


def test_a_state_with_the_old_rule_is_written_as_before() -> None:
    state = make_state(TAKES_URAL, options=OLD_RULE)
    data = state_to_dict(state)
    assert list(data) == [
        "game",
        "board",
        "phase",
        "turn",
        "resolution",
        "current",
        "sets_traded",
        "options",
        "deck",
        "players",
        "territories",
    ]
    assert data["options"] == {"setup": "deal", "two_player": "neutral", "fortify": "adjacent"}
    assert state_from_dict(data, BOARD) == state


def test_a_state_with_the_discard_pile_records_it_and_its_rule() -> None:
    state = make_state(TAKES_URAL, discards=("Peru", WILD))
    data = state_to_dict(state)
    assert data["discards"] == ["Peru", WILD]
    assert data["options"]["traded_cards"] == "aside"
    assert state_from_dict(data, BOARD) == state
    moved = dataclasses.replace(state, discards=(WILD, "Peru"))
    assert state_digest(moved) != state_digest(state)


# --- the game file: format, migration, consistency ---------------------------------------------


def test_a_format_1_game_file_follows_the_old_rule() -> None:
    game = read_game(FIXTURE)
    assert game.state.options.traded_cards is TradedCards.DECK
    assert game.state.discards == ()


def test_a_format_1_game_is_written_back_in_todays_format_with_its_rule(tmp_path: Path) -> None:
    copy = tmp_path / "old"
    shutil.copytree(FIXTURE, copy)
    old = read_game(copy)
    write_game(old)
    text = (copy / "game.toml").read_text()
    assert text.startswith(f"format = {FORMAT}\n") and FORMAT == 8
    assert 'traded_cards = "deck"' in text and "discards" not in text
    assert "missions = false" in text  # format 2 to 3: a game of classic Risk
    assert 'stop_at = "threshold"' in text
    assert 'autopilot = "front"' in text  # format 6 to 7: the autopilot of then
    again = read_game(copy)
    assert again.state == old.state
    assert state_digest(again.state) == state_digest(old.state)
    assert processor.audit_game(copy).resolutions == 11


def write_document(directory: Path, change: dict[str, object]) -> None:
    doc = game_document(read_game(directory)) | change
    (directory / "game.toml").write_text(tomli_w.dumps(doc))


def test_a_game_file_of_a_newer_format_is_refused_with_what_to_do(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    write_document(directory, {"format": FORMAT + 1})
    with pytest.raises(GameFileError) as caught:
        read_game(directory)
    assert str(caught.value) == (
        f"{directory / 'game.toml'} is in game file format {FORMAT + 1}, but this pbem reads "
        f"formats 1 to {FORMAT} only: upgrade pbem to go on with this game"
    )
    result = CliRunner().invoke(main, ["show", str(directory)])
    assert result.exit_code != 0 and "upgrade pbem" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("bad", ["one", 0, True])
def test_a_game_file_with_a_bad_format_is_refused(tmp_path: Path, bad: object) -> None:
    directory = new_game(tmp_path / "game")
    write_document(directory, {"format": bad})
    with pytest.raises(GameFileError, match="'format' must be the number of its game file"):
        read_game(directory)


def test_a_format_2_game_file_must_say_where_traded_cards_go(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    doc = game_document(read_game(directory))
    del doc["options"]["traded_cards"]
    (directory / "game.toml").write_text(tomli_w.dumps(doc))
    with pytest.raises(GameFileError, match='go; write traded_cards = "aside"'):
        read_game(directory)
    doc["options"]["traded_cards"] = "sideways"
    (directory / "game.toml").write_text(tomli_w.dumps(doc))
    with pytest.raises(GameFileError, match="'sideways' is not a rule"):
        read_game(directory)


def test_a_card_both_set_aside_and_in_a_hand_is_refused(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    doc = game_document(read_game(directory))
    doc["state"]["discards"] = [doc["state"]["deck"][0]]
    doc["players"][0]["hand"] = [doc["state"]["deck"][0]]
    doc["state"]["deck"] = doc["state"]["deck"][1:]
    (directory / "game.toml").write_text(tomli_w.dumps(doc))
    with pytest.raises(GameFileError, match="the draw pile and the discard pile are not"):
        read_game(directory)


def test_cards_set_aside_in_a_game_with_the_old_rule_are_refused(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game", traded_cards=TradedCards.DECK)
    doc = game_document(read_game(directory))
    doc["state"]["discards"] = doc["state"]["deck"][:3]
    doc["state"]["deck"] = doc["state"]["deck"][3:]
    (directory / "game.toml").write_text(tomli_w.dumps(doc))
    with pytest.raises(GameFileError, match="3 cards are set aside, but in this game traded"):
        read_game(directory)


@pytest.mark.parametrize("rule", list(TradedCards))
def test_a_new_game_records_its_rule(tmp_path: Path, rule: TradedCards) -> None:
    directory = new_game(tmp_path / "game", traded_cards=rule)
    text = (directory / "game.toml").read_text()
    assert f'traded_cards = "{rule.value}"' in text
    setup = read_history(directory, 0).setup
    assert setup is not None and setup["traded_cards"] == rule.value
    assert read_game(directory).state.options.traded_cards is rule
    assert processor.audit_game(directory).resolutions == 1


def test_a_new_game_sets_traded_cards_aside_by_default(tmp_path: Path) -> None:
    directory = tmp_path / "game"
    result = CliRunner().invoke(
        main, ["new", str(directory), "--players", "alice,bob,carol"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert read_game(directory).state.options.traded_cards is TradedCards.ASIDE


# --- what players see --------------------------------------------------------------------------


def test_every_view_shows_the_discard_pile_and_the_size_of_the_draw_pile() -> None:
    state = make_state(TAKES_URAL, hands={"alice": ("Japan",)}, discards=("Peru", WILD, "Siam"))
    for viewer in (None, "alice", "bob"):
        assert game_view(state, viewer)["piles"] == {
            "traded_cards": "aside",
            "draw_pile": 40,
            "discards": ["Peru", WILD, "Siam"],
        }


def test_reports_say_which_rule_a_game_follows(tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(FIXTURE, old, ignore=shutil.ignore_patterns("continuation"))
    processor.resolve_game(old)
    text = " ".join((report_dir(old, 11) / "alice.txt").read_text().split())
    assert "traded cards go back into the draw pile (the rule it began with)" in text
    directory = new_game(tmp_path / "new")
    for name in ("alice.txt", "alice.html", "_moderator.txt", "_moderator.html"):
        text = " ".join((report_dir(directory, 0) / name).read_text().split())
        assert "Draw pile: 44 cards. Set aside: none." in text
        assert "Traded cards are set aside face up, out of the draw pile" in text


def test_show_tells_the_cards_beside_the_board(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    result = CliRunner().invoke(main, ["show", str(directory)], catch_exceptions=False)
    assert "Draw pile: 44 cards. Set aside: none." in result.output


def test_a_report_tells_a_reshuffle() -> None:
    assert narrate(Reshuffled("alice", 12), "bob") == (
        "The draw pile was empty when alice was to draw: the 12 traded cards set aside were "
        "shuffled into a new draw pile."
    )


# --- a whole game, checked at its end as a player can ------------------------------------------

# four players, 88 resolutions with stop_at a threshold: the draw pile runs out twice
LONG = dataclasses.replace(
    make_case(147),
    options=dataclasses.replace(
        make_case(147).options, stop_at=StopAt.THRESHOLD, dice=DiceRule.KEY
    ),
)
"""A game whose draw pile runs out twice. Its dice come from the key alone: under the rule of
the orders they would follow the secrets that sign them, which the self-played game and the
game made again here do not share."""


def test_a_long_game_reshuffles_once_per_emptying_and_its_draws_check_out_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    render_reports = report.render_reports

    def only_first_and_last(game: Game, *args: Any, **kwargs: Any) -> dict[str, str]:
        """The reports this test reads (the others take most of its time)."""
        if game.state.resolution == 1 or game.state.phase is Phase.OVER:
            return render_reports(game, *args, **kwargs)
        return {}

    monkeypatch.setattr(report, "render_reports", only_first_and_last)
    played = self_play(LONG)
    assert played.ended and LONG.options.traded_cards is TradedCards.ASIDE
    directory = tmp_path / LONG.id
    processor.new_game(
        directory, [(n, "") for n in LONG.names], LONG.options, seed=LONG.seed, name=LONG.id
    )
    for turn_orders in played.orders:
        game = read_game(directory)
        for o in turn_orders:
            reg = game.registration(o.player)
            assert reg is not None
            signed = dataclasses.replace(o, secret=reg.secret)
            (directory / "orders" / f"{o.player}.toml").write_text(signed.to_toml())
        processor.resolve_game(directory)
    last = history_count(directory) - 1
    assert read_game(directory).state == played.final
    assert processor.audit_game(directory).resolutions == last + 1

    # What a player holds at the end: the card commitment from the first report, the card key
    # from the last, and the public events. From these alone every draw is recomputed.
    first = (report_dir(directory, 0) / "alice.txt").read_text()
    commitment = re.search(r"Card commitment:\s*([0-9a-f]{64})", first)
    final = json.loads((report_dir(directory, last) / "alice.view.json").read_text())
    hidden = bytes.fromhex(final["dice"]["hidden_key"])
    assert commitment and hashlib.sha256(hidden).hexdigest() == commitment.group(1)
    pile, discards = list(BOARD.cards()), []
    reshuffled = draws = 0
    for r in range(1, last + 1):
        events = read_history(directory, r).events
        keyed = next((e.orders for e in events if isinstance(e, DiceKeyed)), None)
        for i, event in enumerate(events):
            if isinstance(event, Traded):
                discards.extend(event.cards)
            elif isinstance(event, Reshuffled):
                # only when a draw finds the pile empty, and the draw follows at once
                assert not pile and event.cards == len(discards)
                assert isinstance(events[i + 1], DrewCard)
                pile, discards = sorted(discards, key=CARD_ORDER.__getitem__), []
                reshuffled += 1
            elif isinstance(event, DrewCard):
                assert pile, f"resolution {r}: the pile ran out and was not reshuffled"
                card = pile.pop(Stream.hidden(hidden, r, keyed).randbelow(len(pile)))
                assert card == event.card, f"resolution {r}: drew {event.card}, key says {card}"
                draws += 1
    assert reshuffled == 2 == played.outcomes["reshuffled"]
    assert draws > 44
