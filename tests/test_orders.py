"""Order files (DESIGN section 4): parsing every field, the messages for bad files, the round trip
through `Orders.to_toml`, and `validation.validate`'s rejections, each with the line it came
from."""

from __future__ import annotations

import pytest
from helpers import BOARD, GAME, SECRET, make_state, only, order_text, orders, play
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.core import rules, validation
from pbem.core.board import WILD
from pbem.core.events import Traded
from pbem.core.order_parsing import parse_orders
from pbem.core.order_text import key_lines, read_plain
from pbem.core.orders import ALL, BEST, MIN, REST, Attack, Fortify, Orders, Place
from pbem.core.state import CardRule, FortifyMode, GameState, Options, Phase
from pbem.errors import OrderError, Problem
from pbem.present.plan import forecast_with_warnings


def parse(body: str, **header: object) -> Orders:
    return parse_orders(order_text(body, **header), BOARD)  # type: ignore[arg-type]


def problems_of(body: str, **header: object) -> list[Problem]:
    with pytest.raises(OrderError) as caught:
        parse(body, **header)
    return caught.value.problems


FULL = """\
trade = [["Alaska", "Peru", "wild"]]

[[place]]
territory = "Ukraine"
armies = 7

[[place]]
territory = "Ural"
armies = "rest"

[[attack]]
from = "Ukraine"
to = "Southern Europe"
dice = 2
stop_at = 4
move = "min"

[[attack]]
from = "Southern Europe"
to = "Egypt"
move = 5

[fortify]
from = "Ural"
to = "Ukraine"
armies = 3
"""


# --- parsing -----------------------------------------------------------------------------------


def test_every_field_of_an_order_file() -> None:
    parsed = parse(FULL)
    assert parsed == Orders(
        game=GAME,
        turn=1,
        player="alice",
        secret=SECRET,
        trade=(("Alaska", "Peru", WILD),),
        place=(Place("Ukraine", 7), Place("Ural", REST)),
        attack=(
            Attack("Ukraine", "Southern Europe", dice=2, stop_at=4, move=MIN),
            Attack("Southern Europe", "Egypt", move=5),
        ),
        fortify=Fortify("Ural", "Ukraine", 3),
    )


def test_each_order_knows_its_line() -> None:
    parsed = parse(FULL)
    assert [p.line for p in parsed.place] == [7, 11]
    assert [a.line for a in parsed.attack] == [15, 22]
    assert parsed.fortify is not None and parsed.fortify.line == 27
    assert parsed.line_of("trade") == 5
    assert (parsed.line_of("game"), parsed.line_of("turn"), parsed.line_of("player")) == (1, 2, 3)


def test_orders_are_all_optional() -> None:
    parsed = parse("")
    assert (parsed.trade, parsed.place, parsed.attack, parsed.fortify) == ((), (), (), None)


def test_attack_defaults_as_many_dice_stop_at_1_move_all() -> None:
    (attack,) = parse('[[attack]]\nfrom = "Ukraine"\nto = "Ural"\n').attack
    assert (attack.dice, attack.stop_at, attack.move) == (None, 1, ALL)


def test_trade_best() -> None:
    assert parse('trade = "best"\n').trade == BEST


def test_wild_in_any_case() -> None:
    parsed = parse('trade = [["WILD", "Wild", "alaska"]]\n')
    assert parsed.trade == ((WILD, WILD, "Alaska"),)


def test_fortify_all() -> None:
    parsed = parse('[fortify]\nfrom = "Ural"\nto = "Ukraine"\narmies = "all"\n')
    assert parsed.fortify == Fortify("Ural", "Ukraine", ALL)


@pytest.mark.parametrize(
    ("written", "name"),
    [
        ("ukraine", "Ukraine"),
        ("UKRAINE", "Ukraine"),
        ("north-west territory", "Northwest Territory"),
        ("N. Europe", "Northern Europe"),
        ("easternunitedstates", "Eastern United States"),
        ("E.Australia", "Eastern Australia"),
        ("NWT", "Northwest Territory"),
        ("Mexico", "Central America"),
        ("England", "Great Britain"),
        ("Québec", "Quebec"),
    ],
)
def test_names_ignore_case_spaces_hyphens_dots_and_take_aliases(written: str, name: str) -> None:
    parsed = parse(f'[[place]]\nterritory = "{written}"\narmies = 1\n')
    assert parsed.place == (Place(name, 1),)


