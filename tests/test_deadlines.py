"""Games driven through the command line and the clock (`--now`): deadlines, the autopilot for
a missed turn, dropped players, the outage guard and the moderator's deadline changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SEED, flat, skeleton, snapshot

from pbem.cli import main
from pbem.core.state import NEUTRAL, Phase
from pbem.game.processor import audit_game
from pbem.records import clock
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

START = "2026-11-30T21:00+01:00"
ROME = ["--turn-time", "48h", "--due-at", "20:00", "--timezone", "Europe/Rome"]
SETUP_DUE = "2026-12-03T20:00:00+01:00"


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def new(directory: Path, *extra: str, players: str = "alice,bob,carol", now: str = START) -> Path:
    run("new", directory, "--players", players, "--seed", SEED.hex(), "--now", now, *extra)
    return directory


def send(directory: Path, *players: str) -> None:
    for player in players:
        (directory / "orders" / f"{player}.toml").write_text(skeleton(directory, player))


def at(moment: datetime) -> str:
    return clock.iso(moment)


def deadline(directory: Path) -> datetime:
    due = read_game(directory).deadline
    assert due is not None
    return due


def reports(directory: Path, resolution: int) -> dict[str, str]:
    folder = report_dir(directory, resolution)
    return {p.name: p.read_text() for p in folder.glob("*.txt")}


def test_the_deadline_is_in_the_game_file_every_report_and_view(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    doc = tomllib.loads((d / "game.toml").read_text())
    assert doc["deadlines"] == {
        "turn_time": "2d",
        "due_at": "20:00",
        "timezone": "Europe/Rome",
        "tolerance": "12h",  # a quarter of the turn time, at most 12 hours
        "deadline": SETUP_DUE,
    }
    text = (report_dir(d, 0) / "alice.txt").read_text()
    assert "Your orders are due by Thu 3 Dec 2026, 20:00 CET, in 71 hours." in text
    assert "Thu 3 Dec 2026, 20:00 CET" in (report_dir(d, 0) / "alice.html").read_text()
    assert "Orders are due by Thu 3 Dec" in (report_dir(d, 0) / "_moderator.txt").read_text()
    view = json.loads((report_dir(d, 0) / "bob.view.json").read_text())
    assert view["deadline"] == SETUP_DUE
    shown = json.loads(run("show", d, "--json", "--player", "carol"))
    assert shown["deadline"] == SETUP_DUE
    assert "due by Thu 3 Dec 2026, 20:00 CET" in run("show", d)
    assert read_history(d, 0).time == "2026-11-30T21:00:00+01:00"


def test_on_time_the_turn_resolves_and_the_next_is_due_turn_time_later(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2026-12-01T10:00+01:00")
    assert read_history(d, 1).time == "2026-12-01T10:00:00+01:00"
    assert clock.iso(deadline(d)) == "2026-12-03T20:00:00+01:00"
    assert audit_game(d).resolutions == 2


def test_before_the_deadline_resolve_refuses_and_says_when_the_turn_is_due(
    tmp_path: Path,
) -> None:
    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob")
    before = snapshot(d)
    out = run("resolve", d, "--now", "2026-12-03T19:59+01:00", code=1)
    assert "no valid orders from carol for turn 0" in out
    assert "turn 0 is due by Thu 3 Dec 2026, 20:00 CET, in 1 minute" in out
    assert snapshot(d) == before


def test_a_game_without_deadlines_waits_for_ever(tmp_path: Path) -> None:
    d = new(tmp_path / "g")
    send(d, "alice", "bob")
    out = run("resolve", d, "--now", "2031-01-01T00:00Z", code=1)
    assert "no valid orders from carol" in out and "due" not in out
    assert "deadlines" not in tomllib.loads((d / "game.toml").read_text())


def test_a_turn_time_without_a_due_time_is_kept_whole(tmp_path: Path) -> None:
    d = new(tmp_path / "g", "--turn-time", "36h")
    doc = tomllib.loads((d / "game.toml").read_text())
    assert doc["deadlines"] == {
        "turn_time": "1d12h",
        "timezone": "UTC",
        "deadline": "2026-12-02T08:00:00+00:00",  # no due time: no tolerance to shorten a turn by
    }


def test_the_setup_turn_with_one_silent_player_is_placed_by_the_autopilot(
    tmp_path: Path,
) -> None:
    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob")
    out = run("resolve", d, "--now", SETUP_DUE)
    assert "Resolved" in out
    record = read_history(d, 1)
    carol = next(o for o in record.orders if o.player == "carol")
    assert carol.autopilot and carol.file == "(autopilot)"
    assert carol.text.startswith("# Written by the autopilot")
    assert not any(o.autopilot for o in record.orders if o.player != "carol")
    game = read_game(d)
    assert game.state.player("carol").missed == 1
    assert game.state.player("carol").to_place == 0
    secret = game.registration("carol").secret  # type: ignore[union-attr]
    for name, text in reports(d, 1).items():
        assert "No orders from carol by the deadline: autopilot placed" in text, name
        assert "carol placed" not in text, name
        if not name.startswith(("carol", "_")):
            assert secret not in text
    warning = (
        "You sent no valid orders for your last turn: the autopilot played for you. Miss 2 "
        "more turns in a row and you leave the game; valid orders reset the count."
    )
    texts = reports(d, 1)
    assert warning in " ".join(texts["carol.txt"].split())  # wrapped to 78 columns
    assert warning in (report_dir(d, 1) / "carol.html").read_text()
    assert not any("You sent no valid orders" in texts[n] for n in ("alice.txt", "bob.txt"))
    assert "(missed 1 in a row)" in (report_dir(d, 1) / "_moderator.txt").read_text()
    assert "missed 1 in a row" in run("show", d)
    assert audit_game(d).resolutions == 2


def _drive_until_carol_is_dropped(d: Path) -> list[int]:
    """Everyone but carol plays on time; carol never answers. The resolutions she missed."""
    missed = []
    for _ in range(12):
        game = read_game(d)
        if game.state.player("carol").dropped:
            return missed
        if "carol" in game.state.awaiting():
            missed.append(game.state.resolution)
            send(d, *(p for p in game.state.awaiting() if p != "carol"))
            run("resolve", d, "--now", at(deadline(d) + timedelta(minutes=5)))
        else:
            send(d, *game.state.awaiting())
            run("resolve", d, "--now", at(deadline(d) - timedelta(hours=3)))
    raise AssertionError("carol was never dropped")


def test_three_misses_and_carol_leaves_the_game_as_neutral_armies(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    missed = _drive_until_carol_is_dropped(d)
    assert len(missed) == 3
    last = missed[-1]
    before = read_history(d, last - 1)
    assert before.state_digest
    game = read_game(d)
    carol = game.state.player("carol")
    assert carol.dropped and not carol.alive and carol.hand == ()
    assert game.state.owned("carol") == ()
    assert game.state.owned(NEUTRAL)
    for name, text in reports(d, last).items():
        assert "carol missed 3 turns in a row and leaves the game" in text, name
        assert "stay as neutral armies that only defend" in text
    assert "(dropped)" in (report_dir(d, last) / "_moderator.txt").read_text()
    shown = run("show", d)
    assert "(dropped)" in shown
    neutral = [NEUTRAL, "14", str(game.state.total_armies(NEUTRAL))]
    assert neutral in [line.split() for line in shown.splitlines()]
    view = json.loads((report_dir(d, last) / "alice.view.json").read_text())
    assert next(p for p in view["players"] if p["name"] == "carol")["dropped"] is True
    assert audit_game(d).resolutions == last + 1


def test_valid_orders_before_the_drop_reset_the_count(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob")
    run("resolve", d, "--now", SETUP_DUE)
    assert read_game(d).state.player("carol").missed == 1
    for _ in range(3):
        game = read_game(d)
        send(d, *game.state.awaiting())
        run("resolve", d, "--now", at(deadline(d) - timedelta(hours=1)))
        if "carol" not in game.state.awaiting():
            continue
        assert read_game(d).state.player("carol").missed == 0
        return
    raise AssertionError("carol never played")


def _neutral_target(d: Path) -> tuple[str, str, str]:
    """The current player's territory beside the weakest neutral one: (player, from, to)."""
    state = read_game(d).state
    me = state.current_player.name
    options = [
        (state.armies(n), n, t)
        for t in state.owned(me)
        for n in state.board.neighbours(t)
        if state.owner(n) == NEUTRAL
    ]
    _, target, source = min(options)
    return me, source, target


