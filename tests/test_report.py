"""Reports: complete, private, well-formed, self-contained, and overridable per game."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest
from conftest import force_state, new_game, skeleton, write_skeletons

from pbem import __version__
from pbem.core import dice, missions, rules
from pbem.core.events import (
    AttackStopped,
    Conquered,
    DrewCard,
    Eliminated,
    Event,
    Fortified,
    Placed,
    Reinforced,
    Reshuffled,
    Rolled,
    Skipped,
    Traded,
    Won,
)
from pbem.core.order_parsing import parse_orders
from pbem.core.orders import Attack, Orders
from pbem.core.state import Holding, Phase, Player
from pbem.game import processor
from pbem.present import report, story
from pbem.present.text import plural
from pbem.present.view import game_view
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

MODERATOR = ("moderator.txt.j2", "moderator.html.j2")
RESOLUTIONS = 9
"""Setup (0), the setup turn (1), then seven play turns: conquests, cards, a few hands."""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A self-played game: every awaited player sends their report's order file, attacking."""
    directory = new_game(tmp_path_factory.mktemp("played") / "game")
    for _ in range(RESOLUTIONS - 1):
        write_skeletons(directory)
        processor.resolve_game(directory)
    game = read_game(directory)
    assert game.state.phase is Phase.PLAY
    assert any(p.hand for p in game.state.players), "the self-play should have drawn cards"
    return directory


def reports_of(directory: Path, player: str) -> list[tuple[int, str]]:
    """Every file sent to `player` (text, HTML, view, order file), each with its resolution."""
    out = []
    for r in range(RESOLUTIONS):
        for suffix in ("txt", "html", "view.json", "orders.toml"):
            path = report_dir(directory, r) / f"{player}.{suffix}"
            if path.exists():
                out.append((r, path.read_text(encoding="utf-8")))
    return out


def section(text: str, heading: str) -> str:
    """A text report's section: the lines under `heading` and its underline, to the next one."""
    lines = text.splitlines()
    start = lines.index(heading) + 2
    end = next(
        (i - 1 for i in range(start + 1, len(lines)) if re.fullmatch(r"-{3,}", lines[i])),
        len(lines),
    )
    return "\n".join(lines[start:end])


class StrictHTML(HTMLParser):
    """Fails on a closing tag that does not close the innermost open element."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.territories: list[str] = []
        self.in_svg = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attrs(tag, attrs)
        if tag not in self.VOID:
            self.open.append(tag)
        if tag == "svg":
            self.in_svg += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._attrs(tag, attrs)

    def _attrs(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "data-territory":
                assert self.in_svg, f"<{tag} data-territory> outside the map"
                assert value is not None
                self.territories.append(value)

    def handle_endtag(self, tag: str) -> None:
        assert tag not in self.VOID, f"</{tag}> closes a void element"
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1:]}>"
        self.open.pop()
        if tag == "svg":
            self.in_svg -= 1


def parse_html(text: str) -> StrictHTML:
    parser = StrictHTML()
    parser.feed(text)
    parser.close()
    assert parser.open == [], f"unclosed elements: {parser.open}"
    return parser


# --- Privacy ---------------------------------------------------------------------------------


def test_each_report_holds_the_players_own_secret_and_no_other(played: Path) -> None:
    game = read_game(played)
    secrets = {r.name: r.secret for r in game.registrations}
    for player, secret in secrets.items():
        files = reports_of(played, player)
        texts = [t for _, t in files]
        # Every report that asks for orders holds the secret that signs them.
        asking = [t for t in texts if "Your order file for turn" in t or t.startswith("game =")]
        assert asking and all(secret in t for t in asking)
        for other, other_secret in secrets.items():
            if other != player:
                assert not any(other_secret in t for t in texts), f"{other}'s secret leaks"


@pytest.fixture(scope="module")
def mission_played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game of Secret Mission Risk for four, played a few resolutions as `played` is."""
    directory = tmp_path_factory.mktemp("missions") / "game"
    new_game(directory, "alice,bob,carol,dave", missions=True)
    for _ in range(5):
        write_skeletons(directory)
        processor.resolve_game(directory)
    assert read_game(directory).state.phase is Phase.PLAY
    return directory


def mission_texts(p: Player) -> set[str]:
    """Everything that would give a player's mission away: its card and what it asks."""
    assert p.mission is not None
    now = missions.current(p)
    assert now is not None
    return {p.mission, missions.Mission.parse(p.mission).describe(), now.describe()}


