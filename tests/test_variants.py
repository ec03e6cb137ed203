"""The variants clubs play: a game without cards, without the +2 of a traded card's territory,
with fortification anywhere or none; each refereed by the rules, recorded in the game file only
when it is not classic Risk's, and told in every report's header."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_skeletons
from helpers import BOARD, make_state, orders
from test_rules import ARTILLERY, CAVALRY, INFANTRY

from pbem.cli import main
from pbem.core import rules, validation
from pbem.core.board import WILD
from pbem.core.engine import Randomness, resolve
from pbem.core.events import DrewCard, Fortified, Placed, Skipped, Traded
from pbem.core.orders import ALL, Attack, Fortify
from pbem.core.state import CardRule, FortifyMode, Options, state_digest
from pbem.game import processor
from pbem.records.opening import read_game

NO_CARDS = Options(cards=CardRule.NONE)
NO_BONUS = Options(territory_bonus=False)
UNLIMITED = Options(fortify=FortifyMode.UNLIMITED)
NO_FORTIFY = Options(fortify=FortifyMode.NONE)
RANDOMNESS = Randomness(bytes(32), bytes(32))


def problems(state: object, o: object) -> list[str]:
    return [p.message for p in validation.validate(state, o)]  # type: ignore[arg-type]


# --- recorded only when not classic --------------------------------------------------------------


def test_classic_options_record_no_variant_so_old_digests_stay() -> None:
    assert set(Options().to_dict()) == {
        "setup",
        "two_player",
        "fortify",
        "traded_cards",
        "stop_at",
        "dice",
        "autopilot",
    }
    assert Options.from_dict(Options().to_dict()) == Options()
    varied = Options(cards=CardRule.NONE, territory_bonus=False, fortify=FortifyMode.UNLIMITED)
    assert varied.to_dict() == {
        **Options().to_dict(),
        "cards": "none",
        "territory_bonus": False,
        "fortify": "unlimited",
    }
    assert Options.from_dict(varied.to_dict()) == varied
    state = make_state()
    assert state_digest(state) != state_digest(
        replace(state, options=replace(state.options, cards=CardRule.NONE))
    )


def test_an_option_of_the_wrong_kind_is_bad_data() -> None:
    with pytest.raises(ValueError, match="territory_bonus"):
        Options.from_dict({**Options().to_dict(), "territory_bonus": "no"})
    with pytest.raises(ValueError):
        Options.from_dict({**Options().to_dict(), "cards": "nuclear"})


# --- no cards ------------------------------------------------------------------------------------


def test_without_cards_a_conquest_draws_no_card() -> None:
    state = make_state({"Ukraine": ("alice", 30), "Ural": "bob"}, default="carol", options=NO_CARDS)
    new, events = resolve(state, (orders(state, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert new.owner("Ural") == "alice"
    assert not any(isinstance(e, DrewCard) for e in events)
    assert new.player("alice").hand == () and len(new.deck) == len(state.deck)
    classic = replace(state, options=Options())
    _, events = resolve(classic, (orders(classic, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert any(isinstance(e, DrewCard) for e in events)  # (the same turn with cards draws one)


def test_without_cards_a_trade_is_refused_with_what_to_do() -> None:
    state = make_state({"Ukraine": "alice"}, options=NO_CARDS)
    o = orders(state, trade=[("Ukraine", "Ural", "Siam")], place=[("Ukraine", 3)])
    assert problems(state, o) == ["this game plays without cards: leave out trade"]
    assert problems(state, orders(state, trade="best", place=[("Ukraine", 3)])) == []


# --- no territory bonus --------------------------------------------------------------------------


def test_without_the_territory_bonus_a_traded_card_gives_no_2() -> None:
    hand = INFANTRY  # a set; its first card shows alice's territory
    for options, bonus in ((Options(), True), (NO_BONUS, False)):
        state = make_state({hand[0]: "alice"}, hands={"alice": hand}, options=options)
        o = orders(state, trade=[hand], place=[(hand[0], 7)])
        assert problems(state, o) == []
        _, events = resolve(state, (o,), RANDOMNESS)
        assert any(isinstance(e, Traded) for e in events)
        given = [e for e in events if isinstance(e, Placed) and e.why == "card"]
        assert (given != []) is bonus
    assert rules.card_bonus_territory([hand], [hand[0]], allowed=False) is None
    assert rules.card_bonus_territory([hand], [hand[0]], allowed=True) == hand[0]


# --- fortification -------------------------------------------------------------------------------


def test_unlimited_fortification_goes_between_any_two_of_ones_own() -> None:
    owners = {"Alaska": ("alice", 5), "Argentina": "alice"}  # far apart, bob between
    state = make_state(owners, options=UNLIMITED)
    assert rules.can_fortify(state, "alice", "Alaska", "Argentina") is None
    o = orders(state, place=[("Alaska", 3)], fortify=Fortify("Alaska", "Argentina", ALL))
    assert problems(state, o) == []
    new, events = resolve(state, (o,), RANDOMNESS)
    assert any(isinstance(e, Fortified) for e in events) and new.armies("Argentina") == 8
    for mode in (FortifyMode.ADJACENT, FortifyMode.CONNECTED):
        other = make_state(owners, options=Options(fortify=mode))
        assert rules.can_fortify(other, "alice", "Alaska", "Argentina") is not None
    assert rules.can_fortify(state, "alice", "Alaska", "Peru") == "you do not hold Peru"


def test_without_fortification_a_fortify_is_refused_and_never_made() -> None:
    state = make_state({"Ukraine": ("alice", 5), "Ural": "alice"}, options=NO_FORTIFY)
    o = orders(state, place=[("Ukraine", 3)], fortify=Fortify("Ukraine", "Ural", 2))
    assert problems(state, o) == ["this game has no fortification: leave out the fortify table"]
    assert rules.can_fortify(state, "alice", "Ukraine", "Ural") == "this game has no fortification"
    _, events = resolve(state, (o,), RANDOMNESS)  # (resolved anyway: skipped, with the reason)
    assert [e.reason for e in events if isinstance(e, Skipped)] == [
        "this game has no fortification"
    ]
    assert not any(isinstance(e, Fortified) for e in events)


# --- the game, its reports and the command line --------------------------------------------------


def test_pbem_new_records_the_variants_and_every_report_tells_them(tmp_path: Path) -> None:
    game = tmp_path / "club"
    result = CliRunner().invoke(
        main,
        [
            "new",
            str(game),
            "--players",
            "ann,ben,cy",
            "--cards",
            "none",
            "--fortify",
            "none",
            "--seed",
            "00" * 32,
            "--now",
            "2027-03-01T12:00Z",
        ],
    )
    assert result.exit_code == 0, result.output
    options = read_game(game).state.options
    assert (options.cards, options.fortify, options.territory_bonus) == (
        CardRule.NONE,
        FortifyMode.NONE,
        True,
    )
    for _ in range(3):
        write_skeletons(game)
        processor.resolve_game(game)
    folder = sorted((game / "reports").iterdir())[-1]
    told = "This game's rules: no cards; no fortification."
    for name in ("ann", "ben", "cy", "_moderator"):
        text = (folder / f"{name}.txt").read_text()
        assert told in text.replace("\n", " ").replace("  ", " ")
        assert told in (folder / f"{name}.html").read_text()
    ann = (folder / "ann.txt").read_text()
    assert "Your hand" not in ann and "No cards yet" not in ann
    (ready,) = folder.glob("*.orders.toml")  # the next player's order file
    assert "fortify" not in ready.read_text()
    view = json.loads((folder / "ann.view.json").read_text())
    assert view["options"]["cards"] == "none" and view["options"]["fortify"] == "none"


def test_a_swedish_report_tells_the_variants_in_swedish(tmp_path: Path) -> None:
    game = tmp_path / "klubb"
    options = Options(territory_bonus=False, fortify=FortifyMode.UNLIMITED)
    processor.new_game(game, [("ann", ""), ("ben", "")], options, seed=bytes(32), language="sv")
    text = next((game / "reports").glob("0000-*/ann.txt")).read_text()
    assert "Spelets regler: inget +2 för" in text and "This game's rules" not in text


# --- a round limit -------------------------------------------------------------------------------


def three_ways(armies: dict[str, int], options: Options, current: int) -> object:
    """alice, bob and carol hold 14 territories each (in board order, round the table), with
    `armies` on each of theirs; the last round under way."""
    names = ("alice", "bob", "carol")
    owners = {t: (names[i % 3], armies[names[i % 3]]) for i, t in enumerate(BOARD.names)}
    state = make_state(owners, players=list(names), options=options, current=current)
    return replace(state, round=options.rounds, first_seat=1)


@pytest.mark.parametrize(
    ("armies", "winner"),
    [
        ({"alice": 1, "bob": 2, "carol": 2}, "bob"),  # a tie: the earliest in the round (seat 1)
        ({"alice": 2, "bob": 1, "carol": 1}, "alice"),  # the most armies
        ({"alice": 1, "bob": 1, "carol": 3}, "carol"),
    ],
)
def test_the_last_turn_of_the_last_round_ends_the_game(armies: dict[str, int], winner: str) -> None:
    """Seat 1 (bob) played first, so alice (seat 0) plays last in each round."""
    options = Options(rounds=3, fortify=FortifyMode.NONE)
    state = three_ways(armies, options, current=0)
    assert rules.round_ends(state, 1)  # after alice, bob begins the next round
    new, events = resolve(state, (orders(state, place=[(state.owned("alice")[0], 4)]),), RANDOMNESS)
    bonus = 4 if winner == "alice" else 0  # (alice's 4 reinforcements are placed first)
    over = [e for e in events if type(e).__name__ == "RoundsOver"]
    assert len(over) == 1 and over[0].player == winner  # type: ignore[attr-defined]
    assert new.winner == winner and new.phase.value == "over"
    assert over[0].territories == 14 and over[0].armies == 14 * armies[winner] + bonus  # type: ignore[attr-defined]


def test_a_turn_within_the_round_or_before_the_last_goes_on() -> None:
    options = Options(rounds=3)
    state = three_ways({"alice": 1, "bob": 1, "carol": 1}, options, current=1)  # bob, first
    new, events = resolve(state, (orders(state, place=[(state.owned("bob")[0], 4)]),), RANDOMNESS)
    assert new.phase.value == "play" and new.round == 3 and new.current == 2
    earlier = replace(state, round=2, current=0)  # alice ends round 2 of 3
    new, _ = resolve(
        earlier, (orders(earlier, place=[(earlier.owned("alice")[0], 3)]),), RANDOMNESS
    )
    assert new.phase.value == "play" and new.round == 3 and new.current == 1


def test_a_game_of_two_rounds_through_the_command_line_ends_and_audits(tmp_path: Path) -> None:
    game = tmp_path / "short"
    args = ["new", str(game), "--players", "ann,ben,cy", "--rounds", "2", "--seed", "11" * 32]
    result = CliRunner().invoke(main, [*args, "--now", "2027-03-01T12:00Z"])
    assert result.exit_code == 0, result.output
    assert read_game(game).state.options.rounds == 2
    for _ in range(20):
        if read_game(game).state.phase.value == "over":
            break
        write_skeletons(game)
        processor.resolve_game(game)
    state = read_game(game).state
    assert state.phase.value == "over" and state.round == 2
    assert state.turn == 6  # two rounds of three turns (the setup turn is no round)
    folder = sorted((game / "reports").iterdir())[-1]
    text = (folder / f"{state.winner}.txt").read_text().replace("\n", " ")
    assert "Round 2, the game's last, is over" in " ".join(text.split())
    audit = CliRunner().invoke(main, ["audit", str(game)])
    assert audit.exit_code == 0, audit.output
    assert "the game ends after round 2" in " ".join(
        (sorted((game / "reports").iterdir())[1] / "ann.txt").read_text().split()
    )


# --- flat spoils ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "worth"),
    [
        (INFANTRY, 4),
        (CAVALRY, 6),
        (ARTILLERY, 8),
        ((INFANTRY[0], CAVALRY[0], ARTILLERY[0]), 10),
        ((INFANTRY[0], INFANTRY[1], WILD), 4),  # three infantry, the wild one of them
        ((ARTILLERY[0], ARTILLERY[1], WILD), 8),
        ((INFANTRY[0], ARTILLERY[0], WILD), 10),  # one of each
        ((CAVALRY[0], WILD, WILD), 10),
    ],
)
def test_a_flat_set_is_worth_what_it_shows(cards: tuple[str, str, str], worth: int) -> None:
    flat = make_state(options=Options(cards=CardRule.FLAT), sets_traded=7)
    assert rules.trade_value(flat, cards, 7) == worth
    assert rules.trade_value(make_state(sets_traded=7), cards, 7) == 25  # classic: the 8th set


def test_best_flat_set_is_the_one_worth_most_then_the_2() -> None:
    hand = (*INFANTRY, ARTILLERY[0], ARTILLERY[1], ARTILLERY[2])
    flat, classic = CardRule.FLAT, CardRule.ESCALATING
    assert rules.best_set(BOARD, hand, [INFANTRY[0]], rule=flat) == ARTILLERY
    assert rules.best_set(BOARD, hand, [INFANTRY[0]], rule=classic) == INFANTRY  # (+2 first)


def test_a_flat_trade_gives_its_value_and_the_report_lists_each_sets_worth(tmp_path: Path) -> None:
    hand = (*CAVALRY, INFANTRY[0], ARTILLERY[0])
    state = make_state(
        {CAVALRY[0]: "alice"}, hands={"alice": hand}, options=Options(cards=CardRule.FLAT)
    )
    o = orders(state, trade="best", place=[(CAVALRY[0], 3 + 10)])  # one of each: 10
    assert problems(state, o) == []
    _, events = resolve(state, (o,), RANDOMNESS)
    (traded,) = [e for e in events if isinstance(e, Traded)]
    assert traded.value == 10 and BOARD.card_kind(traded.cards[0]) is not None
    game = tmp_path / "flat"
    processor.new_game(
        game, [("ann", ""), ("ben", "")], Options(cards=CardRule.FLAT), seed=bytes(32)
    )
    text = " ".join(next((game / "reports").glob("0000-*/ann.txt")).read_text().split())
    assert "a set is worth 4 (three infantry), 6 (three cavalry), 8 (three artillery) or 10" in text
    assert "flat spoils" in text


# --- more than one fortification a turn ----------------------------------------------------------


def test_fortifications_up_to_the_games_number_each_after_the_one_before() -> None:
    """Alaska -> Alberta, then Alberta -> Ontario: the second moves what the first brought."""
    from pbem.core.forecast import forecast_plan
    from pbem.present.plan import plan_lines

    owners = {"Alaska": ("alice", 6), "Alberta": "alice", "Ontario": "alice"}
    chain = (Fortify("Alaska", "Alberta", ALL), Fortify("Alberta", "Ontario", ALL))
    two = Options(fortifies=2)
    state = make_state(owners, options=two)
    o = replace(orders(state, place=[("Alaska", 3)], fortify=chain[0]), more_fortify=chain[1:])
    assert problems(state, o) == []
    new, events = resolve(state, (o,), RANDOMNESS)
    assert [(e.source, e.target, e.armies) for e in events if isinstance(e, Fortified)] == [
        ("Alaska", "Alberta", 8),
        ("Alberta", "Ontario", 8),
    ]
    assert (new.armies("Alaska"), new.armies("Alberta"), new.armies("Ontario")) == (1, 1, 9)
    plan = forecast_plan(state, o, exact=True)
    assert [f.moved.low for f in plan.fortifications if f.moved] == [8, 8]
    assert len(plan_lines(plan)) == 3  # the placement and both fortifications
    one = replace(state, options=Options())  # classic: one a turn
    assert problems(one, o) == ["2 fortifications: this game allows 1 a turn"]
    three = replace(o, more_fortify=(*chain[1:], Fortify("Ontario", "Alberta", 1)))
    assert problems(state, three) == ["3 fortifications: this game allows 2 a turn"]
    assert Options.from_dict(two.to_dict()) == two and "fortifies" not in Options().to_dict()


# --- variants that meet other rules --------------------------------------------------------------


def test_flat_spoils_with_the_forced_trade_at_five_cards_take_the_set_worth_most() -> None:
    hand = (*INFANTRY, CAVALRY[0], ARTILLERY[0])  # three infantry (4) or one of each (10)
    flat = Options(cards=CardRule.FLAT)
    state = make_state({INFANTRY[0]: "alice"}, hands={"alice": hand}, options=flat)
    forced = rules.forced_trade(state, "alice", ())
    assert forced is not None and rules.trade_value(state, forced, 0) == 10
    o = orders(state, place=[(INFANTRY[0], 3 + 10)])  # no trade written: pbem makes it
    assert problems(state, o) == []
    _, events = resolve(state, (o,), RANDOMNESS)
    (traded,) = [e for e in events if isinstance(e, Traded)]
    assert traded.forced and traded.value == 10


def test_without_cards_an_elimination_takes_no_cards_and_forces_no_trade() -> None:
    state = make_state({"Ukraine": ("alice", 30), "Ural": "bob"}, default="carol", options=NO_CARDS)
    new, events = resolve(state, (orders(state, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert not new.player("bob").alive
    assert not any(isinstance(e, (Traded, DrewCard)) for e in events)
    assert all(p.hand == () for p in new.players)


def test_a_conquest_that_wins_in_the_last_round_is_a_win_not_the_round_limit() -> None:
    last = Options(rounds=2)
    state = make_state({"Ukraine": ("alice", 30), "Ural": "bob"}, default="alice", options=last)
    state = replace(state, round=2, first_seat=1, current=0)  # alice plays last in round 2
    new, events = resolve(state, (orders(state, attack=[Attack("Ukraine", "Ural")]),), RANDOMNESS)
    assert new.winner == "alice" and new.phase.value == "over"
    assert not any(type(e).__name__ == "RoundsOver" for e in events)


def test_a_report_says_when_the_game_ends_before_the_readers_next_turn(tmp_path: Path) -> None:
    """One round of three: after the first turn of it, the players still to play have a next
    turn, the one who played has none: the game ends first."""
    game = tmp_path / "one"
    run = CliRunner().invoke
    assert run(main, ["new", str(game), "--players", "ann,ben,cy", "--rounds", "1",
                      "--seed", "66" * 32]).exit_code == 0  # fmt: skip
    for _ in range(2):  # the setup turn, then the first turn of the round
        write_skeletons(game)
        processor.resolve_game(game)
    state = read_game(game).state
    played = state.players[state.first_seat].name
    folder = sorted((game / "reports").iterdir())[-1]
    text = " ".join((folder / f"{played}.txt").read_text().split())
    assert "The game ends at its round limit before your next turn." in text
    assert "Your next turn is turn" not in text
    waiting = next(
        p.name for p in state.players if p.name not in (played, state.current_player.name)
    )
    assert "Your next turn is turn" in " ".join((folder / f"{waiting}.txt").read_text().split())


def test_the_moderators_overview_of_a_game_without_cards_has_no_piles(tmp_path: Path) -> None:
    game = tmp_path / "nocards"
    processor.new_game(game, [("ann", ""), ("ben", "")], NO_CARDS, seed=bytes(32))
    overview = next((game / "reports").glob("0000-*/_moderator.txt")).read_text()
    assert "Draw pile" not in overview and "draw pile" not in overview
    classic = tmp_path / "classic"
    processor.new_game(classic, [("ann", ""), ("ben", "")], Options(), seed=bytes(32))
    assert "raw pile" in next((classic / "reports").glob("0000-*/_moderator.txt")).read_text()


def test_a_fortification_skipped_for_want_of_any_is_told_in_the_readers_language() -> None:
    from pbem.languages import i18n
    from pbem.languages.reasons import told

    with i18n.speaking(i18n.language("sv")):
        assert told("this game has no fortification") == "det här spelet har ingen förstärkning"


def test_an_attack_left_thin_is_not_warned_of_when_a_later_fortification_fills_it() -> None:
    """Ukraine attacks Ural with all its armies, Afghanistan (bob's, 8) next to it: a thin
    border, unless a fortification brings armies back there; the second of two does."""
    from pbem.core.advice import warnings
    from pbem.core.forecast import forecast_plan

    owners = {"Ukraine": ("alice", 10), "Ural": ("bob", 1), "Scandinavia": ("alice", 5)}
    owners |= {"Northern Europe": ("alice", 5), "Afghanistan": ("bob", 8)}
    state = make_state(owners, default="carol", options=Options(fortifies=2))
    plain = orders(state, place=[("Ukraine", 3)], attack=[Attack("Ukraine", "Ural", move=ALL)])
    kinds = [a.kind for a in warnings(state, plain, forecast_plan(state, plain))]
    assert "thin_border" in kinds
    first = Fortify("Northern Europe", "Scandinavia", 1)
    filled = replace(plain, fortify=first, more_fortify=(Fortify("Scandinavia", "Ukraine", ALL),))
    assert problems(state, filled) == []
    after = [a.kind for a in warnings(state, filled, forecast_plan(state, filled))]
    assert "thin_border" not in after


def test_a_fortification_that_depends_on_too_many_attacks_is_not_forecast_and_no_check_waits() -> (
    None
):
    """Connected fortification after 19 independent attacks (each one's conquest may open or
    close a chain): 2^19 ways the owners may fall. The forecast leaves the fortification out,
    saying so, at once, instead of working for minutes; the attacks are still forecast."""
    import time

    from pbem.core.forecast import forecast_plan
    from pbem.present.plan import plan_lines

    pairs = [(t, n) for t in BOARD.names for n in BOARD.neighbours(t)]
    sources: list[str] = []
    targets: list[str] = []
    for t, n in pairs:  # independent attacks: no territory in two of them
        if not {t, n} & {*sources, *targets}:
            sources.append(t)
            targets.append(n)
    owners = {t: ("alice", 6) for t in sources} | {t: ("bob", 1) for t in targets}
    state = make_state(owners, default="carol", options=Options(fortify=FortifyMode.CONNECTED))
    attacks = [Attack(s, t, move=ALL) for s, t in zip(sources, targets, strict=True)]
    armies = rules.reinforcement(state, "alice").total
    o = orders(state, place=[(sources[0], armies)], attack=attacks)
    o = replace(o, fortify=Fortify(sources[0], sources[1], 1))
    assert len(attacks) >= 17 and problems(state, o) == []
    began = time.monotonic()
    plan = forecast_plan(state, o)
    assert time.monotonic() - began < 10
    assert plan.fortify is None and plan.fortify_unknown and len(plan.attacks) == len(attacks)
    assert "the fortification depends on too many attacks: no forecast for it" in plan_lines(plan)