def test_unknown_name_suggests_the_nearest() -> None:
    assert problems_of('[[place]]\nterritory = "Ukrane"\narmies = 1\n') == [
        Problem("unknown territory 'Ukrane'; did you mean 'Ukraine'?", 6)
    ]


def test_bad_toml_message_has_its_line() -> None:
    problems = problems_of("[[place]]\nterritory = Ukraine\narmies = 1\n")
    assert len(problems) == 1
    assert problems[0].line == 6
    assert problems[0].message.startswith("this is not valid TOML (")
    with pytest.raises(OrderError, match=r"^orders line 6: this is not valid TOML"):
        parse("[[place]]\nterritory = Ukraine\n")


def test_several_problems_collected_in_one_error_with_their_lines() -> None:
    body = """\
trade = [["Alaska", "Peru"]]
[[place]]
territory = "Ukrane"
armies = 0
[[place]]
territory = "Ural"
armies = "rest"
[[place]]
territory = "Siam"
armies = "rest"
[[attack]]
from = "Ural"
to = "Siberia"
dice = 4
stop_at = 0
move = "some"
colour = "red"
[fortify]
from = "Ural"
to = 3
armies = 2
"""
    with pytest.raises(OrderError) as caught:
        parse(body)
    problems = caught.value.problems
    assert sorted(problems, key=lambda p: p.line or 0) == [
        Problem(
            'each set traded is a list of three cards: trade must be "best" or a list of sets, '
            'e.g. [["Alaska", "Peru", "wild"]]',
            5,
        ),
        Problem("unknown territory 'Ukrane'; did you mean 'Ukraine'?", 7),
        Problem("'armies' must be at least 1, not 0", 8),
        Problem('"rest" may be used once per file', 14),
        Problem("'dice' must be between 1 and 3, not 4", 18),
        Problem("'stop_at' must be at least 1, not 0", 19),
        Problem('\'move\' must be "all", "min" or a number of armies', 20),
        Problem("unknown key 'colour' (known keys here: dice, from, move, stop_at, to)", 21),
        Problem("'to' must be a territory name in quotes", 24),
    ]
    assert str(caught.value).splitlines()[0] == (
        'orders line 5: each set traded is a list of three cards: trade must be "best" or a '
        'list of sets, e.g. [["Alaska", "Peru", "wild"]]'
    )


def test_header_fields_are_required_and_typed() -> None:
    text = 'game = "g"\nturn = "one"\nsecret = 5\n'
    with pytest.raises(OrderError) as caught:
        parse_orders(text, BOARD)
    assert caught.value.problems == [
        Problem("'player' is missing: copy it from your last report", None),
        Problem("'secret' must be text in quotes", 3),
        Problem("'turn' must be a number", 2),
    ]


def test_unknown_top_level_key() -> None:
    assert problems_of('colour = "red"\n') == [
        Problem(
            "unknown key 'colour' (known keys here: attack, draft, fortify, game, place, player, "
            "secret, trade, turn, vacation)",
            5,
        )
    ]


def test_fortify_is_one_table_or_an_array_of_them() -> None:
    one = '[fortify]\nfrom = "Ural"\nto = "Ukraine"\narmies = 1\n'
    assert parse(one.replace("[fortify]", "[[fortify]]")) == parse(one)
    two = parse(one.replace("[fortify]", "[[fortify]]") * 2)
    assert two.fortify == Fortify("Ural", "Ukraine", 1)
    assert two.more_fortify == two.fortifications[1:]
    assert len(two.fortifications) == 2 and two.fortifications[1].line == 9
    assert parse(two.to_toml().split("\n", 4)[4]) == two  # `[[fortify]]` written back
    assert "[[fortify]]" not in parse(one).to_toml()  # one is `[fortify]`, as ever
    assert problems_of("fortify = 3\n") == [
        Problem(
            "fortify is one [fortify] table (or, where a game allows more, [[fortify]] tables)", 5
        )
    ]