def test_no_report_shows_another_players_mission_before_the_end(mission_played: Path) -> None:
    game = read_game(mission_played)
    players = game.state.players
    for p in players:
        files = reports_of(mission_played, p.name)
        # text, HTML and view of resolutions 0-5, and the order file of those that await them
        asked = sum(
            (report_dir(mission_played, r) / f"{p.name}.orders.toml").exists() for r in range(6)
        )
        assert asked >= 1 and len(files) == 6 * 3 + asked
        own = mission_texts(p)
        for r, text in files:
            if not text.lstrip().startswith(("game =", "{")):
                assert "Your secret mission:" in text, f"{p.name}'s own mission, resolution {r}"
            for other in players:
                if other.name == p.name:
                    continue
                for secret in mission_texts(other) - own:
                    assert secret not in text, f"{other.name}'s mission in {p.name}'s report {r}"
        view = json.loads((report_dir(mission_played, 5) / f"{p.name}.view.json").read_text())
        assert [e["name"] for e in view["players"] if "mission" in e] == [p.name]
        progress = view["players"][p.seat]["mission"]["progress"]
        assert progress == missions.progress(game.state, p.name)


def bob_eliminated_by_carol(directory: Path, dave_holds: int) -> Path:
    """A game of missions for four in which carol, whose turn it is, takes bob's last
    territory: dave's card ("destroy bob") falls back to 24 territories, and dave holds
    `dave_holds` (24: he wins at once, on carol's turn). Every player but bob holds cards.
    Returns the folder of that resolution's reports."""
    new_game(directory, "alice,bob,carol,dave", missions=True)
    write_skeletons(directory)
    processor.resolve_game(directory)
    state = read_game(directory).state
    assert state.current_player.name == "carol"
    rest = [t for t in state.board.names if t not in ("Madagascar", "East Africa")]
    owners = {"Madagascar": Holding("bob", 1), "East Africa": Holding("carol", 30)}
    owners |= {t: Holding("dave" if i < dave_holds else "alice", 1) for i, t in enumerate(rest)}
    cards = {"alice": "continents:Asia,Africa", "bob": "territories:24", "carol": "destroy:alice"}
    cards["dave"] = "destroy:bob"
    hands = {"alice": state.deck[0:2], "bob": (), "carol": state.deck[2:4], "dave": state.deck[4:6]}
    players = tuple(replace(p, mission=cards[p.name], hand=hands[p.name]) for p in state.players)
    force_state(
        directory,
        replace(
            state,
            players=players,
            territories={t: owners[t] for t in state.board.names},
            deck=state.deck[6:],
        ),
    )
    header = skeleton(directory, "carol").split("\n\n")[0]
    (directory / "orders" / "carol.toml").write_text(
        header + '\n\n[[place]]\nterritory = "East Africa"\narmies = "rest"\n\n'
        '[[attack]]\nfrom = "East Africa"\nto = "Madagascar"\n'
    )
    processor.resolve_game(directory)
    game = read_game(directory)
    assert not game.state.player("bob").alive and game.state.player("dave").mission_fallback
    return report_dir(directory, game.state.resolution - 1)


def test_a_mission_falling_back_is_told_to_its_holder_only(tmp_path: Path) -> None:
    folder = bob_eliminated_by_carol(tmp_path / "game", dave_holds=20)
    assert read_game(tmp_path / "game").state.phase is Phase.PLAY

    def words(path: Path) -> str:  # the text as one line: a sentence wraps anywhere
        return " ".join(path.read_text().split())

    told = "Your mission to destroy bob became: occupy 24 territories (bob was eliminated by"
    assert told in words(folder / "dave.txt")
    assert "Your mission to destroy bob became" in words(folder / "dave.html")
    state = read_game(tmp_path / "game").state
    for name in ("alice", "bob", "carol"):
        for suffix in ("txt", "html", "view.json"):
            text = words(folder / f"{name}.{suffix}")
            assert "destroy bob" not in text and "dave's mission" not in text, (name, suffix)
            assert "fell_back" not in text and "eliminate bob" not in text, (name, suffix)
        view = json.loads((folder / f"{name}.view.json").read_text())
        assert [e["name"] for e in view["players"] if "mission" in e] == [name]
        shown = " ".join(processor.show_table(state, game_view(state, name)).split())
        assert "destroy bob" not in shown and "dave's mission" not in shown


