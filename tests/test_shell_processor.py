"""The turn processor's own decisions: player lists, new games, checking files, forecasts and the
lines it prints."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import SEED, attacking, force_state, skeleton, write_skeletons
from helpers import make_state, orders

from pbem.core import missions, odds
from pbem.core.order_parsing import parse_orders
from pbem.core.orders import Attack, Fortify, Orders, Place
from pbem.core.secrets import first_secret
from pbem.core.state import Holding, Options, Phase
from pbem.errors import PbemError
from pbem.game import processor
from pbem.present.plan import percent
from pbem.present.view import game_view
from pbem.records.history import game_files, report_dir
from pbem.records.opening import read_game


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["alice", "1bob"], "'1bob' cannot be a player name"),
        (["alice", "Neutral"], "'Neutral' cannot be a player name"),
        (["alice", ""], "'' cannot be a player name"),
        (["a", "b", "c", "d", "e", "f", "g"], "Risk needs 2 to 6 players; 7 given"),
        (["alice=a@x.org", "bob=A@X.org"], "A@X.org is given for two players"),
        (["alice=a@x.org", "bob=not-an-address"], "'not-an-address' is not an email address"),
        (["alice=a@x.org", "bob=b@x.org, c@x.org"], "is not an email address"),
    ],
)
def test_a_bad_player_list_is_refused_with_the_reason(players: list[str], message: str) -> None:
    with pytest.raises(PbemError) as err:
        processor.parse_player_list(players)
    assert message in str(err.value)


def test_a_good_player_list_keeps_order_and_addresses() -> None:
    six = [" a = a@x.org ", "b", "c", "d", "e", "F_9-x"]
    assert processor.parse_player_list(six) == [
        ("a", "a@x.org"),
        ("b", ""),
        ("c", ""),
        ("d", ""),
        ("e", ""),
        ("F_9-x", ""),
    ]
    assert len(processor.parse_player_list(["a", "b"])) == 2


def test_a_new_game_checks_seed_name_and_directory(tmp_path: Path) -> None:
    players = processor.parse_player_list(["alice", "bob"])
    with pytest.raises(PbemError, match="the seed must be 32 bytes"):
        processor.new_game(tmp_path / "g", players, Options(), seed=bytes(31))
    with pytest.raises(PbemError, match="'-bad' cannot be a game name"):
        processor.new_game(tmp_path / "g", players, Options(), seed=SEED, name="-bad")
    (tmp_path / "file").write_text("")
    with pytest.raises(PbemError, match="cannot create"):
        processor.new_game(tmp_path / "file" / "g", players, Options(), seed=SEED)
    assert not (tmp_path / "g").exists()


def test_a_new_game_is_named_after_its_directory_by_default(tmp_path: Path) -> None:
    outcome = processor.new_game(
        tmp_path / "autumn.2027", processor.parse_player_list(["a", "b"]), Options(), seed=SEED
    )
    assert outcome.state.game == "autumn.2027" and outcome.resolution == 0
    assert read_game(tmp_path / "autumn.2027").name == "autumn.2027"
    assert outcome.reports and all(p.exists() for p in outcome.reports)


def test_a_new_game_without_a_seed_gets_a_fresh_one(tmp_path: Path) -> None:
    players = processor.parse_player_list(["a", "b"])
    processor.new_game(tmp_path / "one", players, Options())
    processor.new_game(tmp_path / "two", players, Options())
    assert read_game(tmp_path / "one").seed != read_game(tmp_path / "two").seed


def test_a_players_secret_comes_from_the_seed_and_the_name(game_dir: Path) -> None:
    game = read_game(game_dir)
    secrets = [r.secret for r in game.registrations]
    assert len(set(secrets)) == 3 and all(len(s) == 24 for s in secrets)
    alice = game.registration("alice")
    assert alice is not None and first_secret(SEED, "alice") == alice.secret


# --- checking order files ----------------------------------------------------------------------


def test_a_wrong_secret_is_the_only_problem_named(game_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "alice.toml"
    text = skeleton(game_dir, "alice").replace('armies = "rest"', "armies = 999")
    reg = read_game(game_dir).registration("alice")
    assert reg is not None
    path.write_text(text.replace(reg.secret, "0" * 24))
    _, [(submission, lines)] = processor.check_files(game_dir, [path])
    assert submission.messages() == [
        "alice.toml line 4: the secret is not alice's: copy it from your latest report"
    ]
    assert lines == [] and not submission.accepted and submission.player == "alice"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"\xff\xfe\x00g", "this is not a text file in UTF-8"),
        ("dir", "this is a directory, not a regular file"),
    ],
)
def test_an_unreadable_order_file_is_a_problem_not_an_error(
    game_dir: Path, tmp_path: Path, content: bytes | str | None, message: str
) -> None:
    path = tmp_path / "orders.toml"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    _, [(submission, _)] = processor.check_files(game_dir, [path])
    assert submission.orders is None and submission.player is None
    assert message in submission.messages()[0]
    view = report_dir(game_dir, 0) / "alice.view.json"
    [(checked, _)] = processor.check_with_view(view, [path])
    assert message in checked.messages()[0]


def test_a_players_own_check_against_the_view_file(playing_dir: Path, tmp_path: Path) -> None:
    player = read_game(playing_dir).state.awaiting()[0]
    view = report_dir(playing_dir, 1) / f"{player}.view.json"
    good = tmp_path / "good.toml"
    secret = skeleton_secret(playing_dir, player)
    good.write_text(attacking(skeleton(playing_dir, player)))
    forged = tmp_path / "forged.toml"
    forged.write_text(attacking(skeleton(playing_dir, player)).replace(secret, "anything"))
    [(refused, _)] = processor.check_with_view(view, [forged])
    assert refused.messages() == [
        f"forged.toml line 4: the secret is not {player}'s: copy it from your latest report"
    ]
    bad = tmp_path / "bad.toml"
    bad.write_text(skeleton(playing_dir, player).replace('armies = "rest"', "armies = 999"))
    broken = tmp_path / "broken.toml"
    broken.write_text("game = \n")
    [(ok, lines), (wrong, none), (unparsed, nothing)] = processor.check_with_view(
        view, [good, bad, broken]
    )
    assert ok.accepted and lines and any(line.startswith("attack ") for line in lines)
    assert not wrong.accepted and "too many armies placed" in wrong.messages()[0] and none == []
    assert unparsed.orders is None and nothing == [] and "not valid TOML" in unparsed.messages()[0]


def skeleton_secret(directory: Path, player: str) -> str:
    reg = read_game(directory).registration(player)
    assert reg is not None
    return reg.secret


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"board": "classic"}'])
def test_a_file_that_is_not_a_view_is_named(tmp_path: Path, content: str) -> None:
    view = tmp_path / "view.json"
    view.write_text(content)
    with pytest.raises(PbemError, match="view.json is not a view file"):
        processor.check_with_view(view, [])
    with pytest.raises(PbemError, match="cannot read .*missing.json"):
        processor.check_with_view(tmp_path / "missing.json", [])


# --- forecasts ---------------------------------------------------------------------------------


def test_the_forecast_of_the_setup_turn_places_what_is_left(game_dir: Path) -> None:
    game = read_game(game_dir)
    orders_text = skeleton(game_dir, "alice")
    orders = parse_orders(orders_text, game.state.board)
    to_place = game.state.player("alice").to_place
    assert processor.forecast(game.state, orders) == [
        f"place {to_place} on {orders.place[0].territory}"
    ]
    assert processor.forecast(game.state, None) == []


def test_the_forecast_names_trades_odds_later_attacks_and_the_fortification(
    playing_dir: Path,
) -> None:
    game = read_game(playing_dir)
    state = game.state
    me = state.current_player.name
    mine = state.owned(me)
    source = next(t for t in mine if any(state.owner(n) != me for n in state.board.neighbours(t)))
    target = next(n for n in state.board.neighbours(source) if state.owner(n) != me)
    beyond = next(n for n in state.board.neighbours(target) if n != source)
    hand = state.deck[:3]
    cards = replace(state.player(me), hand=hand)
    state = replace(
        state,
        players=tuple(cards if p.name == me else p for p in state.players),
        deck=state.deck[3:],
    )
    reinforcement = processor.rules.reinforcement(state, me).total
    orders = Orders(
        game=state.game,
        turn=state.turn,
        player=me,
        secret="",
        trade="best",
        place=(Place(source, "rest"),),
        attack=(Attack(source, target), Attack(target, beyond)),
        fortify=Fortify(source, target, "all"),
    )
    lines = processor.forecast(state, orders)
    sets = processor.rules.sets_to_trade(state, me, "best")
    if sets:
        assert lines[0].startswith(f"trade {', '.join(sets[0])} for 4 armies")
        total = reinforcement + 4
    else:
        total = reinforcement
    assert f"place {total} on {source}" in lines
    attack = next(line for line in lines if line.startswith(f"attack {target} from {source}: "))
    attackers, defenders = state.armies(source) + total, state.armies(target)
    if processor.rules.card_bonus_territory(sets, state.owned(me), allowed=True) == source:
        attackers += 2  # the card's +2 is placed before the attack
    exact = odds.forecast(attackers, defenders, 1, None)
    assert attack.startswith(
        f"attack {target} from {source}: {attackers} against {defenders}: "
        f"takes it {percent(exact.win)} of the time"
    )
    # The attack from the territory just taken is forecast from what the first one moves in.
    later = next(line for line in lines if line.startswith(f"attack {beyond} from {target}: "))
    assert "happens" in later or "will be skipped" in later
    assert any(line.startswith(orders.fortify.describe()) for line in lines)  # type: ignore[union-attr]


def test_the_forecast_of_a_huge_attack_gives_no_exact_odds(playing_dir: Path) -> None:
    state = read_game(playing_dir).state
    me = state.current_player.name
    source = next(
        t for t in state.owned(me) if any(state.owner(n) != me for n in state.board.neighbours(t))
    )
    target = next(n for n in state.board.neighbours(source) if state.owner(n) != me)
    territories = dict(state.territories)
    territories[source] = Holding(me, odds.LARGEST)
    big = replace(state, territories=territories)
    orders = Orders(
        state.game, state.turn, me, "", (), (Place(source, "rest"),), (Attack(source, target),)
    )
    line = processor.forecast(big, orders)[-1]
    assert line == f"attack {target} from {source}: too many armies for exact odds"
    territories[source] = Holding(me, odds.LARGEST - state.armies(target) - 3 - 10)
    fits = replace(state, territories=territories)
    assert "too many" not in processor.forecast(fits, orders)[-1]


# --- what the terminal shows -------------------------------------------------------------------


def test_the_summary_says_what_was_resolved_and_what_comes_next(playing_dir: Path) -> None:
    write_skeletons(playing_dir)
    outcome = processor.resolve_game(playing_dir)
    text = processor.summary(outcome)
    lines = text.splitlines()
    conquests = len([e for e in outcome.events if e.kind == "conquered"])
    rolls = len([e for e in outcome.events if e.kind == "rolled"])
    assert rolls >= 1
    assert lines[0] == (
        f"Resolved test-game turn 1 (resolution 2, history/0002.toml): "
        f"{len(outcome.events)} events, "
        f"{rolls} {'roll' if rolls == 1 else 'rolls'}, "
        f"{conquests} {'territory' if conquests == 1 else 'territories'} taken."
    )
    state = outcome.state
    assert lines[1] == f"Turn {state.turn} awaits {state.current_player.name}."
    assert lines[2] == f"Reports: {playing_dir / 'reports' / '0002-turn-1'}"
    over = replace(outcome, state=replace(state, phase=Phase.OVER, winner="bob"), reports=())
    assert processor.summary(over).splitlines()[1:] == ["The game is over: bob won."]


def test_the_table_shows_continents_holders_players_and_hands(playing_dir: Path) -> None:
    game = read_game(playing_dir)
    state = game.state
    me = state.current_player.name
    out = next(p.name for p in state.players if p.name != me)
    australia = state.board.continents["Australia"].territories
    territories = {
        t: Holding(me, h.armies) if h.owner == out or t in australia else h
        for t, h in state.territories.items()
    }
    hand = replace(state.player(me), hand=("Peru",))
    players = tuple(
        replace(p, alive=False) if p.name == out else hand if p.name == me else p
        for p in state.players
    )
    shown = replace(state, territories=territories, players=players)
    view = game_view(shown, None, game.commitment)
    view["players"] = [dict(p, hand=["Peru"]) if p["name"] == me else p for p in view["players"]]
    text = processor.show_table(shown, view)
    lines = text.splitlines()
    assert lines[0] == f"test-game: play, turn {state.turn}, awaiting {me}"
    assert f"Australia (+2), held by {me}" in lines
    assert any(line.startswith("Europe (+5)") and "held by" not in line for line in lines)
    row = next(line for line in lines if line.startswith(out))
    assert row.split()[-1] == "out"
    mine = next(line for line in lines if line.startswith(me) and "hand:" in line)
    assert mine.endswith("hand: Peru")
    assert json.dumps(view)  # the view is plain data


def test_the_forecast_values_each_set_traded_in_turn() -> None:
    hand = ("Alaska", "Greenland", "Brazil", "Peru", "Ural", "Egypt")  # two sets of one each
    state = make_state(
        {"Ukraine": ("alice", 5), "Siam": "alice"}, hands={"alice": hand}, sets_traded=1
    )
    sets = [("Alaska", "Greenland", "Brazil"), ("Peru", "Ural", "Egypt")]
    lines = processor.forecast(state, orders(state, trade=sets, place=[("Ukraine", "rest")]))
    base = processor.rules.reinforcement(state, "alice").total
    assert lines == [
        "trade Alaska, Greenland, Brazil for 6 armies",
        "trade Peru, Ural, Egypt for 8 armies",
        f"place {base + 14} on Ukraine",
    ]


def test_a_resolution_is_not_a_recovery_and_dice_need_a_game(
    playing_dir: Path, tmp_path: Path
) -> None:
    write_skeletons(playing_dir)
    assert processor.resolve_game(playing_dir).recovered is False
    with pytest.raises(PbemError, match="is not a game directory"):
        processor.dice_history(tmp_path)


def test_the_forecast_says_a_fortification_asking_too_much_is_cut() -> None:
    state = make_state({"Ukraine": ("alice", 5), "Ural": "alice", "Siam": "alice"})
    asking = Fortify("Ukraine", "Ural", 20)
    plain = orders(state, place=[("Siam", "rest")], fortify=asking)
    assert processor.forecast(state, plain)[-1] == (
        f"{asking.describe()} (asked to move 20, cut to 4: one army stays behind)"
    )
    attacking_too = orders(
        state,
        place=[("Siam", "rest")],
        attack=[Attack("Ural", "Afghanistan")],
        fortify=asking,
    )
    # The attack from Ural (1 army) never happens, so the fortification meets 5 on Ukraine.
    assert processor.forecast(state, attacking_too)[-1] == (
        f"{asking.describe()} (asked to move 20, cut to 4: one army stays behind)"
    )
    fits = orders(state, place=[("Siam", "rest")], fortify=Fortify("Ukraine", "Ural", 4))
    assert processor.forecast(state, fits)[-1] == Fortify("Ukraine", "Ural", 4).describe()
    later = Fortify("Afghanistan", "Ural", 20)  # not alice's yet: what moves depends on the attacks
    taking = orders(
        state, place=[("Siam", "rest")], attack=[Attack("Ural", "Afghanistan")], fortify=later
    )
    # Afghanistan is never taken (the attack from 1 army never happens): no fortification.
    assert processor.forecast(state, taking)[-1] == (
        f"{later.describe()}: will be skipped (you do not hold Afghanistan)"
    )


def test_a_forced_trade_not_written_is_made_by_pbem_and_reported(playing_dir: Path) -> None:
    from pbem.core.events import Traded
    from pbem.records.history import read_history

    game = read_game(playing_dir)
    state = game.state
    me = state.current_player.name
    five = replace(state.player(me), hand=state.deck[:5])
    forced_state = replace(
        state,
        players=tuple(five if p.name == me else p for p in state.players),
        deck=state.deck[5:],
    )
    force_state(playing_dir, forced_state)
    text = skeleton(playing_dir, me)
    assert 'trade = "best"' in text
    path = playing_dir / "orders" / f"{me}.toml"
    path.write_text("\n".join(line for line in text.splitlines() if "trade" not in line) + "\n")
    _game, [(submission, lines)] = processor.check_files(playing_dir, [path])
    assert submission.accepted, submission.messages()
    assert any(line.startswith("warning: line ") and "pbem trades" in line for line in lines)
    outcome = processor.resolve_game(playing_dir)
    assert not outcome.rejected
    (traded,) = [e for e in outcome.events if isinstance(e, Traded)]
    assert traded.forced and traded.unwritten and len(traded.cards) == 3
    record = read_history(playing_dir, outcome.resolution)
    assert traded in record.events
    folder = max((playing_dir / "reports").iterdir())
    for reader in (me, "_moderator"):
        report_text = (folder / f"{reader}.txt").read_text(encoding="utf-8")
        assert "a forced trade, made by pbem for" in " ".join(report_text.split())
    # the history replays to the same events (audit would, but the state here was forced)
    from pbem.records.replay import recorded_orders, replay_orders

    forced = read_game(playing_dir)
    before = replace(forced, state=forced_state)
    again = recorded_orders(before.state, record.orders)
    _, events = replay_orders(
        before.state, record.orders, before.randomness(outcome.resolution), again
    )
    assert events == record.events


# --- player lists and new games, at their edges ------------------------------------------------


def test_a_player_list_gives_the_languages_written_after_a_colon() -> None:
    given = ["ann=ann@x.org:it", "bob", "cid:nl", "dee=dee@x.org"]
    assert processor.parse_player_languages(given) == {"ann": "it", "cid": "nl"}
    assert processor.parse_player_list(given) == [
        ("ann", "ann@x.org"),
        ("bob", ""),
        ("cid", ""),
        ("dee", "dee@x.org"),
    ]


@pytest.mark.parametrize("count", [missions.MIN_PLAYERS, missions.MAX_PLAYERS])
def test_secret_missions_take_three_to_six_players_both_included(
    tmp_path: Path, count: int
) -> None:
    players = processor.parse_player_list([f"p{n}" for n in range(count)])
    outcome = processor.new_game(tmp_path / "g", players, Options(missions=True), seed=SEED)
    assert len(outcome.state.players) == count
    assert read_game(tmp_path / "g").state.options.missions


def test_secret_missions_with_two_players_are_refused(tmp_path: Path) -> None:
    players = processor.parse_player_list(["a", "b"])
    with pytest.raises(PbemError, match="played by 3 to 6 players, not 2"):
        processor.new_game(tmp_path / "g", players, Options(missions=True), seed=SEED)
    assert not (tmp_path / "g").exists()


def test_a_new_game_that_fails_part_way_leaves_nothing_and_can_be_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    players = processor.parse_player_list(["a", "b"])
    directory = tmp_path / "g"

    def full(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(processor, "write_game", full)
    with pytest.raises(OSError, match="No space left"):
        processor.new_game(directory, players, Options(), seed=SEED)
    assert game_files(directory) == []
    assert [p.name for p in directory.rglob("*") if p.is_file()] == [".lock"]
    monkeypatch.undo()
    outcome = processor.new_game(directory, players, Options(), seed=SEED)
    assert outcome.reports and all(p.exists() for p in outcome.reports)


def test_the_overview_does_not_forecast_a_plan_naming_too_many_armies(playing_dir: Path) -> None:
    game = read_game(playing_dir)
    state = game.state
    me = state.current_player.name
    text = attacking(skeleton(playing_dir, me))
    (attack,) = parse_orders(text, state.board).attack
    territories = dict(state.territories)
    territories[attack.source] = Holding(me, processor.OVERVIEW_ARMIES + 50)
    force_state(playing_dir, replace(state, territories=territories))
    (playing_dir / "orders" / f"{me}.toml").write_text(attacking(skeleton(playing_dir, me)))
    outcome = processor.resolve_game(playing_dir)
    overview = (outcome.reports[0].parent / "_moderator.txt").read_text(encoding="utf-8")
    assert f"{me}: a plan too large to forecast here (pbem check forecasts it)" in overview


def test_a_turn_is_ready_with_one_valid_file_from_every_awaited_player(game_dir: Path) -> None:
    game = read_game(game_dir)
    waiting = processor.readiness(game)
    assert not waiting.ready and waiting.missing == tuple(game.state.awaiting())
    assert waiting.problems == [f"no valid orders from {n} for turn 0" for n in waiting.missing]
    paths = write_skeletons(game_dir)
    found = processor.readiness(game)
    assert found.ready and found.problems == [] and len(found.used) == len(paths)
    first = paths[0]
    twice = first.with_name(f"{first.stem}-again.toml")
    twice.write_text(first.read_text(encoding="utf-8"))
    doubled = processor.readiness(game)
    assert not doubled.ready and doubled.missing == ()
    assert doubled.problems == [
        f"{first.stem} has 2 valid order files ({twice.name}, {first.name}): resolve takes none "
        "of them; keep one"
    ]