def test_place_needs_armies() -> None:
    assert problems_of('[[place]]\nterritory = "Ural"\n') == [
        Problem("'armies' is missing: a number, or \"rest\"", 5)
    ]


def test_to_toml_round_trips_through_parse_orders() -> None:
    parsed = parse(FULL)
    again = parse_orders(parsed.to_toml(), BOARD)
    assert again == parsed
    assert again.to_toml() == parsed.to_toml()
    best = parse('trade = "best"\n[fortify]\nfrom = "Ural"\nto = "Ukraine"\narmies = "all"\n')
    assert parse_orders(best.to_toml(), BOARD) == best


names = st.sampled_from(BOARD.names)
cards = st.sampled_from((*BOARD.names, WILD))
text = st.text(st.characters(codec="utf-8"), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    game=text,
    turn=st.integers(0, 10_000),
    player=text,
    secret=text,
    trade=st.one_of(st.just(BEST), st.lists(st.tuples(cards, cards, cards), max_size=2).map(tuple)),
    place=st.lists(
        st.builds(Place, names, st.one_of(st.integers(1, 50), st.just(REST))), max_size=3
    ).filter(lambda ps: sum(p.armies == REST for p in ps) <= 1),
    attack=st.lists(
        st.builds(
            Attack,
            names,
            names,
            st.one_of(st.none(), st.integers(1, 3)),
            st.integers(1, 9),
            st.one_of(st.just(ALL), st.just(MIN), st.integers(1, 9)),
        ),
        max_size=3,
    ),
    fortify=st.one_of(
        st.none(), st.builds(Fortify, names, names, st.one_of(st.just(ALL), st.integers(1, 9)))
    ),
)
def test_any_orders_round_trip_through_toml(
    game: str,
    turn: int,
    player: str,
    secret: str,
    trade: object,
    place: list[Place],
    attack: list[Attack],
    fortify: Fortify | None,
) -> None:
    original = Orders(
        game,
        turn,
        player,
        secret,
        trade,
        tuple(place),
        tuple(attack),
        fortify,  # type: ignore[arg-type]
    )
    assert parse_orders(original.to_toml(), BOARD) == original


# --- validation --------------------------------------------------------------------------------


def alice_to_play(**changes: object) -> GameState:
    """Alice (3 armies to place) holds Ukraine 5, Ural 3, Siam 1; bob holds the rest."""
    return make_state(
        {"Ukraine": ("alice", 5), "Ural": ("alice", 3), "Siam": "alice"},
        **changes,  # type: ignore[arg-type]
    )


def check(state: GameState, body: str, **header: object) -> list[Problem]:
    return validation.validate(state, parse(body, **header))


PLACE_3 = '[[place]]\nterritory = "Ukraine"\narmies = 3\n'  # lines 5-7


def test_valid_orders_have_no_problems() -> None:
    body = (
        PLACE_3
        + '[[attack]]\nfrom = "Ukraine"\nto = "Southern Europe"\n'
        + '[[attack]]\nfrom = "Southern Europe"\nto = "Egypt"\n'
        + '[fortify]\nfrom = "Ural"\nto = "Ukraine"\narmies = 2\n'
    )
    assert check(alice_to_play(), body) == []


def test_wrong_game() -> None:
    assert check(alice_to_play(), PLACE_3, game="other") == [
        Problem(f"these orders are for game 'other', not '{GAME}'", 1)
    ]


def test_stale_turn() -> None:
    assert check(alice_to_play(turn=5), PLACE_3, turn=4) == [
        Problem(
            "these orders are for turn 4, an earlier turn; the pending turn is 5: start from "
            "the order file in your latest report",
            2,
        )
    ]


def test_future_turn() -> None:
    assert check(alice_to_play(turn=5), PLACE_3, turn=6) == [
        Problem(
            "these orders are for turn 6, a later turn; the pending turn is 5: start from "
            "the order file in your latest report",
            2,
        )
    ]


def test_not_your_turn() -> None:
    assert check(alice_to_play(), PLACE_3, player="bob") == [
        Problem(
            "it is not bob's turn: the game awaits alice; your order file will come with the "
            "report that makes it your turn",
            3,
        )
    ]