def test_after_the_game_each_view_still_holds_its_players_hand_only(tmp_path: Path) -> None:
    folder = bob_eliminated_by_carol(tmp_path / "game", dave_holds=24)
    state = read_game(tmp_path / "game").state
    assert state.phase is Phase.OVER and state.winner == "dave"
    assert all(state.player(p).hand for p in ("alice", "carol", "dave"))
    for p in state.players:
        view = json.loads((folder / f"{p.name}.view.json").read_text())
        assert [e["name"] for e in view["players"] if "hand" in e] == [p.name]
        # every mission is told at the end, never a hand
        assert [e["name"] for e in view["players"] if "mission" in e] == [
            q.name for q in state.players
        ]
        assert [e["name"] for e in game_view(state, p.name)["players"] if "hand" in e] == [p.name]
    everyone = game_view(state, None)["players"]
    assert [e["name"] for e in everyone if "hand" in e] == [p.name for p in state.players]


def test_the_moderator_sees_every_mission_and_show_player_only_their_own(
    mission_played: Path,
) -> None:
    game = read_game(mission_played)
    overview = (report_dir(mission_played, 5) / "_moderator.txt").read_text()
    assert "Secret missions" in overview
    table = processor.show_table(game.state, game_view(game.state, None))
    for p in game.state.players:
        current = missions.current(p)
        assert current is not None
        assert current.describe() in overview and f"{p.name}'s mission: " in table
        own = processor.show_table(game.state, game_view(game.state, p.name))
        assert f"Your mission: {current.describe()}" in own
        assert "'s mission" not in own


def test_each_report_shows_the_players_own_hand_and_no_other(played: Path) -> None:
    game = read_game(played)
    last = report_dir(played, RESOLUTIONS - 1)
    for p in game.state.players:
        text = (last / f"{p.name}.txt").read_text()
        hand = [line.split(" (")[0].strip() for line in section(text, "Your hand").splitlines()]
        for card in p.hand:
            assert card in hand
        html = (last / f"{p.name}.html").read_text()
        shown = re.findall(r'<div class="card">([^<]*)<div class="kind">', html)
        assert shown == list(p.hand)
        view = json.loads((last / f"{p.name}.view.json").read_text())
        for entry in view["players"]:
            assert ("hand" in entry) == (entry["name"] == p.name)


def test_another_players_card_draw_is_told_without_the_card(played: Path) -> None:
    game = read_game(played)
    draws = [
        (r, e)
        for r in range(RESOLUTIONS)
        for e in read_history(played, r).events
        if isinstance(e, DrewCard)
    ]
    assert draws
    for r, draw in draws:
        for p in game.state.players:
            text = (report_dir(played, r) / f"{p.name}.txt").read_text()
            named = f"{draw.player} drew a card: {draw.card}."
            if p.name == draw.player:
                assert named in text
            else:
                assert named not in text and f"{draw.player} drew a card." in text


def test_no_report_holds_the_seed_the_hidden_key_or_the_deck(played: Path) -> None:
    game = read_game(played)
    forbidden = {
        "seed": game.seed.hex(),
        "hidden key": dice.hidden_key(game.seed).hex(),
    }
    deck = game.state.deck
    for p in game.state.players:
        for r, text in reports_of(played, p.name):
            for what, value in forbidden.items():
                assert value not in text.lower(), f"the {what} is in a report of resolution {r}"
            for i in range(len(deck) - 2):
                for sep in (", ", '", "', "\n  "):
                    assert sep.join(deck[i : i + 3]) not in text, "the deck's order leaks"
            assert '"deck"' not in text


def test_the_hidden_key_is_revealed_when_the_game_is_over(played: Path) -> None:
    game = read_game(played)
    winner = game.state.players[0].name
    over = replace(game, state=replace(game.state, phase=Phase.OVER, winner=winner))
    text = report.render(over, RESOLUTIONS, [Won(winner)], winner)
    assert dice.hidden_key(game.seed).hex() in text
    assert f"{winner} has won. Congratulations!" in text
    assert "Your order file" not in text


# --- Contents --------------------------------------------------------------------------------


def test_text_report_sections_come_in_order(played: Path) -> None:
    game = read_game(played)
    player = game.state.current_player.name
    text = (report_dir(played, RESOLUTIONS - 1) / f"{player}.txt").read_text()
    headings = [
        f"Turn {game.state.turn} is yours",
        "What happened",
        "The board",
        "Players",
        "Your hand",
        "Your next reinforcements",
        f"Your order file for turn {game.state.turn}",
        "Dice check",
    ]
    positions = [text.index(h) for h in headings]
    assert positions == sorted(positions)