def test_a_dropped_players_territory_can_be_conquered(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    _drive_until_carol_is_dropped(d)
    for _ in range(6):
        me, source, target = _neutral_target(d)
        text = skeleton(d, me).split("\n[[place]]")[0]
        text += (
            f'\n[[place]]\nterritory = "{source}"\narmies = "rest"\n'
            f'\n[[attack]]\nfrom = "{source}"\nto = "{target}"\n'
        )
        (d / "orders" / f"{me}.toml").write_text(text)
        run("resolve", d, "--now", at(deadline(d) - timedelta(hours=1)))
        if read_game(d).state.owner(target) == me:
            break
    else:
        raise AssertionError("no neutral territory taken in six turns")
    assert audit_game(d)


def test_a_game_is_won_when_everyone_else_is_dropped(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME, "--drop-after", "1", players="alice,bob")
    send(d, "alice")
    run("resolve", d, "--now", SETUP_DUE)
    game = read_game(d)
    assert game.state.phase is Phase.OVER and game.state.winner == "alice"
    assert game.deadline is None
    text = (report_dir(d, 1) / "alice.txt").read_text()
    assert "bob missed 1 turn in a row and leaves the game" in text
    assert "alice has won the game!" in text
    assert "due by" not in text
    assert audit_game(d).resolutions == 2


def test_the_outage_guard_refuses_and_force_lets_the_autopilot_play(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    send(d, "alice")
    before = snapshot(d)
    out = run("resolve", d, "--now", SETUP_DUE, code=1)
    assert "2 of the 3 players would be played by the autopilot (bob, carol)" in out
    assert "--force" in out
    assert snapshot(d) == before
    run("resolve", d, "--now", SETUP_DUE, "--force")
    record = read_history(d, 1)
    assert sorted(o.player for o in record.orders if o.autopilot) == ["bob", "carol"]
    assert audit_game(d).resolutions == 2


def test_in_play_misses_in_a_row_by_different_players_are_played_by_the_autopilot(
    tmp_path: Path,
) -> None:
    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob", "carol")
    run("resolve", d, "--now", SETUP_DUE)
    # one player awaited at a time: each misses in turn, and none is refused as an outage
    # (a mailbox that was down is held by pbem run, tests/test_dead_mailbox.py)
    silent = []
    for _ in range(3):
        name = read_game(d).state.current_player.name
        silent.append(name)
        out = run("resolve", d, "--now", at(deadline(d)))
        assert "would be played by the autopilot" not in out
        record = read_history(d, read_game(d).state.resolution - 1)
        assert [(o.player, o.autopilot) for o in record.orders] == [(name, True)]
    assert len(set(silent)) == 3


def test_half_of_the_players_awaited_missing_is_no_outage(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME, players="alice,bob,carol,dave")
    send(d, "alice", "bob")
    assert "2 of the 4 players" not in run("resolve", d, "--now", SETUP_DUE)  # 2 of 4: allowed


def test_both_players_of_a_game_of_two_missing_is_an_outage(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME, players="alice,bob")
    before = snapshot(d)
    out = run("resolve", d, "--now", SETUP_DUE, code=1)
    assert "2 of the 2 players would be played by the autopilot (alice, bob)" in out
    assert snapshot(d) == before
    send(d, "alice")
    assert "would be played by the autopilot" not in run("resolve", d, "--now", SETUP_DUE)
    record = read_history(d, 1)
    assert [(o.player, o.autopilot) for o in record.orders] == [("alice", False), ("bob", True)]


def test_deadline_extend_moves_the_turn_and_is_recorded_with_its_reason(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    out = run("deadline", d, "--extend", "24h", "--why", "carol is on holiday", "--now", START)
    assert "now due by Fri 4 Dec 2026, 20:00 CET" in out
    change = tomllib.loads((d / "history" / "deadlines" / "0001-1.toml").read_text())
    assert change == {
        "resolution": 1,
        "number": 1,
        "time": "2026-11-30T21:00:00+01:00",
        "deadline": "2026-12-04T20:00:00+01:00",
        "previous": SETUP_DUE,
        "extend": "1d",
        "why": "carol is on holiday",
    }
    assert clock.iso(deadline(d)) == "2026-12-04T20:00:00+01:00"
    from pbem.records.deadline_changes import deadline_changes

    assert [(c.extend, c.previous, c.why) for c in deadline_changes(d, 1)] == [
        ("1d", SETUP_DUE, "carol is on holiday")
    ]
    send(d, "alice", "bob")
    run("resolve", d, "--now", SETUP_DUE, code=1)
    run("resolve", d, "--now", "2026-12-04T20:00+01:00")
    assert audit_game(d).resolutions == 2


def test_a_game_without_deadlines_resolved_at_a_time_gets_no_deadline(tmp_path: Path) -> None:
    d = new(tmp_path / "g")
    send(d, "alice", "bob", "carol")
    run("resolve", d, "--now", SETUP_DUE)
    assert read_game(d).deadline is None
    assert "deadline" not in tomllib.loads((d / "game.toml").read_text())
    assert "audit passed" in run("audit", d)


def test_deadline_waits_for_an_interrupted_resolution(tmp_path: Path) -> None:
    import shutil

    d = new(tmp_path / "g", *ROME)
    ahead = Path(shutil.copytree(d, tmp_path / "ahead"))
    send(ahead, "alice", "bob", "carol")
    run("resolve", ahead, "--now", SETUP_DUE)
    shutil.copy(ahead / "history" / "0001.toml", d / "history" / "0001.toml")
    before = snapshot(d)
    out = run("deadline", d, "--extend", "1d", "--why", "x", "--now", START, code=1)
    assert "a resolution was interrupted: run 'pbem resolve' first" in out
    assert snapshot(d) == before


def test_deadline_set_and_its_mistakes(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    before = snapshot(d)
    assert "has no offset" in run("deadline", d, "--set", "2026-12-05T20:00", "--why", "x", code=1)
    assert "either --extend" in run("deadline", d, "--why", "x", code=1)
    assert "not a duration" in run("deadline", d, "--extend", "soon", "--why", "x", code=1)
    assert 'say why the deadline moves: --why "' in run(
        "deadline", d, "--extend", "1d", "--why", "  ", code=1
    )
    assert snapshot(d) == before
    run("deadline", d, "--set", "2026-12-05T18:00Z", "--why", "server moved", "--now", START)
    assert clock.iso(deadline(d)) == "2026-12-05T19:00:00+01:00"
    assert "audit passed" in run("audit", d)  # a change by --set (no `extend`) reads back
    plain = new(tmp_path / "plain")
    assert "has no deadlines" in run("deadline", plain, "--extend", "1d", "--why", "x", code=1)


def test_of_two_deadline_changes_in_one_turn_the_later_wins(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    run("deadline", d, "--extend", "48h", "--why", "carol is away", "--now", START)
    # the second change moves it back, to before the first: the later change counts, not the
    # latest time
    run("deadline", d, "--set", "2026-12-04T12:00+01:00", "--why", "carol is back", "--now", START)
    assert clock.iso(deadline(d)) == "2026-12-04T12:00:00+01:00"  # the game file
    (row,) = json.loads(run("status", d, "--json", "--now", START))
    assert row["deadline"] == "2026-12-04T11:00Z"
    assert "audit passed" in run("audit", d)
    send(d, "alice", "bob")
    run("resolve", d, "--now", "2026-12-04T11:59+01:00", code=1)
    run("resolve", d, "--now", "2026-12-04T12:00+01:00")  # carol by the autopilot
    assert "audit passed" in run("audit", d)


def test_a_deadline_across_the_spring_change_in_rome(tmp_path: Path) -> None:
    d = new(
        tmp_path / "g",
        "--turn-time",
        "1d",
        "--due-at",
        "20:00",
        "--timezone",
        "Europe/Rome",
        now="2027-03-26T20:00+01:00",
    )
    assert clock.iso(deadline(d)) == "2027-03-27T20:00:00+01:00"
    send(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-27T20:00+01:00")
    view = json.loads((report_dir(d, 1) / "alice.view.json").read_text())
    assert view["deadline"] == "2027-03-28T20:00:00+02:00"
    assert (
        "Sun 28 Mar 2027, 20:00 CEST, in 23 hours"
        in (report_dir(d, 1) / "_moderator.txt").read_text()
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--turn-time", "soon"], "not a duration"),
        (["--due-at", "20:00"], "need --turn-time"),
        (["--turn-time", "1d", "--timezone", "Mars/Olympus"], "not a time zone"),
        (["--turn-time", "1d", "--due-at", "8pm"], "HH:MM"),
    ],
)
def test_bad_deadline_options_create_nothing(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    out = run("new", tmp_path / "g", "--players", "a,b,c", "--now", START, *extra, code=1)
    assert message in out
    assert not (tmp_path / "g").exists()


def _drive(d: Path) -> Iterator[str]:
    """A whole deadline game: carol silent until dropped, then two more turns on time."""
    _drive_until_carol_is_dropped(d)
    for _ in range(2):
        send(d, *read_game(d).state.awaiting())
        now = at(deadline(d) - timedelta(hours=2))
        run("resolve", d, "--now", now)
        yield now


def test_same_seed_orders_and_times_give_byte_identical_directories(tmp_path: Path) -> None:
    one = new(tmp_path / "one" / "game", *ROME, "--name", "same")
    two = new(tmp_path / "two" / "game", *ROME, "--name", "same")
    assert list(_drive(one)) == list(_drive(two))
    assert snapshot(one) == snapshot(two)


def test_replaying_on_another_day_changes_nothing_written(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    list(_drive(d))
    written = snapshot(d)
    assert "audit passed" in run("audit", d)
    run("dice", d)
    run("show", d)
    assert snapshot(d) == written
    # Years later the pending player has still not answered: the autopilot plays that turn,
    # and every file already written stays as it was.
    run("resolve", d, "--now", "2031-06-01T12:00Z")
    after = snapshot(d)
    rewritten = ("game.toml", "history/tallies.json")  # (each resolution writes them anew)
    changed = [
        name
        for name, data in written.items()
        if after.get(name) != data and name not in rewritten and not name.startswith("orders/")
    ]
    assert changed == []
    assert "audit passed" in run("audit", d)


def test_audit_refuses_an_autopilot_that_played_before_the_deadline(tmp_path: Path) -> None:
    import tomli_w

    from pbem.errors import AuditError

    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob")
    run("resolve", d, "--now", SETUP_DUE)
    send(d, *read_game(d).state.awaiting())
    run("resolve", d, "--now", at(deadline(d) - timedelta(hours=1)))
    path = d / "history" / "0001.toml"
    data = tomllib.loads(path.read_text())
    data["time"] = "2026-12-03T19:00:00+01:00"
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    early = r"resolution 1, history/0001.toml\): .*before the deadline 2026-12-03T20:00"
    with pytest.raises(AuditError, match=early):
        audit_game(d)


def test_audit_checks_the_autopilot_orders_as_resolve_checks_a_players(tmp_path: Path) -> None:
    import tomli_w

    from pbem.errors import AuditError

    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob")
    run("resolve", d, "--now", SETUP_DUE)
    assert "audit passed" in run("audit", d)
    path = d / "history" / "0001.toml"
    data = tomllib.loads(path.read_text())
    carol = next(o for o in data["orders"] if o["player"] == "carol")
    assert carol["autopilot"]
    carol["text"] = carol["text"].replace("turn = 0", "turn = 1", 1)
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    with pytest.raises(
        AuditError,
        match=r"resolution 1, history/0001.toml\): the autopilot's order file it used does not "
        r"pass the checks "
        r"resolve makes: .*these orders are for turn 1, a later turn; the pending turn is 0",
    ):
        audit_game(d)


def test_resolve_says_who_the_autopilot_played_for_and_who_left(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME, "--drop-after", "1", players="alice,bob")
    send(d, "alice")
    out = run("resolve", d, "--now", SETUP_DUE)
    assert "No orders from bob by the deadline." in out
    assert "bob missed 1 turn in a row and leaves the game" in out
    assert "The game is over: alice won." in out


def test_a_drop_is_told_with_the_armies_and_cards_left() -> None:
    from pbem.core.events import Dropped
    from pbem.present.report import narrate

    assert narrate(Dropped("carol", 3, 14, 43, 2), "alice") == (
        "carol missed 3 turns in a row and leaves the game: their 43 armies on 14 territories "
        "stay as neutral armies that only defend, their 2 cards go where traded cards go, and "
        "their seat is skipped."
    )
    assert "1 card goes" in narrate(Dropped("carol", 1, 1, 1, 1), None)
    assert "1 army on 1 territory" in narrate(Dropped("carol", 1, 1, 1, 1), None)


def interrupted_extension(directory: Path, why: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deadline extended by 24h, killed after the change was recorded in the history and
    before the game file followed it."""
    from pbem.game import deadlines

    def stopped(game: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(deadlines, "write_game", stopped)
    with pytest.raises(KeyboardInterrupt):
        deadlines.change_deadline(directory, clock.parse_instant(START), why, extend="24h")
    monkeypatch.undo()


def test_a_deadline_change_interrupted_before_the_game_file_is_completed_not_repeated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = new(tmp_path / "g", *ROME)
    interrupted_extension(d, "carol is away", monkeypatch)
    assert (d / "history" / "deadlines" / "0001-1.toml").exists()
    assert clock.iso(deadline(d)) != "2026-12-04T20:00:00+01:00"  # the game file lags
    assert "deadline differs" in run("audit", d, code=1)
    out = run("deadline", d, "--extend", "24h", "--why", "carol is away", "--now", START)
    assert "was interrupted" in out and "now complete" in out, out
    assert "Fri 4 Dec 2026, 20:00 CET" in out
    assert clock.iso(deadline(d)) == "2026-12-04T20:00:00+01:00"  # extended once, not twice
    assert not (d / "history" / "deadlines" / "0001-2.toml").exists()
    assert "audit passed" in run("audit", d)
    out = run("deadline", d, "--extend", "24h", "--why", "longer", "--now", START)
    assert "Sat 5 Dec 2026, 20:00 CET" in out and "change 2" in out


def test_of_two_deadline_changes_the_interrupted_second_is_the_one_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = new(tmp_path / "g", *ROME)
    run("deadline", d, "--extend", "24h", "--why", "carol is away", "--now", START)
    interrupted_extension(d, "bob is away too", monkeypatch)
    out = run("deadline", d, "--extend", "24h", "--why", "bob is away too", "--now", START)
    assert '(change 2 of this turn, "bob is away too") was interrupted' in out, out
    assert "Sat 5 Dec 2026, 20:00 CET" in out
    assert clock.iso(deadline(d)) == "2026-12-05T20:00:00+01:00"


def test_a_turn_whose_start_is_not_known_has_no_deadline_to_extend(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    first = d / "history" / "0000.toml"
    text = first.read_text()
    assert 'time = "2026-11-30T21:00:00+01:00"\n' in text
    first.write_text(text.replace('time = "2026-11-30T21:00:00+01:00"\n', ""))
    before = snapshot(d)
    out = run("deadline", d, "--extend", "1d", "--why", "x", "--now", START, code=1)
    assert "this turn has no deadline yet to extend: use --set" in out
    assert snapshot(d) == before
    run("deadline", d, "--set", "2026-12-05T20:00+01:00", "--why", "x", "--now", START)
    assert clock.iso(deadline(d)) == "2026-12-05T20:00:00+01:00"


def test_status_shows_the_deadline_in_the_games_zone_and_no_dropped_player_as_missing(
    tmp_path: Path,
) -> None:
    d = new(tmp_path / "g", *ROME)
    row = run("status", d, "--now", START).splitlines()[1]
    assert "2026-12-03 20:00 CET" in row  # the players' 20:00, not 19:00Z
    (data,) = json.loads(run("status", d, "--json", "--now", START))
    assert data["deadline"] == "2026-12-03T19:00Z"  # scripts keep UTC
    _drive_until_carol_is_dropped(d)
    (data,) = json.loads(run("status", d, "--json", "--now", START))
    assert "carol" not in (data["missed_turns"] or {})


def test_a_run_without_a_terminal_or_a_password_says_so_without_a_warning(
    tmp_path: Path,
) -> None:
    d = new(tmp_path / "g", players="alice=a@example.org,bob=b@example.org")
    run("config", d, "smtp_host=127.0.0.1", "smtp_port=9", "smtp_user=games")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBEM_")}
    done = subprocess.run(
        [sys.executable, "-m", "pbem", "mail", "send", str(d)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 1
    assert "Warning" not in done.stderr and "password for games" not in done.stdout
    assert done.stderr.endswith(
        "Error: no SMTP password for games at 127.0.0.1: set PBEM_SMTP_PASSWORD\n"
    )


def test_time_never_goes_backwards_in_the_history(tmp_path: Path) -> None:
    d = new(tmp_path / "g", *ROME)
    send(d, "alice", "bob", "carol")
    run("resolve", d, "--now", SETUP_DUE)
    send(d, *read_game(d).state.awaiting())
    before = snapshot(d)
    out = run("resolve", d, "--now", "2026-12-03T19:00:00+01:00", code=1)
    assert (
        "the time given (2026-12-03T19:00:00+01:00) is before the last resolution's "
        "(2026-12-03T20:00:00+01:00): time cannot go backwards in the history" in out
    )
    assert snapshot(d) == before
    run("resolve", d, "--now", SETUP_DUE)  # the same moment is not backwards


@pytest.mark.parametrize("resolved", ["19:59:00", "20:00:03", "23:10:00"])
def test_a_daily_game_stays_daily_however_late_its_turns_are_resolved(
    tmp_path: Path, resolved: str
) -> None:
    d = new(
        tmp_path / "g",
        "--turn-time", "24h", "--due-at", "20:00", "--timezone", "Europe/Rome",
        now="2027-03-24T20:00+01:00",
    )  # fmt: skip
    assert json.loads(run("status", d, "--json"))[0]["deadline"] == "2027-03-25T19:00Z"
    deadlines = []
    for day in range(25, 31):  # across the change to summer time, on the 28th
        send(d, *read_game(d).state.awaiting())
        run("resolve", d, "--now", f"2027-03-{day}T{resolved}+0{1 if day < 28 else 2}:00")
        deadlines.append(clock.iso(read_game(d).deadline, clock.zone("Europe/Rome")))  # type: ignore[arg-type]
    assert deadlines == [
        f"2027-03-{day}T20:00:00+0{1 if day < 28 else 2}:00" for day in range(26, 32)
    ]


def test_a_game_made_before_the_tolerance_keeps_its_deadlines(tmp_path: Path) -> None:
    d = new(tmp_path / "g", "--turn-time", "24h", "--due-at", "20:00", now="2027-03-24T20:00Z")
    for path in (d / "game.toml", d / "history" / "0000.toml"):  # as a game of before
        assert 'tolerance = "6h"\n' in path.read_text()
        path.write_text(path.read_text().replace('tolerance = "6h"\n', ""))
    send(d, *read_game(d).state.awaiting())
    run("resolve", d, "--now", "2027-03-25T20:00:03Z")
    assert clock.iso(read_game(d).deadline) == "2027-03-27T20:00:00+00:00"  # type: ignore[arg-type]
    assert audit_game(d).resolutions == 2


def notices(d: Path) -> dict[str, list[str]]:
    """The notices in the outbox, by address: subject and text."""
    from email import policy
    from email.parser import BytesParser

    out: dict[str, list[str]] = {}
    for path in sorted((d / "outbox").glob("notice-*.eml")):
        msg = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        text = f"{msg['Subject']}\n{msg.get_content()}"  # type: ignore[attr-defined]
        out.setdefault(str(msg["To"]), []).append(text)
    return out


def test_a_deadline_change_and_an_undo_are_told_to_every_player(tmp_path: Path) -> None:
    players = "alice=alice@example.org,bob=bob@example.org:it,carol"
    d = new(tmp_path / "g", *ROME, players=players)
    out = run("deadline", d, "--extend", "24h", "--why", "carol is on holiday", "--now", START)
    assert "The players are told: 2 messages in outbox/" in out  # carol has no address
    told = notices(d)
    assert flat(told["alice@example.org"][0]).startswith(  # (the text wrapped to 78 columns)
        "[g] turn 0 now due by Fri 4 Dec 2026, 20:00 CET, in 3 days "
        "The deadline of turn 0 of g has moved: it is now due by Fri 4 Dec 2026, 20:00 CET, in "
        "3 days (carol is on holiday)."
    )
    assert "venerdì 4 dicembre 2026" in told["bob@example.org"][0]  # in bob's language
    run("deadline", d, "--extend", "24h", "--why", "carol is on holiday", "--now", START)
    assert len(list((d / "outbox").glob("notice-*.eml"))) == 4  # a second change, told again
    send(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2026-12-05T20:00+01:00")
    out = run("undo", d, "--why", "bob's orders came late", "--now", "2026-12-05T21:00+01:00")
    assert "The players are told: 2 messages in outbox/" in out
    (alice,) = [t for t in notices(d)["alice@example.org"] if "taken back" in t]
    assert alice.startswith("[g] turn 0 taken back: bob's orders came late\n")
    assert "It will be played again" in flat(alice) and "Turn 0 is due by" in flat(alice)
    assert "same dice" not in alice  # the setup turn rolls none


def test_without_a_time_a_missed_turn_is_not_played_by_the_autopilot(tmp_path: Path) -> None:
    """Called without `now` (the library, not the command line, which reads the clock), a game
    with deadlines cannot tell whether a silent player's turn is due: it says what to give."""
    from pbem.game import processor

    game = new(tmp_path / "g", *ROME)
    send(game, "alice", "bob")
    before = snapshot(game)
    with pytest.raises(processor.NotReady, match="the deadline is not known: give the time"):
        processor.resolve_game(game)
    assert snapshot(game) == before


def test_a_deadline_change_cannot_be_changed_once_made() -> None:
    """What the history records of a moved deadline is handed out as it is, never changed in
    place by whoever reads it."""
    import dataclasses

    from pbem.records.deadline_changes import DeadlineChange

    change = DeadlineChange(1, 1, START, SETUP_DUE, None, "a storm")
    with pytest.raises(dataclasses.FrozenInstanceError):
        change.deadline = START  # type: ignore[misc]
    assert hash(change) == hash(DeadlineChange(1, 1, START, SETUP_DUE, None, "a storm"))