def test_unknown_player() -> None:
    assert check(alice_to_play(), PLACE_3, player="mallory") == [
        Problem("there is no player 'mallory' in this game", 3)
    ]


def test_place_on_a_territory_not_yours() -> None:
    body = '[[place]]\nterritory = "China"\narmies = 3\n'
    assert check(alice_to_play(), body) == [Problem("cannot place on 'China': it is not yours", 5)]


def test_too_many_armies() -> None:
    body = PLACE_3 + '[[place]]\nterritory = "Ural"\narmies = 1\n'
    assert check(alice_to_play(), body) == [
        Problem("too many armies placed: 4, but your reinforcements are 3", 10)
    ]


def test_too_few_armies() -> None:
    body = '[[place]]\nterritory = "Ukraine"\narmies = 2\n'
    assert check(alice_to_play(), body) == [
        Problem(
            '2 armies placed, but your reinforcements are 3: place 1 more (armies = "rest" '
            "places whatever is left)",
            7,
        )
    ]


def test_no_placement_at_all() -> None:
    assert check(alice_to_play(), "") == [
        Problem(
            '0 armies placed, but your reinforcements are 3: place 3 more (armies = "rest" '
            "places whatever is left)",
            3,
        )
    ]


def test_rest_that_leaves_nothing() -> None:
    body = PLACE_3 + '[[place]]\nterritory = "Ural"\narmies = "rest"\n'
    assert check(alice_to_play(), body) == [
        Problem(
            '"rest" leaves nothing: the other placements already use 3 of your reinforcements (3)',
            8,
        )
    ]


def test_attack_not_adjacent() -> None:
    body = PLACE_3 + '[[attack]]\nfrom = "Ukraine"\nto = "China"\n'
    assert check(alice_to_play(), body) == [
        Problem("cannot attack 'China' from 'Ukraine': not adjacent", 8)
    ]


def test_attack_from_a_territory_not_yours() -> None:
    body = PLACE_3 + '[[attack]]\nfrom = "China"\nto = "Siam"\n'
    assert check(alice_to_play(), body) == [
        Problem(
            "cannot attack from 'China': it is not yours (and no earlier attack of yours takes it)",
            8,
        ),
        Problem("cannot attack 'Siam': it is already yours", 8),
    ]


def test_attack_from_a_territory_with_one_army() -> None:
    body = PLACE_3 + '[[attack]]\nfrom = "Siam"\nto = "China"\n'
    assert check(alice_to_play(), body) == [
        Problem("cannot attack from 'Siam': it will hold 1 army, and an attack needs at least 2", 8)
    ]


def test_fortify_not_adjacent() -> None:
    body = PLACE_3 + '[fortify]\nfrom = "Ukraine"\nto = "Siam"\narmies = 1\n'
    assert check(alice_to_play(), body) == [
        Problem(
            "cannot fortify 'Siam' from 'Ukraine': not adjacent (this game fortifies between "
            "adjacent territories only)",
            8,
        )
    ]
    connected = alice_to_play(options=Options(fortify=FortifyMode.CONNECTED))
    assert check(connected, body) == []


def test_fortify_from_or_to_a_territory_not_yours() -> None:
    body = PLACE_3 + '[fortify]\nfrom = "Ukraine"\nto = "Afghanistan"\narmies = 1\n'
    assert check(alice_to_play(), body) == [
        Problem("cannot fortify with 'Afghanistan': it is not yours", 8)
    ]


def test_fortify_from_a_territory_to_itself() -> None:
    body = PLACE_3 + '[fortify]\nfrom = "Ural"\nto = "Ural"\narmies = 1\n'
    connected = alice_to_play(options=Options(fortify=FortifyMode.CONNECTED))
    assert check(connected, body) == [Problem("fortify needs two different territories", 8)]
    assert check(alice_to_play(), body) == [
        Problem("fortify needs two different territories", 8),
        Problem(
            "cannot fortify 'Ural' from 'Ural': not adjacent (this game fortifies between "
            "adjacent territories only)",
            8,
        ),
    ]


def test_fortify_more_armies_than_there_are_is_accepted_and_cut_when_resolved() -> None:
    # As after an attack: the engine moves all but one and says so (test_engine).
    body = PLACE_3 + '[fortify]\nfrom = "Ural"\nto = "Ukraine"\narmies = 999\n'
    assert check(alice_to_play(), body) == []