def test_a_waiting_player_is_told_whose_turn_is_next_and_when_theirs_is(played: Path) -> None:
    game = read_game(played)
    state = game.state
    waiting = state.players[(state.current + 1) % len(state.players)].name
    text = (report_dir(played, RESOLUTIONS - 1) / f"{waiting}.txt").read_text()
    assert f"Turn {state.turn} is next: {state.current_player.name} plays." in text
    assert f"Your next turn is turn {state.turn + 1}" in text
    assert "Its order file will come with the report that makes it your turn" in text
    # No order file for a later turn: sent now, it could only be refused.
    assert not (report_dir(played, RESOLUTIONS - 1) / f"{waiting}.orders.toml").exists()
    assert "Your order file for turn" not in text


def test_the_board_marks_own_territories_and_held_continents(played: Path) -> None:
    game = read_game(played)
    state = game.state
    name = state.current_player.name
    text = (report_dir(played, RESOLUTIONS - 1) / f"{name}.txt").read_text()
    board = section(text, "The board")
    for t in state.board.names:
        line = next(line for line in board.splitlines() if line[4:].startswith(t + " "))
        assert line.startswith("  * ") == (state.owner(t) == name)
        assert line.split()[-1] == str(state.armies(t))
    for c in state.board.continents.values():
        holders = {state.owner(t) for t in c.territories}
        if len(holders) == 1:
            who = "you" if name in holders else holders.pop()
            assert f"{c.name} (+{c.bonus}): held by {who}" in board


def test_players_table_and_reinforcements_come_from_the_view(played: Path) -> None:
    game = read_game(played)
    state = game.state
    name = state.current_player.name
    text = (report_dir(played, RESOLUTIONS - 1) / f"{name}.txt").read_text()
    table = section(text, "Players")
    for p in game_view(state, name)["players"]:
        row = next(line for line in table.splitlines() if line[2:].startswith(p["name"] + " "))
        assert row[2:].split()[1:5] == [
            str(p["territories"]),
            str(p["armies"]),
            str(p["cards"]),
            str(p["reinforcements"]),
        ]
    base = rules.reinforcement(state, name)
    assert f"{base.total:3d}  in all, before cards" in section(text, "Your next reinforcements")


def test_the_order_file_is_ready_to_send_as_it_is(played: Path) -> None:
    game = read_game(played)
    name = game.state.current_player.name
    folder = report_dir(played, RESOLUTIONS - 1)
    orders = folder / f"{name}.orders.toml"
    assert orders.read_text() == skeleton(played, name)
    assert orders.read_text() in (folder / f"{name}.txt").read_text()
    submission = processor.check_submission(game, orders)
    assert submission.accepted, submission.messages()
    parsed = parse_orders(orders.read_text(), game.state.board)
    assert parsed.place[0].armies == "rest"
    text = orders.read_text()
    assert "# [[attack]]" in text and "# [fortify]" in text


def test_the_dice_check_shows_key_previous_key_commitment_and_rolls(played: Path) -> None:
    game = read_game(played)
    for r in range(RESOLUTIONS):
        text = (report_dir(played, r) / "alice.txt").read_text()
        key = game.key(r).hex()
        assert key in text
        assert dice.chain_key(game.seed, r, game.chain_length).hex() in text
        assert game.commitment in text
        check = text.split("it prints the previous key):\n", 1)[1].splitlines()[:3]
        assert check[1].strip() == key + "\\"
        rolls = read_history(played, r).rolls()
        if rolls:
            assert f"Rolls, attacker/defender as rolled ({len(rolls)}):" in text


