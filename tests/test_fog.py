"""Fog of war: what a player sees, and battle keys committed to before a turn that let a player
verify the dice they are told of without learning any other (docs/fog.md)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import write_bot_orders
from helpers import BOARD, make_state, orders

from pbem.core import dice, fog, fog_events, validation
from pbem.core.engine import Randomness, resolve
from pbem.core.events import AttackStopped, Conquered, Rolled, Skipped
from pbem.core.orders import REST, Attack, Orders
from pbem.core.state import DiceRule, FogLevel, Options, Phase
from pbem.present.view import ViewError, game_view, state_from_view


def test_a_player_sees_their_territories_their_team_mates_and_those_next_to_them() -> None:
    state = make_state({"Alaska": "alice", "Peru": "carol"}, players=["alice", "bob", "carol"])
    near = {"Alaska", "Northwest Territory", "Alberta", "Kamchatka"}
    assert fog.sight(state, "alice") == near
    teams = make_state(
        {"Alaska": "alice", "Peru": "carol"},
        players=["alice", "bob", "carol", "dave"],
        options=Options(teams=(("alice", "carol"), ("bob", "dave"))),
    )
    assert fog.sight(teams, "alice") == near | {"Peru", "Venezuela", "Brazil", "Argentina"}
    assert fog.sight(teams, "carol") == fog.sight(teams, "alice")


def test_every_directed_pair_of_neighbours_has_eight_labels_in_board_order() -> None:
    labels = fog.labels(BOARD)
    assert len(labels) == len(set(labels)) == 2 * len(BOARD.borders()) * 8
    assert labels[:2] == ("Alaska|Northwest Territory|1", "Alaska|Northwest Territory|2")


def root_of(leaf: bytes, index: int, size: int, path: tuple[bytes, ...]) -> bytes | None:
    try:
        return fog.path_root(leaf, index, size, path)
    except ValueError:  # a path of another length than the leaf's
        return None


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 64, 100])
def test_each_leaf_and_its_path_lead_to_the_root_and_nothing_else_does(size: int) -> None:
    leaves = [hashlib.sha256(b"%d" % i).digest() for i in range(size)]
    root = fog.merkle_root(leaves)
    for index, leaf in enumerate(leaves):
        path = fog.merkle_path(leaves, index)
        assert fog.path_root(leaf, index, size, path) == root
        assert root_of(b"\x00" * 32, index, size, path) != root
        if size > 1:
            assert root_of(leaf, (index + 1) % size, size, path) != root


def test_a_battle_key_checks_against_the_root_of_its_resolution_only() -> None:
    key, other = bytes(32), bytes([1] * 32)
    root = fog.battle_root(key, BOARD)
    name = fog.label("Ukraine", "Ural", 2)
    battle, index, path = fog.battle_proof(key, BOARD, name)
    assert battle == fog.battle_key(key, name)
    assert fog.check_battle(BOARD, name, battle, index, path, root)
    assert not fog.check_battle(BOARD, name, battle, index, path, fog.battle_root(other, BOARD))
    assert not fog.check_battle(BOARD, name, bytes(32), index, path, root)  # a key made up
    wrong = fog.label("Ukraine", "Ural", 3)
    assert not fog.check_battle(BOARD, wrong, battle, index, path, root)  # another label
    assert not fog.check_battle(BOARD, name, battle, index, path[:-1], root)
    assert not fog.check_battle(BOARD, name, battle, index, (*path, path[0]), root)
    assert len(path) == (len(fog.labels(BOARD)) - 1).bit_length()


# --- each battle rolls from its own key -------------------------------------------------------

FOG = Options(fog=FogLevel.LIGHT)
KEY = bytes(range(32))
RANDOMNESS = Randomness(KEY, bytes(32))


def battles(events: object) -> list[list[tuple[int, ...]]]:
    """The rolls of each battle of a turn, in order (a battle ends with its stop or conquest)."""
    out: list[list[tuple[int, ...]]] = [[]]
    for e in events:  # type: ignore[attr-defined]
        if isinstance(e, Rolled):
            out[-1].append((*e.attacker, *e.defender))
        elif isinstance(e, (AttackStopped, Conquered)):
            out.append([])
    return [b for b in out if b]


def own_stream(o: Orders, source: str, target: str, n: int) -> dice.Stream:
    """The stream of the `n`-th battle of the turn on this pair (docs/fog.md)."""
    digest = dice.orders_digest([dice.order_file_digest(o.canonical())])
    battle = fog.battle_key(KEY, fog.label(source, target, n))
    return dice.Stream.public(dice.dice_key(battle, digest))


def test_in_a_fog_game_each_battle_rolls_from_its_own_key_from_its_first_die() -> None:
    owners = {"Ukraine": ("alice", 60), "Ural": ("bob", 40), "Afghanistan": ("bob", 40)}
    state = make_state(owners, default="carol", options=FOG, dice=DiceRule.ORDERS)
    plan = [("Ural", 50), ("Afghanistan", 40), ("Ural", 30)]  # Ural twice: battles 1 and 2
    o = orders(
        state,
        place=[("Ukraine", REST)],
        attack=[Attack("Ukraine", t, stop_at=stop) for t, stop in plan],
    )
    assert validation.validate(state, o) == []
    _, events = resolve(state, (o,), RANDOMNESS)
    fought = battles(events)
    assert len(fought) == 3
    for (target, _), n, rolls in zip(plan, (1, 1, 2), fought, strict=True):
        stream = own_stream(o, "Ukraine", target, n)
        assert rolls[0] == stream.dice(3) + stream.dice(2), (target, n)
    classic = replace(state, options=Options(dice=DiceRule.ORDERS))
    _, plain = resolve(classic, (o,), RANDOMNESS)
    assert battles(plain)[1][0] != fought[1][0]  # (one stream for the whole turn otherwise)


def test_a_fog_game_allows_eight_attacks_on_one_pair_a_turn() -> None:
    state = make_state({"Ukraine": ("alice", 90), "Ural": ("bob", 90)}, options=FOG)
    attacks = [Attack("Ukraine", "Ural", stop_at=80 - i) for i in range(9)]
    nine = orders(state, place=[("Ukraine", REST)], attack=attacks)
    assert [p.message for p in validation.validate(state, nine)] == [
        "a game with fog allows 8 attacks on 'Ural' from 'Ukraine' a turn"
    ]
    eight = replace(nine, attack=nine.attack[:8])
    assert validation.validate(state, eight) == []
    keyed = replace(state, options=replace(FOG, dice=DiceRule.ORDERS))
    _, events = resolve(keyed, (replace(nine, turn=keyed.turn),), RANDOMNESS)
    assert [e.reason for e in events if isinstance(e, Skipped)][-1] == (
        "a game with fog allows 8 attacks on Ural from Ukraine a turn"
    )
    alone = replace(state, options=Options())
    assert validation.validate(alone, nine) == []


# --- the view: what fog hides ----------------------------------------------------------------


def fogged_table(level: FogLevel, **kw: object) -> object:
    """alice holds Alaska (5), bob Kamchatka (7) next to it and Peru (9) far away, carol the
    rest; alice to play."""
    owners = {"Alaska": ("alice", 5), "Kamchatka": ("bob", 7), "Peru": ("bob", 9)}
    options = Options(fog=level, **kw)  # type: ignore[arg-type]
    return make_state(owners, default=("carol", 2), players=SEATS3, options=options)


SEATS3 = ["alice", "bob", "carol"]


def test_in_light_fog_a_player_sees_every_owner_and_armies_only_near_them() -> None:
    state = fogged_table(FogLevel.LIGHT)
    view = game_view(state, "alice")  # type: ignore[arg-type]
    land = view["territories"]
    assert land["Kamchatka"] == {"owner": "bob", "armies": 7}  # next to Alaska
    assert land["Peru"] == {"owner": "bob", "armies": None}
    assert land["Alaska"] == {"owner": "alice", "armies": 5}
    seen = fog.sight(state, "alice")  # type: ignore[arg-type]
    assert all((e["armies"] is None) == (t not in seen) for t, e in land.items())
    bob = next(p for p in view["players"] if p["name"] == "bob")
    assert bob["armies"] is None and bob["territories"] == 2 and bob["cards"] == 0
    me = next(p for p in view["players"] if p["name"] == "alice")
    assert me["armies"] == 5
    assert "9" not in json.dumps(land["Peru"])
    for reader in (None,):  # the moderator sees everything
        assert game_view(state, reader)["territories"]["Peru"]["armies"] == 9  # type: ignore[arg-type]
    over = replace(state, phase=Phase.OVER, winner="alice")  # type: ignore[type-var]
    assert game_view(over, "alice")["territories"]["Peru"]["armies"] == 9


def test_in_heavy_fog_an_unseen_territory_shows_no_owner_and_another_side_no_counts() -> None:
    state = fogged_table(FogLevel.HEAVY)
    view = game_view(state, "alice")  # type: ignore[arg-type]
    assert view["territories"]["Peru"] == {"owner": None, "armies": None}
    assert view["territories"]["Kamchatka"] == {"owner": "bob", "armies": 7}
    bob = next(p for p in view["players"] if p["name"] == "bob")
    assert (bob["territories"], bob["armies"], bob["cards"], bob["reinforcements"]) == (
        None,
        None,
        None,
        None,
    )
    assert bob["alive"] is True


def test_team_mates_share_their_sight_under_fog() -> None:
    teams = (("alice", "carol"), ("bob", "dave"))
    owners = {"Alaska": ("alice", 5), "Peru": ("carol", 4), "Argentina": ("bob", 6)}
    state = make_state(
        owners,
        default=("dave", 2),
        players=["alice", "bob", "carol", "dave"],
        options=Options(fog=FogLevel.HEAVY, teams=teams),
    )
    view = game_view(state, "alice")
    assert view["territories"]["Argentina"] == {"owner": "bob", "armies": 6}  # next to carol's
    carol = next(p for p in view["players"] if p["name"] == "carol")
    assert carol["armies"] == 4 and carol["territories"] == 1


def test_a_fogged_view_reads_back_as_a_state_to_check_orders_with() -> None:
    state = fogged_table(FogLevel.HEAVY)
    view = json.loads(json.dumps(game_view(state, "alice")))  # type: ignore[arg-type]
    again = state_from_view(view, BOARD)
    assert again.owner("Peru") == fog.UNKNOWN and again.armies("Peru") == 0
    assert again.owner("Kamchatka") == "bob" and again.armies("Kamchatka") == 7
    # Alaska - Kamchatka - (unseen) Yakutsk: a chain into the unknown is checked as far as known.
    o = orders(
        again,
        place=[("Alaska", REST)],
        attack=[Attack("Alaska", "Kamchatka"), Attack("Kamchatka", "Yakutsk")],
    )
    assert validation.validate(again, o) == []
    light = json.loads(json.dumps(game_view(fogged_table(FogLevel.LIGHT), "alice")))  # type: ignore[arg-type]
    assert state_from_view(light, BOARD).owner("Peru") == "bob"
    view["territories"]["Peru"]["owner"] = "nobody"
    with pytest.raises(ViewError, match="not a player"):
        state_from_view(view, BOARD)


# --- the check and the forecast say no more than the player knows ---------------------------------


def test_under_fog_the_forecast_of_an_attack_on_armies_not_seen_says_they_are_hidden() -> None:
    from pbem.game.checking import forecast

    # alice: Alaska (20); bob: Kamchatka (3) next to it, Yakutsk (11) beyond, unseen.
    owners = {"Alaska": ("alice", 20), "Kamchatka": ("bob", 3), "Yakutsk": ("bob", 11)}
    state = make_state(
        owners, default=("carol", 2), players=SEATS3, options=Options(fog=FogLevel.HEAVY)
    )
    o = orders(
        state,
        place=[("Alaska", REST)],
        attack=[Attack("Alaska", "Kamchatka"), Attack("Kamchatka", "Yakutsk")],
    )
    lines = forecast(state, o)
    text = "\n".join(lines)
    assert "the armies on Yakutsk are hidden from you: no forecast" in text
    assert "later steps" not in text  # (nothing after it)
    assert "11" not in text and "against 3" in text.replace("armies", "")  # Kamchatka is seen
    # The same answer from the player's own view file (the kit, pbem check --view).
    again = state_from_view(json.loads(json.dumps(game_view(state, "alice"))), BOARD)
    assert forecast(again, replace(o, turn=again.turn)) == lines
    clear = replace(state, options=Options())
    assert "hidden" not in "\n".join(forecast(clear, o))


# --- privacy over whole games ----------------------------------------------------------------


WHOLE_GAMES = [
    (FogLevel.LIGHT, 3, ()),
    (FogLevel.HEAVY, 3, ()),
    (FogLevel.LIGHT, 2, ()),
    (FogLevel.HEAVY, 5, ()),
    (FogLevel.LIGHT, 6, ()),
    (FogLevel.HEAVY, 4, (("ann", "cy"), ("ben", "dee"))),
]
"""The games played: to their end with two or three players; the first 40 resolutions with
more (a whole game of six takes minutes)."""


def told_labels(events: object, before: object, after: object, name: str) -> list[str]:
    """The labels of the battles `name` is to be told of, worked out again here from the rules
    of docs/fog.md: every battle on a pair either of whose territories they (or a team-mate)
    held, or bordered, before the resolution or after it."""
    seen = set()
    for state in (before, after):
        team = state.team(name)  # type: ignore[attr-defined]
        held = [t for t, h in state.territories.items() if h.owner in team]  # type: ignore[attr-defined]
        seen.update(held)
        for t in held:
            seen.update(BOARD.neighbours(t))
    out = []
    for e in events:  # type: ignore[attr-defined]
        if isinstance(e, (AttackStopped, Conquered)) and (e.source in seen or e.target in seen):
            out.append(f"{e.source}|{e.target}|{e.battle}")
    return out


@pytest.mark.parametrize(("level", "players", "teams"), WHOLE_GAMES)
def test_over_a_whole_fog_game_each_player_gets_exactly_what_they_see(
    tmp_path: Path, level: FogLevel, players: int, teams: tuple[tuple[str, ...], ...]
) -> None:
    """Bots play a fog game to its end. After every resolution, against the game itself:
    each player's view shows armies exactly on the territories they see (owners too in heavy
    fog), and the true values there; its dice section has no key of the chain and exactly the
    battles the rules tell them of (worked out again here from the states before and after),
    each of which checks against the commitment the report before showed (with the kit too);
    the text and HTML boards hide what the view hides; once the game is over the fog lifts, the
    last view checks from the revealed key and the game audits."""
    import random

    from click.testing import CliRunner

    from pbem.cli import main
    from pbem.game import processor
    from pbem.kit import main as kit
    from pbem.present.fog_verify import fog_lines
    from pbem.records.history import read_history
    from pbem.records.opening import read_game

    directory = tmp_path / "misty"
    names = ["ann", "ben", "cy", "dee", "eve", "fay"][:players]
    processor.new_game(
        directory,
        [(n, "") for n in names],
        Options(fog=level, teams=teams),
        seed=bytes(range(players, players + 32)),
    )
    rng = random.Random(5 + players)
    roots: dict[str, str] = {}
    told_battles = every_battle = 0
    before = read_game(directory).state
    to_the_end = players <= 3
    for r in range(400 if to_the_end else 40):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            break
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
        truth = read_game(directory).state
        folders = sorted((directory / "reports").iterdir())
        folder = folders[-1]
        events = read_history(directory, truth.resolution - 1).events
        for name in names:
            view = json.loads((folder / f"{name}.view.json").read_text())
            section = view["dice"]
            lines, ok = fog_lines(view)
            assert ok, (folder.name, name, lines)
            if truth.phase is Phase.OVER:
                assert "key" in section  # (the fog lifts: every battle of the game checks)
                fought = sum(
                    len(fog_events.battles(read_history(directory, n).events))
                    for n in range(1, truth.resolution)
                )
                assert f"every battle of the game OK: {fought} battles" in "\n".join(lines)
                game_list = section["game"]
                game_list[-1]["battles"][0]["rolls"][0] = "111/66"
                assert not fog_lines(view)[1]  # (a die changed is caught)
                continue
            assert not {"key", "previous_key", "rolls", "dice_key"} & set(section)
            if name in roots:
                assert section["battle_root"] == roots[name], (folder.name, name)
                if r % 5 == 0:
                    previous = folders[-2] / f"{name}.view.json"
                    here = str(folder / f"{name}.view.json")
                    with contextlib.redirect_stdout(io.StringIO()):
                        verified = kit(["verify", "--report", here, "--previous", str(previous)])
                    assert verified == 0
            roots[name] = section["next_battle_root"]
            seen = fog.sight(truth, name)
            for t, entry in view["territories"].items():
                shown = t in seen
                assert (entry["armies"] is not None) == shown, (folder.name, name, t)
                if shown:
                    assert entry["armies"] == truth.armies(t)
                owner_known = shown or level is FogLevel.LIGHT
                assert (entry["owner"] is not None) == owner_known
                if owner_known:
                    assert entry["owner"] == truth.owner(t)
            expected = told_labels(events, before, truth, name)
            assert [b["label"] for b in section["battles"]] == expected, (folder.name, name)
            told_battles += len(expected)
            every_battle += len(fog_events.battles(events))
            text = (folder / f"{name}.txt").read_text()
            assert "None" not in text and not re.search(r"\(-\d|: -\d|against -", text)
            board = text.split("The board")[1].split("Players")[0]
            for t in BOARD.names:
                line = next(x for x in board.splitlines() if x[4:].startswith(t + " "))
                assert line.rstrip().endswith("?") == (t not in seen), (folder.name, name, line)
            page = (folder / f"{name}.html").read_text()
            for t in BOARD.names:
                row = re.search(
                    rf"</span>{re.escape(t)}</td><td>[^<]*</td><td class=\"n\">([^<]*)</td>", page
                )
                assert row is not None and (row.group(1) == "?") == (t not in seen), (name, t)
        before = truth
        assert truth.resolution < 390
    assert read_game(directory).state.phase is Phase.OVER or not to_the_end
    assert 10 < told_battles <= every_battle
    if players == 3:
        assert told_battles < every_battle  # (some were hidden from some)
    audit = CliRunner().invoke(main, ["audit", str(directory)])
    assert audit.exit_code == 0, audit.output


# --- verifying a fog game's dice -------------------------------------------------------------


def fog_game(tmp_path: Path, turns: int = 6) -> Path:
    """A heavy fog game of three players by the command line, played by bots for some turns."""
    import random

    from click.testing import CliRunner

    from pbem.cli import main
    from pbem.game import processor
    from pbem.records.opening import read_game

    directory = tmp_path / "mist"
    args = ["new", str(directory), "--players", "ann,ben,cy", "--fog", "heavy"]
    result = CliRunner().invoke(main, [*args, "--seed", "44" * 32])
    assert result.exit_code == 0, result.output
    rng = random.Random(2)
    for _ in range(turns):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            break
        for name, text in write_bot_orders(directory, rng).items():
            (directory / f"sent-{name}-{game.state.turn}.toml").write_text(text, "utf-8")
        processor.resolve_game(directory)
    return directory


def test_pbem_verify_checks_a_fog_report_battle_by_battle_and_against_the_one_before(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from pbem.cli import main
    from pbem.kit import main as kit

    directory = fog_game(tmp_path)
    folders = sorted((directory / "reports").iterdir())
    # The last resolution whose report told some player of a battle.
    found = next(
        (f, n)
        for f in reversed(folders[1:])
        for n in ("ann", "ben", "cy")
        if json.loads((f / f"{n}.view.json").read_text())["dice"]["battles"]
    )
    folder, name = found
    before = folders[folders.index(folder) - 1]
    report, previous = folder / f"{name}.view.json", before / f"{name}.view.json"
    run = CliRunner().invoke(main, ["verify", "--report", str(report), "--previous", str(previous)])
    assert run.exit_code == 0, run.output
    assert "every die matches" in run.output and "the report before this turn gave it" in run.output
    assert kit(["verify", "--report", str(report), "--previous", str(previous)]) == 0
    # Another player's order file is not among those the dice come from ...
    turn = json.loads(report.read_text())["turn"] - 1
    mover = json.loads(report.read_text())["dice"]["orders"][0]["player"]
    own = directory / f"sent-{mover}-{turn}.toml"
    mine = CliRunner().invoke(main, ["verify", "--report", str(report), "--orders", str(own)])
    assert mine.exit_code == 0 and "OK: the dice come from these orders" in mine.output
    # ... a die changed, a key made up, a commitment of another turn: each is caught.
    data = json.loads(report.read_text())
    battle = data["dice"]["battles"][0]
    first = battle["rolls"][0]["attacker"]
    first[0] = first[0] % 6 + 1
    (tmp_path / "die.json").write_text(json.dumps(data))
    bad = CliRunner().invoke(main, ["verify", "--report", str(tmp_path / "die.json")])
    assert bad.exit_code == 1 and "does NOT match its key" in bad.output
    data = json.loads(report.read_text())
    data["dice"]["battles"][0]["key"] = "00" * 32
    (tmp_path / "key.json").write_text(json.dumps(data))
    bad = CliRunner().invoke(main, ["verify", "--report", str(tmp_path / "key.json")])
    assert bad.exit_code == 1 and "does NOT lead to the commitment" in bad.output
    older = folders[folders.index(folder) - 2] / f"{name}.view.json"
    stale = ["verify", "--report", str(report), "--previous", str(older)]
    bad = CliRunner().invoke(main, stale)
    assert bad.exit_code == 1 and "battle commitment WRONG" in bad.output
    assert kit(stale) == 1


def test_a_fog_game_made_by_the_command_line_rolls_keyed_by_the_orders_and_audits(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from pbem.cli import main
    from pbem.records.opening import read_game

    directory = fog_game(tmp_path, turns=4)
    assert read_game(directory).state.options.fog is FogLevel.HEAVY
    audit = CliRunner().invoke(main, ["audit", str(directory)])
    assert audit.exit_code == 0, audit.output
    shown = CliRunner().invoke(main, ["show", str(directory), "--player", "ann"])
    assert "rules: heavy fog" in shown.output and "   ?" in shown.output
    with pytest.raises(ValueError, match="key and the orders"):
        from pbem.core.engine import new_game

        new_game("g", ["a", "b"], BOARD, Options(fog=FogLevel.LIGHT, dice=DiceRule.KEY), RANDOMNESS)


# --- found in review ----------------------------------------------------------------------


def test_a_battle_whose_side_the_reader_does_not_see_is_told_without_its_armies() -> None:
    from pbem.languages.i18n import language, speaking
    from pbem.present.story import tell

    events = [
        Rolled("bob", "Peru", "Brazil", "carol", (6, 5, 4), (1, 1), 0, 2),
        Conquered("bob", "Peru", "Brazil", "carol", 3),
    ]
    with speaking(language("en")):
        told = tell(events, "alice", {"Peru": 12, "Brazil": 2}, (), frozenset({"Peru"}))
    item = told[0]
    assert item.text == "bob attacked Brazil (carol) from Peru."
    assert item.rolls[0].source_left == "?" and item.rolls[0].target_left == 0
    assert item.result == "bob took Brazil."
    with speaking(language("en")):
        seen = tell(events, "alice", {"Peru": 12, "Brazil": 2})
    assert "12 armies against 2" in seen[0].text


def test_heavy_fog_hides_the_piles_that_would_count_the_hands() -> None:
    heavy = game_view(fogged_table(FogLevel.HEAVY), "alice")  # type: ignore[arg-type]
    assert heavy["piles"]["draw_pile"] is None and heavy["piles"]["discards"] is None
    light = game_view(fogged_table(FogLevel.LIGHT), "alice")  # type: ignore[arg-type]
    assert isinstance(light["piles"]["draw_pile"], int)
    again = state_from_view(json.loads(json.dumps(heavy)), BOARD)
    assert again.discards == ()


def test_an_attack_skipped_before_any_die_takes_no_battle_number() -> None:
    owners = {"Ukraine": ("alice", 30), "Ural": ("bob", 5)}
    state = make_state(owners, default="carol", options=FOG, dice=DiceRule.ORDERS)
    o = orders(
        state,
        place=[("Ukraine", REST)],
        attack=[Attack("Ukraine", "Ural", stop_at=50), Attack("Ukraine", "Ural", stop_at=25)],
    )
    _, events = resolve(state, (o,), RANDOMNESS)
    assert any(isinstance(e, Skipped) for e in events)
    assert [b.label for b in fog_events.battles(events)] == ["Ukraine|Ural|1"]


def test_the_reference_bot_plays_a_fogged_view_without_attacking_what_it_cannot_see() -> None:
    from pbem.core import reference_bot

    # alice's 30 on Alaska; bob's 1 on Kamchatka next to it, and beyond it what she cannot see.
    owners = {"Alaska": ("alice", 30), "Kamchatka": ("bob", 1), "Northwest Territory": "alice"}
    state = make_state(
        owners, default=("bob", 1), players=SEATS3[:2], options=Options(fog=FogLevel.HEAVY)
    )
    again = state_from_view(json.loads(json.dumps(game_view(state, "alice"))), BOARD)
    assert again.armies("Yakutsk") == 0  # (not seen)
    o = reference_bot.reference_orders(again, "alice", "x")
    assert validation.validate(again, o) == []
    assert o.attack and all(again.armies(a.target) > 0 for a in o.attack)


def test_a_fog_games_text_report_is_sent_to_its_view_file_for_verifying(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pbem.cli import main

    directory = fog_game(tmp_path, turns=2)
    text = sorted((directory / "reports").iterdir())[-1] / "ann.txt"
    run = CliRunner().invoke(main, ["verify", "--report", str(text)])
    assert run.exit_code != 0 and "give NAME.view.json" in run.output


def test_a_tree_needs_a_leaf_and_a_battle_key_its_own_place_among_the_labels() -> None:
    with pytest.raises(ValueError, match="at least one leaf"):
        fog.merkle_root([])
    key = bytes(32)
    root = fog.battle_root(key, BOARD)
    name = fog.label("Ukraine", "Ural", 1)
    battle, index, path = fog.battle_proof(key, BOARD, name)
    size = len(fog.labels(BOARD))
    for wrong in (-1, size, size + 5, index + 1):
        assert not fog.check_battle(BOARD, name, battle, wrong, path, root), wrong
    assert fog.check_battle(BOARD, name, battle, index, path, root)


def test_another_sides_turn_is_told_as_whose_it_was_and_what_was_seen_of_it() -> None:
    from pbem.core.events import Dropped, Eliminated, Placed, Reinforced

    heavy = fogged_table(FogLevel.HEAVY)  # alice: Alaska; bob: Kamchatka (seen), Peru (not)
    light = fogged_table(FogLevel.LIGHT)
    start = Reinforced("bob", 3, 2, 3, (), 0)
    far, near = Placed("bob", "Peru", 3), Placed("bob", "Kamchatka", 3)
    told = fog_events.told
    assert told(heavy, [start, far], "alice") == (fog_events.TurnPlayed("bob", 3, seen=False),)  # type: ignore[arg-type]
    assert told(heavy, [start, near], "alice") == (fog_events.TurnPlayed("bob", 3), near)  # type: ignore[arg-type]
    assert told(light, [start, far], "alice") == (start,)  # type: ignore[arg-type]
    mine = Reinforced("alice", 3, 1, 3, (), 0)
    assert told(heavy, [mine, Placed("alice", "Alaska", 3)], "alice")[0] == mine  # type: ignore[arg-type]
    out = Eliminated("carol", "bob", 4)
    assert fog_events.LeftGame("carol", "bob") in told(heavy, [start, near, out], "alice")  # type: ignore[arg-type]
    assert out in told(light, [start, near, out], "alice")  # type: ignore[arg-type]
    gone = Dropped("carol", 3, 5, 9, 2)
    assert fog_events.LeftGame("carol") in told(light, [gone], "alice")  # type: ignore[arg-type]
    assert told(heavy, [start, far], None) == (start, far)  # (the moderator)


# --- found in the second review ------------------------------------------------------------


def story_of(state: object, events: list[object], reader: str) -> list[str]:
    from pbem.languages.i18n import language, speaking
    from pbem.present.story import armies_before, tell

    told = fog_events.told(state, events, reader)  # type: ignore[arg-type]
    unseen = frozenset(BOARD.names) - fog_events.seen_during(state, events, reader)  # type: ignore[arg-type]
    before = armies_before(state, events)  # type: ignore[arg-type]
    with speaking(language("en")):
        items = tell(told, reader, before, (), unseen, frozenset({reader}))
    return [i.text for i in items]


def test_a_fortification_with_one_end_unseen_tells_only_what_changed_at_the_seen_end() -> None:
    from pbem.core.events import Fortified

    state = fogged_table(FogLevel.LIGHT)  # alice sees Kamchatka, not Yakutsk
    into = Fortified(
        "bob", "Yakutsk", "Kamchatka", 4, "asked to move 9, cut to 4: one army stays behind"
    )
    assert story_of(state, [into], "alice") == ["bob moved 4 into Kamchatka."]
    out = Fortified("bob", "Kamchatka", "Yakutsk", 2)
    assert story_of(state, [out], "alice") == ["bob moved 2 out of Kamchatka."]
    assert story_of(state, [Fortified("bob", "Peru", "Brazil", 2)], "alice") == []


def test_heavy_fog_tells_ones_own_reshuffle_without_the_pile_sizes() -> None:
    from pbem.core.events import DrewCard, DrewNoCard, Reshuffled

    state = fogged_table(FogLevel.HEAVY)
    told = story_of(state, [Reshuffled("alice", 39), DrewCard("alice", "Peru")], "alice")
    assert "39" not in " ".join(told) and told[0].startswith("The draw pile was empty")
    none = story_of(
        state,
        [
            DrewNoCard(
                "alice", "the draw pile and the discard pile are empty: every card is in a hand"
            )
        ],
        "alice",
    )
    assert none == ["alice draws no card: no card is left to draw."]
    light = story_of(fogged_table(FogLevel.LIGHT), [Reshuffled("alice", 39)], "alice")
    assert "39" in light[0]


def test_the_autopilots_placements_for_another_side_are_told_as_seen() -> None:
    from pbem.core.events import MissedTurn, Placed

    state = fogged_table(FogLevel.HEAVY)
    events = [
        MissedTurn("bob", 3, 1),
        Placed("bob", "Kamchatka", 3, "autopilot"),
        Placed("bob", "Peru", 5, "autopilot"),
    ]
    (line,) = story_of(state, events, "alice")
    assert "where you see: 3 on Kamchatka" in line and "8" not in line


def test_a_finished_fog_game_cannot_be_undone_and_its_last_view_checks_the_chain(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from pbem.cli import main
    from pbem.records.opening import read_game

    directory = fog_game(tmp_path, turns=200)
    assert read_game(directory).state.phase is Phase.OVER
    undo = CliRunner().invoke(main, ["undo", str(directory), "--why", "a mistake"])
    assert undo.exit_code != 0 and "lifted the fog" in undo.output
    last = sorted((directory / "reports").iterdir())[-1] / "ann.view.json"
    run = CliRunner().invoke(main, ["verify", "--report", str(last)])
    assert run.exit_code == 0 and "chain OK" in run.output, run.output
    data = json.loads(last.read_text())
    data["commitment"] = "00" * 32
    (tmp_path / "forged.json").write_text(json.dumps(data))
    forged = CliRunner().invoke(main, ["verify", "--report", str(tmp_path / "forged.json")])
    assert forged.exit_code == 1 and "chain BROKEN" in forged.output


def test_what_each_level_tells_of_the_deal_the_draft_trades_and_draws() -> None:
    from pbem.core.events import Dealt, Drafted, DrewCard, Traded

    heavy, light = fogged_table(FogLevel.HEAVY), fogged_table(FogLevel.LIGHT)
    dealt = Dealt("bob", ("Peru", "Kamchatka"))
    traded = Traded("bob", ("Peru", "Siam", "Ural"), 4, 1)
    drew = DrewCard("bob", "Egypt")
    near, far = Drafted("bob", "Kamchatka", 1), Drafted("bob", "Peru", 1)
    told = fog_events.told
    for e in (dealt, traded, drew, far):
        assert told(light, [e], "alice") == (e,)  # type: ignore[arg-type]
        assert e not in told(heavy, [e], "alice")  # type: ignore[arg-type]
    assert told(heavy, [near], "alice") == (near,)  # type: ignore[arg-type]
    assert "Alaska" in fog_events.seen_during(heavy, [], "alice")  # type: ignore[arg-type]


def test_pbem_verify_refuses_a_crafted_fog_view_with_its_reason(tmp_path: Path) -> None:
    from pbem.present.fog_verify import FogVerifyError, fog_lines, previous_line

    directory = fog_game(tmp_path)
    folders = sorted((directory / "reports").iterdir())
    view = next(
        json.loads((f / f"{n}.view.json").read_text())
        for f in reversed(folders[1:])
        for n in ("ann", "ben", "cy")
        if json.loads((f / f"{n}.view.json").read_text())["dice"]["battles"]
    )
    lines, ok = fog_lines(view)
    assert ok and any(x.startswith("next turn's battle commitment:") for x in lines)
    setup = json.loads((folders[0] / "ann.view.json").read_text())
    assert fog_lines(setup) == (
        [
            "the setup rolled no battle",
            f"next turn's battle commitment: {setup['dice']['next_battle_root']} (keep it "
            "for your next report)",
        ],
        True,
    )
    for change, reason in (
        (lambda b: b.update(key=b["key"][:-2]), "not 32 bytes"),
        (lambda b: b["rolls"][0].update(attacker=[0, 6, 6]), "not attacker and defender dice"),
        (lambda b: b["rolls"][0].update(defender=[7]), "not attacker and defender dice"),
        (lambda b: b.update(path="abc"), "has no path"),
    ):
        crafted = json.loads(json.dumps(view))
        change(crafted["dice"]["battles"][0])
        with pytest.raises(FogVerifyError, match=reason):
            fog_lines(crafted)
    wrong = json.loads(json.dumps(view))
    first = wrong["dice"]["battles"][0]["rolls"][0]["attacker"]
    first[0] = first[0] % 6 + 1
    lines, ok = fog_lines(wrong)
    assert not ok and any("roll 1 of" in x and "does NOT match" in x for x in lines)
    with pytest.raises(FogVerifyError, match="gives no commitment for the next turn"):
        previous_line(view, {"dice": {}})


def test_told_without_fog_is_everything_and_ones_own_loss_is_told_whole() -> None:
    from pbem.core.events import Eliminated, Placed, Reinforced, SeatTaken

    plain = fogged_table(FogLevel.NONE)
    events = [Reinforced("bob", 3, 2, 3, (), 0), Placed("bob", "Peru", 3)]
    assert fog_events.told(plain, events, "alice") == tuple(events)  # type: ignore[arg-type]
    heavy = fogged_table(FogLevel.HEAVY)
    mine = Eliminated("alice", "bob", 4)
    assert mine in fog_events.told(heavy, [mine], "alice")  # type: ignore[arg-type]
    start, far = Reinforced("bob", 3, 2, 3, (), 0), Eliminated("carol", "bob", 2)
    assert fog_events.told(heavy, [start, far], "alice") == (  # type: ignore[arg-type]
        fog_events.TurnPlayed("bob", 3, seen=False),
        fog_events.LeftGame("carol", "bob"),
    )
    back = SeatTaken("bob", "zed", "bob", 3, ("Peru",))
    assert fog_events.told(heavy, [back], "alice") == (  # type: ignore[arg-type]
        SeatTaken("bob", "zed", "bob", 3, None),
    )
    assert fog_events.told(heavy, [back], "bob") == (back,)  # type: ignore[arg-type]


def test_more_crafted_fog_views_are_refused_or_told_plainly() -> None:
    from pbem.present.fog_verify import FogVerifyError, fog_lines

    base = {"board": "classic", "dice": {"resolution": 3, "battle_root": "00" * 32, "battles": []}}
    lines, ok = fog_lines(base)
    assert ok and "no battle of this resolution was told to this view's player" in lines
    for dice_section, reason in (
        ({"battle_root": 7, "battles": []}, "not hexadecimal text"),
        ({"battle_root": "00" * 32, "battles": "x"}, "not a list of battles"),
        (
            {
                "battle_root": "00" * 32,
                "battles": [
                    {"label": "a|b|1", "key": "00" * 32, "index": 0, "path": [], "rolls": ["x"]}
                ],
            },
            "not attacker and defender dice",
        ),
    ):
        with pytest.raises(FogVerifyError, match=reason):
            fog_lines({"board": "classic", "dice": {"resolution": 3, **dice_section}})
    from pbem.present.fog_verify import _short_roll, _whole_game

    with pytest.raises(FogVerifyError, match="written as 653/42"):
        _short_roll("6x3/42")
    with pytest.raises(FogVerifyError, match="out of the game"):
        _whole_game({"resolution": 3, "game": [{"resolution": 9}]}, bytes(32))