def test_trade_of_cards_not_held() -> None:
    state = alice_to_play(hands={"alice": ("Alaska", "Peru")})
    body = 'trade = [["Alaska", "Peru", "wild"]]\n' + PLACE_3
    assert check(state, body) == [
        Problem("you do not hold all of Alaska, Peru, wild (your hand: Alaska, Peru)", 5)
    ]


def test_trade_not_a_set() -> None:
    state = alice_to_play(hands={"alice": ("Alaska", "Peru", "Greenland")})
    body = 'trade = [["Alaska", "Peru", "Greenland"]]\n' + PLACE_3
    assert check(state, body) == [
        Problem(
            "Alaska, Peru, Greenland is not a set: trade three alike, one of each, or two and "
            "a wild",
            5,
        )
    ]


def test_trade_best_without_a_set_trades_nothing_with_a_note() -> None:
    state = alice_to_play(hands={"alice": ("Alaska", "Peru", "Greenland")})
    assert check(state, 'trade = "best"\n' + PLACE_3) == []
    orders = parse('trade = "best"\n' + PLACE_3)
    assert forecast_with_warnings(state, orders)[-1] == (
        'warning: line 5: trade = "best" but your hand holds no set: nothing is traded this turn'
    )
    new, events = play(state, orders)
    assert not only(events, Traded) and new.player("alice").hand == state.player("alice").hand


def test_a_forced_trade_not_written_is_a_warning_and_pbem_makes_it() -> None:
    hand = ("Alaska", "Peru", "Greenland", "Alberta", "Japan")
    state = alice_to_play(hands={"alice": hand})
    assert check(state, PLACE_3) == []  # never blocking
    orders = parse(PLACE_3)
    chosen = rules.best_set(BOARD, hand, state.owned("alice"), rule=CardRule.ESCALATING)
    assert chosen is not None
    assert forecast_with_warnings(state, orders)[-1] == (
        f"warning: line 5: you hold 5 cards and your orders trade none: with 5 or more a trade "
        f"is required, so pbem trades {', '.join(chosen)} for you (4 armies), placed with your "
        'last placement, on Ukraine; write trade = "best" to say so yourself'
    )
    new, events = play(state, orders)
    assert only(events, Traded) == [Traded("alice", chosen, 4, 1, forced=True, unwritten=True)]
    assert new.armies("Ukraine") == 5 + 3 + 4  # the set's armies went with the last placement
    assert len(new.player("alice").hand) == 2


def test_a_forced_trade_not_written_goes_to_rest_or_to_placements_that_count_it() -> None:
    hand = ("Alaska", "Peru", "Greenland", "Alberta", "Japan")
    state = alice_to_play(hands={"alice": hand})
    rest = '[[place]]\nterritory = "Siam"\narmies = 1\n'
    rest += '[[place]]\nterritory = "Ural"\narmies = "rest"\n'
    assert check(state, rest) == []
    new, _ = play(state, parse(rest))
    assert (new.armies("Siam"), new.armies("Ural")) == (2, 3 + 6)
    assert 'and "rest" places them' in forecast_with_warnings(state, parse(rest))[-1]
    counted = PLACE_3.replace("armies = 3", "armies = 7")
    assert check(state, counted) == []
    assert "your placements already count" in forecast_with_warnings(state, parse(counted))[-1]
    assert play(state, parse(counted))[0].armies("Ukraine") == 12
    wrong = PLACE_3.replace("armies = 3", "armies = 5")
    assert [p.message for p in check(state, wrong)] == [
        '5 armies placed, but your reinforcements are 7: place 2 more (armies = "rest" places '
        "whatever is left)"
    ]
    assert check(state, 'trade = "best"\n[[place]]\nterritory = "Ukraine"\narmies = "rest"\n') == []