def test_the_key_check_pasted_into_a_shell_prints_the_previous_key(played: Path) -> None:
    game = read_game(played)
    text = (report_dir(played, 3) / "alice.txt").read_text()
    check = "\n".join(text.split("it prints the previous key):\n", 1)[1].splitlines()[:3])
    assert all(len(line) <= 78 for line in check.splitlines())
    shell = shutil.which("sh")
    if shell is None:
        pytest.skip("no shell to paste into")
    printed = subprocess.run(
        [shell, "-c", check], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert printed == dice.chain_key(game.seed, 3, game.chain_length).hex()


def test_a_deadline_is_shown_only_when_the_game_has_one(played: Path) -> None:
    game = read_game(played)
    env = report.environment(played.resolve())
    for player, names in (("alice", ("report.txt.j2", "report.html.j2")), (None, MODERATOR)):
        context = report.report_context(game, RESOLUTIONS - 1, (), player)
        for name in names:
            assert "due by" not in env.get_template(name).render(context)
        context["deadline"] = "Fri 7 May 2027, 18:00 UTC, in 5 hours"
        for name in names:
            assert "Fri 7 May 2027, 18:00 UTC, in 5 hours" in env.get_template(name).render(context)


# --- The story -------------------------------------------------------------------------------


def _story(events: list[Event], viewer: str | None, armies: dict[str, int]) -> list[str]:
    lines = []
    for item in report.tell(events, viewer, armies):
        lines.append(item.text)
        lines += [
            f"  {r.attacker}/{r.defender} {r.losses} {r.source_left}:{r.target_left}"
            for r in item.rolls
        ]
        if item.result:
            lines.append("  " + item.result)
    return lines


def test_a_battle_is_told_with_both_sides_dice_losses_and_the_conquest() -> None:
    events: list[Event] = [
        Rolled("alice", "Ukraine", "Ural", "bob", (6, 3, 1), (5, 2), 0, 2),
        Rolled("alice", "Ukraine", "Ural", "bob", (2, 2, 1), (4,), 1, 0),
        Rolled("alice", "Ukraine", "Ural", "bob", (6, 5, 5), (1,), 0, 1),
        Conquered("alice", "Ukraine", "Ural", "bob", 3),
    ]
    assert _story(events, "carol", {"Ukraine": 8, "Ural": 3}) == [
        "alice attacked Ural (bob) from Ukraine: 8 armies against 3.",
        "  6 3 1/5 2 bob loses 2 8:1",
        "  2 2 1/4 alice loses 1 7:1",
        "  6 5 5/1 bob loses 1 7:0",
        "  alice took Ural, moving in 3 (4 stay in Ukraine).",
    ]


def test_a_battle_says_when_its_first_roll_has_fewer_dice_than_asked() -> None:
    events: list[Event] = [
        Rolled("alice", "Ukraine", "Ural", "bob", (6, 3), (5,), 0, 1),
        Conquered("alice", "Ukraine", "Ural", "bob", 2),
    ]
    three = Orders("g", 3, "alice", "s", attack=(Attack("Ukraine", "Ural", dice=3),))
    told = report.tell(events, "bob", {"Ukraine": 3, "Ural": 1}, [three])
    assert told[0].text == (
        "alice attacked Ural (bob) from Ukraine: 3 armies against 1. 2 dice, not the 3 asked: "
        "with 3 armies there, one must stay behind."
    )
    as_many = Orders("g", 3, "alice", "s", attack=(Attack("Ukraine", "Ural"),))
    told = report.tell(events, "bob", {"Ukraine": 3, "Ural": 1}, [as_many])
    assert told[0].text == "alice attacked Ural (bob) from Ukraine: 3 armies against 1."


def test_each_battle_is_paired_with_its_own_attack_order() -> None:
    # The first order is skipped; the battle is the second's, which asked for 3 dice.
    attacks = (Attack("Ukraine", "Ural", stop_at=5), Attack("Ukraine", "Ural", dice=3))
    events: list[Event] = [
        Skipped("alice", "attack Ural from Ukraine", "Ukraine has 3 armies (stop at 5)"),
        Rolled("alice", "Ukraine", "Ural", "bob", (6, 3), (5,), 0, 1),
        Conquered("alice", "Ukraine", "Ural", "bob", 2),
    ]
    assert story.dice_asked(events, attacks) == {1: 3}
    told = report.tell(
        events, None, {"Ukraine": 3, "Ural": 1}, [Orders("g", 3, "a", "s", attack=attacks)]
    )
    assert "2 dice, not the 3 asked" in told[1].text


def test_a_stopped_attack_says_why_and_what_is_left() -> None:
    events: list[Event] = [
        Rolled("alice", "Peru", "Brazil", "bob", (1, 1), (6, 6), 2, 0),
        AttackStopped("alice", "Peru", "Brazil", "Peru is down to 3 (stop at 3)"),
    ]
    story = _story(events, "alice", {"Peru": 5, "Brazil": 4})
    assert story[-1] == "  alice stopped: Peru is down to 3 (stop at 3); Brazil holds with 4."


def test_the_armies_before_a_resolution_are_worked_back_from_the_state(played: Path) -> None:
    for r in range(2, RESOLUTIONS):
        after = json.loads((report_dir(played, r) / "alice.view.json").read_text())
        before = json.loads((report_dir(played, r - 1) / "alice.view.json").read_text())
        game = read_game(played)
        state = replace(
            game.state,
            territories={
                t: replace(game.state.territories[t], armies=after["territories"][t]["armies"])
                for t in game.state.board.names
            },
        )
        worked_back = report.armies_before(state, read_history(played, r).events)
        assert worked_back == {t: h["armies"] for t, h in before["territories"].items()}


def test_every_kind_of_event_reads_as_a_sentence() -> None:
    events: list[Event] = [
        Reinforced("alice", 5, 14, 4, ("Australia",), 2),
        Traded("alice", ("Peru", "Ural", "wild"), 6, 2),
        Placed("alice", "Peru", 2, "card"),
        Placed("alice", "Siam", 4),
        Placed("alice", "Indonesia", 4),
        Skipped("alice", "attack Japan from Siam", "you do not hold Siam"),
        Eliminated("bob", "alice", 3),
        Traded("alice", ("Egypt", "Congo", "Japan"), 8, 3, forced=True),
        Placed("alice", "Ural", 8, "elimination"),
        Fortified("alice", "Siam", "China", 3),
        Reshuffled("alice", 9),
        DrewCard("alice", "Congo"),
        Won("alice"),
    ]
    assert _story(events, "carol", {}) == [
        "Turn 5: alice receives 6 armies (4 for 14 territories, 2 for holding Australia).",
        "alice traded Peru, Ural, wild for 6 armies (set 2 of the game).",
        "alice placed 2 on Peru for its card.",
        "alice placed 8 armies: 4 on Siam and 4 on Indonesia.",
        "bob is out of the game, eliminated by alice, who takes 3 cards.",
        "alice traded Egypt, Congo, Japan for 8 armies (set 3 of the game) "
        "(forced, after an elimination).",
        "alice placed 8 from the forced trade: 8 on Ural.",
        "alice moved 3 from Siam to China.",
        "The draw pile was empty when alice was to draw: the 9 traded cards set aside were "
        "shuffled into a new draw pile.",
        "alice drew a card.",
        "alice has won the game!",
    ]
    assert "alice drew a card: Congo." in _story(events, "alice", {})
    assert "alice drew a card: Congo." in _story(events, None, {})


def test_a_skipped_order_is_told_to_its_player_and_the_moderator_only() -> None:
    events: list[Event] = [
        Skipped("ben", "attack Alberta from Alaska", "you do not hold Alaska"),
        Skipped("ben", "attack Peru from Brazil", "you already hold Peru"),
    ]
    assert _story(events, "dan", {}) == []
    assert _story(events, "ben", {}) == [
        "Your order to attack Alberta from Alaska was skipped: you do not hold Alaska.",
        "Your order to attack Peru from Brazil was skipped: you already hold Peru.",
    ]
    assert _story(events, None, {}) == [
        "ben's order to attack Alberta from Alaska was skipped: ben does not hold Alaska.",
        "ben's order to attack Peru from Brazil was skipped: ben already holds Peru.",
    ]


# --- HTML: well-formed, self-contained, escaped, with the map ---------------------------------


def test_html_reports_are_well_formed_and_self_contained(played: Path) -> None:
    for r in range(RESOLUTIONS):
        folder = report_dir(played, r)
        for path in sorted(folder.glob("*.html")):
            html = path.read_text()
            parse_html(html)
            lowered = html.lower()
            for outside in ("http", "src=", "<link", "<script", "@import", "url("):
                assert outside not in lowered, f"{path.name} reaches outside: {outside}"


def test_the_map_has_one_shape_per_territory(played: Path) -> None:
    game = read_game(played)
    html = (report_dir(played, RESOLUTIONS - 1) / "alice.html").read_text()
    parser = parse_html(html)
    assert len(parser.territories) == 42
    assert sorted(parser.territories) == sorted(game.state.board.names)


def test_the_map_outlines_own_territories_and_marks_this_turns_conquests(played: Path) -> None:
    game = read_game(played)
    r = RESOLUTIONS - 1
    taken = {e.target for e in read_history(played, r).events if isinstance(e, Conquered)}
    for p in game.state.players:
        shapes = report.map_shapes(game.state, p.name, taken)
        mine = {t.name for t in shapes["territories"] if t.mine}
        assert mine == set(game.state.owned(p.name))
        assert {t.name for t in shapes["territories"] if t.taken} == taken
        html = (report_dir(played, r) / f"{p.name}.html").read_text()
        assert html.count('stroke="#1c1c1c" stroke-width="3.5"') == len(mine)
        assert html.count('stroke-dasharray="4 3"') == len(taken)


def test_the_alaska_kamchatka_border_leaves_both_edges_of_the_map(played: Path) -> None:
    state = read_game(played).state
    shapes = report.map_shapes(state, None)
    wraps = [line for line in shapes["lines"] if line.kind == "wrap"]
    assert sorted(line.x2 for line in wraps) == [0, state.board.width]
    alaska, kamchatka = (state.board.territories[t].position for t in ("Alaska", "Kamchatka"))
    assert {(line.x1, line.y1) for line in wraps} == {alaska, kamchatka}
    assert len(shapes["lines"]) == len(state.board.borders()) + 1


def test_player_supplied_text_is_escaped_in_html(played: Path) -> None:
    game = read_game(played)
    evil = "<script>alert('x')</script>"
    hostile = replace(game, state=replace(game.state, game=f"game {evil}"))
    events: list[Event] = [Skipped("alice", f"attack {evil}", f"because {evil}")]
    for player in ("alice", None):
        html = report.render(hostile, 3, events, player, "html", rejected=[f"orders: {evil}"])
        assert "<script" not in html
        assert "&lt;script&gt;" in html
        parse_html(html)


# --- Templates: per-game override, strictness ------------------------------------------------


def test_a_game_can_override_a_template(tmp_path: Path) -> None:
    directory = tmp_path / "game"
    (directory / "templates").mkdir(parents=True)
    (directory / "templates" / "report.txt.j2").write_text(
        "Dear {{ player }}, turn {{ view.turn }}.\n"
    )
    new_game(directory)
    assert (report_dir(directory, 0) / "alice.txt").read_text() == "Dear alice, turn 0.\n"
    assert "<svg" in (report_dir(directory, 0) / "alice.html").read_text()


def test_a_typo_in_a_template_fails_loudly(tmp_path: Path) -> None:
    directory = tmp_path / "game"
    (directory / "templates").mkdir(parents=True)
    (directory / "templates" / "report.txt.j2").write_text("Dear {{ playr }}.\n")
    with pytest.raises(
        report.TemplateProblem, match=r"report.txt.j2 line 1: .*'playr' is undefined"
    ):
        new_game(directory)
    assert sorted(p.name for p in directory.iterdir()) == [".lock", "templates"]


def test_every_builtin_template_ships_with_the_package() -> None:
    folder = report.builtin_templates()
    for name in (
        "report.txt.j2",
        "report.html.j2",
        "moderator.txt.j2",
        "moderator.html.j2",
        "base.html.j2",
        "macros.html.j2",
    ):
        assert (folder / name).is_file()
    pyproject = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    assert '"templates" = "pbem/templates"' in pyproject


def test_html_templates_autoescape_and_are_strict() -> None:
    env = report.environment(None)
    assert env.undefined is jinja2.StrictUndefined
    assert env.get_template("macros.html.j2").module is not None
    auto = env.autoescape
    assert callable(auto) and auto("report.html.j2") and not auto("report.txt.j2")


# --- The moderator's overview ------------------------------------------------------------------


def test_the_moderators_overview_lists_hands_awaited_players_and_rejections(
    tmp_path: Path,
) -> None:
    directory = new_game(tmp_path / "game")
    write_skeletons(directory)
    (directory / "orders" / "zz-broken.toml").write_text('game = "test-game"\nturn = [\n')
    outcome = processor.resolve_game(directory)
    assert outcome.rejected
    folder = report_dir(directory, 1)
    text = (folder / "_moderator.txt").read_text()
    html = (folder / "_moderator.html").read_text()
    game = read_game(directory)
    assert "Rejected order files" in text and "zz-broken.toml" in text
    assert "zz-broken.toml" in html
    assert f"awaiting orders from {game.state.current_player.name}" in text
    for p in game.state.players:
        assert p.name in text
    parse_html(html)


def test_every_player_gets_text_html_view_and_the_next_player_an_order_file(
    played: Path,
) -> None:
    game = read_game(played)
    folder = report_dir(played, RESOLUTIONS - 1)
    for p in game.state.players:
        for suffix in ("txt", "html", "view.json"):
            assert (folder / f"{p.name}.{suffix}").is_file()
        awaited = p.name in game.state.awaiting()
        assert (folder / f"{p.name}.orders.toml").is_file() == awaited
        text = (folder / f"{p.name}.txt").read_text()
        assert ("Your order file for turn" in text) == awaited
        if not awaited and p.alive:
            assert "Its order file will come with the report that makes it your turn" in text
        view = json.loads((folder / f"{p.name}.view.json").read_text())
        assert view["dice"]["key"] == game.key(RESOLUTIONS - 1).hex()
    assert (folder / "_moderator.txt").is_file()


def test_reports_are_the_same_byte_for_byte_when_rendered_again(played: Path) -> None:
    game = read_game(played)
    r = RESOLUTIONS - 1
    events = read_history(played, r).events
    for p in game.state.players:
        for kind in ("txt", "html"):
            again = report.render(game, r, events, p.name, kind)
            assert again == (report_dir(played, r) / f"{p.name}.{kind}").read_text()


def test_a_two_player_game_shows_the_neutral(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game", "alice,bob")
    text = (report_dir(directory, 0) / "alice.txt").read_text()
    assert re.search(r"^  neutral +14 +\d+$", text, re.MULTILINE)
    html = (report_dir(directory, 0) / "alice.html").read_text()
    assert "neutral" in html
    parse_html(html)


def test_an_eliminated_player_follows_the_game_without_an_order_file(played: Path) -> None:
    game = read_game(played)
    state = game.state
    out = next(p for p in state.players if p.name != state.current_player.name)
    winner = state.current_player.name
    territories = {
        t: replace(h, owner=winner) if h.owner == out.name else h
        for t, h in state.territories.items()
    }
    players = tuple(replace(p, alive=False, hand=()) if p is out else p for p in state.players)
    dead = replace(game, state=replace(state, territories=territories, players=players))
    events: list[Event] = [Eliminated(out.name, winner, 0)]
    text = report.render(dead, RESOLUTIONS, events, out.name)
    assert "You are out of the game" in text and "Your order file" not in text
    assert f"{out.name} is out of the game, eliminated by {winner}" in text
    assert "No cards yet" not in text and "  No cards.\n" in text
    html = report.render(dead, RESOLUTIONS, events, out.name, "html")
    parse_html(html)
    assert "No cards yet" not in html and "<p>No cards.</p>" in html


def test_plurals_one_territory_one_roll_one_message() -> None:
    one = Reinforced("ann", 4, 1, 3, (), 0)
    assert "3 for 1 territory)" in report.narrate(one, None)
    assert plural(1, "territory", "territories") == "1 territory"
    assert plural(2, "territory", "territories") == "2 territories"
    assert plural(1, "roll") == "1 roll" and plural(0, "roll") == "0 rolls"


def _rendered_with_cache(
    directory: Path, cache: jinja2.BytecodeCache | None, own: Path | None = None
) -> dict[str, str]:
    """The reports rendered by a fresh environment (not the shared one) with `cache`: the
    plain one of the built-in templates, or the sandbox of a game with templates in `own`."""
    game = read_game(directory)
    env = report._environment.__wrapped__(own, None, "en")
    env.bytecode_cache = cache
    return {
        f"{name} {player}": report.render_template(
            env, name, report.report_context(game, 1, (), player)
        )
        for name in ("report.txt.j2", "report.html.j2")
        for player in ("alice", "bob")
    }


def test_compiled_templates_kept_between_runs_render_the_same_reports(
    playing_dir: Path, tmp_path: Path
) -> None:
    from pbem.present.bytecode import template_cache

    folder = tmp_path / "cache"
    folder.mkdir()
    plain = _rendered_with_cache(playing_dir, None)
    assert _rendered_with_cache(playing_dir, template_cache(str(folder))) == plain
    kept = list(folder.iterdir())
    assert kept and all(p.name.startswith("__pbem-") for p in kept)
    assert _rendered_with_cache(playing_dir, template_cache(str(folder))) == plain  # read back


def test_templates_compiled_for_the_sandbox_are_kept_apart_from_the_builtin_ones(
    playing_dir: Path, tmp_path: Path
) -> None:
    """The sandbox compiles a template to other code than the plain environment (every call
    and attribute goes through its checks): one cache folder holds both, each read by its own."""
    from pbem.present.bytecode import template_cache

    folder, own = tmp_path / "cache", tmp_path / "templates"
    folder.mkdir()
    own.mkdir()
    plain = _rendered_with_cache(playing_dir, None)
    for _ in range(2):  # written, then read back
        for sandboxed in (True, False):
            cache = template_cache(str(folder), sandboxed=sandboxed)
            assert _rendered_with_cache(playing_dir, cache, own if sandboxed else None) == plain
    names = {p.name.rsplit("_", 1)[0] for p in folder.iterdir()}
    assert names == {f"__pbem-{__version__}-limited", f"__pbem-{__version__}-builtin"}


def test_a_damaged_or_missing_template_cache_only_costs_time(
    playing_dir: Path, tmp_path: Path
) -> None:
    from pbem.present.bytecode import template_cache

    folder = tmp_path / "cache"
    folder.mkdir()
    plain = _rendered_with_cache(playing_dir, None)
    _rendered_with_cache(playing_dir, template_cache(str(folder)))
    for p in folder.iterdir():
        p.write_bytes(b"j2\x00damaged")
    assert _rendered_with_cache(playing_dir, template_cache(str(folder))) == plain
    gone = template_cache(str(tmp_path / "no" / "such" / "folder"))
    assert _rendered_with_cache(playing_dir, gone) == plain