def test_setup_turn_only_places() -> None:
    state = alice_to_play(phase=Phase.SETUP, turn=0, to_place={"alice": 10, "bob": 10})
    body = (
        'trade = "best"\n'
        + '[[place]]\nterritory = "Ukraine"\narmies = "rest"\n'
        + '[[attack]]\nfrom = "Ukraine"\nto = "Southern Europe"\n'
    )
    assert check(state, body, turn=0) == [
        Problem("the setup turn only places armies: remove 'trade'", 5),
        Problem("the setup turn only places armies: remove 'attack'", 9),
    ]
    assert check(state, '[[place]]\nterritory = "Siam"\narmies = 10\n', turn=0) == []
    assert check(state, '[[place]]\nterritory = "Siam"\narmies = 10\n', turn=0, player="bob") == [
        Problem("cannot place on 'Siam': it is not yours", 5)
    ]


def test_setup_turn_places_exactly_the_setup_armies() -> None:
    state = alice_to_play(phase=Phase.SETUP, turn=0, to_place={"alice": 10, "bob": 10})
    assert check(state, '[[place]]\nterritory = "Siam"\narmies = 9\n', turn=0) == [
        Problem(
            '9 armies placed, but your setup armies are 10: place 1 more (armies = "rest" '
            "places whatever is left)",
            7,
        )
    ]
    assert check(state, '[[place]]\nterritory = "Siam"\narmies = 11\n', turn=0) == [
        Problem("too many armies placed: 11, but your setup armies are 10", 7)
    ]


def test_orders_built_in_code_validate_like_parsed_ones() -> None:
    state = alice_to_play()
    assert validation.validate(state, orders(state, place=[("Ukraine", "rest")])) == []
    assert validation.validate(state, orders(state, place=[("Ukraine", 1), ("Ural", REST)])) == []


PLAIN_FILE = 'game = "g"\nturn = 3\nplayer = "alice"\nsecret = "s"  # from the report\n\n' + FULL


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        (PLAIN_FILE.replace('trade = [["Alaska", "Peru", "wild"]]\n', ""), True),
        ('game = "g"\n\n# a comment\n  [[ place ]]  \nterritory = "Peru" # here\narmies = 0', True),
        (PLAIN_FILE, True),
        ('trade = [ ["Peru","wild" , "a b"],["Iceland", "Ural", "Siam"] ]  # two sets', True),
        ('trade = [["Peru", "wild", "Siam"],]', False),  # a trailing comma
        ('trade = [\n  ["Peru", "wild", "Siam"]\n]', False),  # a list over several lines
        ('trade = [["Pe]ru", "wild", "Siam"]]', False),  # a bracket in a name
        ("trade = []", False),
        (PLAIN_FILE.replace("\n", "\r\n"), False),
        ('game = "a\\"b"\nturn = 1\n', False),  # an escape
        ("turn = 1\nturn = 2\n", False),  # a key twice: the TOML parser says what is wrong
        ("[fortify]\n[fortify]\n", False),
        ("[[place]]\n[place]\n", False),
        ("place = 1\n[[place]]\n", False),
        ("[[place]\narmies = 1\n", False),
        ("turn = 01\n", False),
        ("turn = 1_000\n", False),
        ('game = "x\u2028"\nturn = 1\n', False),  # a line break for str.splitlines
        ('game = """x"""\n', False),
    ],
)
def test_plain_files_are_read_in_one_pass_as_the_toml_parser_reads_them(
    text: str, plain: bool
) -> None:
    """Files in the plain TOML that Orders.to_toml writes are read without the TOML parser, to
    the same data and key lines; any other file is left to it (and to its error messages)."""
    import tomllib

    read = read_plain(text)
    assert (read is not None) == plain
    if read is not None:
        assert read == (tomllib.loads(text), key_lines(text))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "[[place]]",
                "[[attack]]",
                "[fortify]",
                'territory = "Peru"',
                "armies = 3",
                'armies = "rest"',
                "turn = 2",
                'from = "Peru"',
                "# note",
                "",
                "  ",
                "\t[ fortify ]",
                'game = "g"',
                'trade = [["Peru", "wild", "Ural"]]',
                "trade = [[]]",
            ]
        ),
        max_size=12,
    )
)
def test_any_plain_file_reads_as_the_toml_parser_reads_it(lines: list[str]) -> None:
    import tomllib

    text = "\n".join(lines)
    read = read_plain(text)
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assert read is None
        return
    assert read is None or read == (expected, key_lines(text))
