"""Vacations: `pbem vacation DIR PLAYER --from --to`, within an allowance; the turns a player
away is awaited in wait for them, or the autopilot plays them without a missed turn."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem.cli import main
from pbem.core.events import Away, MissedTurn
from pbem.errors import AuditError, PbemError
from pbem.game import vacations
from pbem.game.audit import audit_game
from pbem.records import away as recorded
from pbem.records import clock
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

START = "2027-03-01T10:00:00+00:00"
SEED = "09" * 32


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def at(text: str) -> datetime:
    return clock.parse_instant(text)


def make_at(tmp_path: Path, *options: str) -> Path:
    d = tmp_path / "g"
    run("new", d, "--players", "alice,bob,carol", "--seed", SEED, "--turn-time", "2d",
        "--now", START, *options)  # fmt: skip
    return d


def ready(d: Path, *players: str) -> None:
    for p in players:
        source = report_dir(d, read_game(d).state.resolution - 1) / f"{p}.orders.toml"
        (d / "orders" / f"{p}.toml").write_text(source.read_text())


def away(d: Path, player: str, start: str, end: str, now: str, code: int = 0) -> str:
    return run("vacation", d, player, "--from", start, "--to", end, "--now", now, code=code)


def test_a_turn_waits_for_a_player_away_with_the_time_that_was_left(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    assert read_game(d).deadline == at("2027-03-03T10:00Z")
    out = away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    assert out.startswith("bob is away from 2027-03-02 to 2027-03-05 (4 days); recorded")
    # away from 2 March 00:00 to 6 March 00:00; 34 hours of the turn were left on 2 March
    assert read_game(d).deadline == at("2027-03-07T10:00Z")
    assert "Turn 0 is due by Sun 7 Mar 2027, 10:00 UTC." in out
    [v] = recorded.vacations(d)
    assert (v.player, v.start, v.end, v.days, v.time) == (
        "bob", date(2027, 3, 2), date(2027, 3, 5), 4, "2027-03-01T12:00:00+00:00"
    )  # fmt: skip
    ready(d, "alice", "carol")
    out = run("resolve", d, "--now", "2027-03-04T10:00Z", code=1)  # past the old deadline
    assert "bob" in out
    ready(d, "bob")
    run("resolve", d, "--now", "2027-03-04T11:00Z")
    text = (report_dir(d, 1) / "carol.txt").read_text()
    assert "bob is away from 2 March 2027 to 5 March 2027." in text
    assert audit_game(d).resolutions == 2


def test_a_turn_that_does_not_await_the_player_away_does_not_wait(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    ready(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-01T11:00Z")
    first = read_game(d).state.current_player.name
    other = next(p for p in ("alice", "bob", "carol") if p != first)
    before = read_game(d).deadline
    away(d, other, "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    assert read_game(d).deadline == before
    away(d, first, "2027-03-02", "2027-03-03", "2027-03-01T12:00Z")
    assert read_game(d).deadline == at("2027-03-04T00:00Z") + (before - at("2027-03-02T00:00Z"))
    assert audit_game(d).resolutions == 2


def test_in_a_game_that_plays_on_the_autopilot_plays_without_a_missed_turn(
    tmp_path: Path,
) -> None:
    d = make_at(tmp_path, "--vacation-mode", "autopilot", "--drop-after", "1")
    away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    assert read_game(d).deadline == at("2027-03-03T10:00Z")  # the turn does not wait
    ready(d, "alice")
    run("resolve", d, "--now", "2027-03-03T11:00Z", "--force")
    events = read_history(d, 1).events
    assert Away("bob", 0, "2027-03-05") in events
    assert MissedTurn("carol", 0, 1) in events  # not away: missed, and dropped at one
    assert not any(isinstance(e, MissedTurn) and e.player == "bob" for e in events)
    state = read_game(d).state
    assert state.player("bob").alive and state.player("bob").missed == 0
    assert state.player("carol").dropped
    story = " ".join((report_dir(d, 1) / "alice.txt").read_text().split())
    assert "bob is away until 2027-03-05: the autopilot played the turn" in story
    assert audit_game(d).resolutions == 2
    (d / "history" / "vacations" / "0001-1.toml").unlink()
    with pytest.raises(AuditError, match="recorded as a vacation's, but no vacation"):
        audit_game(d)


def test_a_vacation_declared_after_the_deadline_saves_nothing(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    away(d, "bob", "2027-03-03", "2027-03-06", "2027-03-03T11:00Z")  # an hour late
    assert read_game(d).deadline == at("2027-03-03T10:00Z")
    assert audit_game(d).resolutions == 1


LEFT = "days are more than bob's allowance left"
CASES = [
    ((), [("2027-03-02", "2027-03-15")], None),
    ((), [("2027-03-02", "2027-03-16")], f"15 {LEFT} in this game: 14 of 14 days"),
    (
        (),
        [("2027-03-02", "2027-03-11"), ("2027-04-01", "2027-04-05")],
        f"5 {LEFT} in this game: 4 of 14 days",
    ),
    (("--vacation", "5d/year"), [("2027-12-27", "2027-12-31"), ("2028-01-01", "2028-01-05")], None),
    (
        ("--vacation", "5d/year"),
        [("2027-12-27", "2027-12-30"), ("2027-12-31", "2028-01-01")],
        f"2 {LEFT} in 2027: 1 of 5 days",
    ),
    (("--vacation", "0"), [("2027-03-02", "2027-03-02")], "this game allows no vacations"),
    (
        (),
        [("2027-03-02", "2027-03-05"), ("2027-03-05", "2027-03-06")],
        "bob is away from 2027-03-02 to 2027-03-05 already",
    ),
    ((), [("2027-03-05", "2027-03-02")], "the vacation ends (2027-03-02) before it begins"),
    ((), [("2027-02-20", "2027-02-28")], "the vacation ended already (2027-02-28; today is"),
]


@pytest.mark.parametrize(("options", "spans", "words"), CASES)
def test_the_allowance_and_the_dates_are_kept(
    tmp_path: Path, options: tuple[str, ...], spans: list[tuple[str, str]], words: str | None
) -> None:
    d = make_at(tmp_path, *options)
    *before, last = spans
    for start, end in before:
        away(d, "bob", start, end, "2027-03-01T12:00Z")
    kept = [p.read_bytes() for p in sorted(d.rglob("*.toml"))]
    if words is None:
        away(d, "bob", *last, "2027-03-01T12:00Z")
        assert audit_game(d).resolutions == 1
        return
    out = away(d, "bob", *last, "2027-03-01T12:00Z", code=1)
    assert f"no vacation for bob: {words}" in out
    assert [p.read_bytes() for p in sorted(d.rglob("*.toml"))] == kept


def test_a_vacation_under_way_counts_from_today(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    out = away(d, "bob", "2027-02-25", "2027-03-03", "2027-03-01T12:00Z")
    assert out.startswith("bob is away from 2027-03-01 to 2027-03-03 (3 days)")


def test_a_game_without_deadlines_or_a_player_not_in_it_has_no_vacation(tmp_path: Path) -> None:
    d = tmp_path / "g"
    run("new", d, "--players", "alice,bob", "--seed", SEED)
    out = away(d, "bob", "2027-03-02", "2027-03-03", "2027-03-01T12:00Z", code=1)
    assert "has no deadlines" in out
    d2 = make_at(tmp_path / "x")
    out = away(d2, "dave", "2027-03-02", "2027-03-03", "2027-03-01T12:00Z", code=1)
    assert "there is no player 'dave' in this game" in out
    out = run("new", tmp_path / "h", "--players", "a,b", "--vacation", "3d", code=1)
    assert "--vacation and --vacation-mode need --turn-time" in out
    out = run(
        "new", tmp_path / "i", "--players", "a,b", "--turn-time", "1d", "--vacation", "x", code=1
    )
    assert "--vacation must be days for the game (14d), for each year (14d/year) or 0" in out
    out = away(d2, "bob", "2027-3-2", "2027-03-03", "2027-03-01T12:00Z", code=1)
    assert "--from must be a day written YYYY-MM-DD, not '2027-3-2'" in out


def test_the_audit_refuses_a_vacation_beyond_the_allowance(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    path = d / "history" / "vacations" / "0001-1.toml"
    path.write_text(path.read_text().replace('to = "2027-03-05"', 'to = "2027-03-25"'))
    with pytest.raises(AuditError, match="0001-1.toml: 24 days are more than bob's allowance"):
        audit_game(d)


def test_the_allowance_is_recorded_only_when_it_is_not_the_default(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    assert "vacation" not in (d / "game.toml").read_text()
    e = make_at(tmp_path / "e", "--vacation", "20d/year", "--vacation-mode", "autopilot")
    text = (e / "game.toml").read_text()
    assert 'vacation_days = 20\nvacation_per = "year"\nvacation_mode = "autopilot"' in text
    schedule = read_game(e).schedule
    assert schedule is not None
    assert (schedule.vacation_days, schedule.vacation_per, schedule.vacation_mode) == (
        20, "year", "autopilot"
    )  # fmt: skip
    with pytest.raises(PbemError, match="vacation_mode must be 'wait' or 'autopilot'"):
        clock.Schedule.from_dict({"turn_time": "1d", "vacation_mode": "sleep"})


def test_an_interrupted_vacation_is_completed_by_running_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = make_at(tmp_path)

    def broken(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(vacations, "write_game", broken)
    with pytest.raises(OSError):
        vacations.declare(d, "bob", date(2027, 3, 2), date(2027, 3, 5), at("2027-03-01T12:00Z"))
    monkeypatch.undo()
    with pytest.raises(AuditError, match="'pbem vacation' run was interrupted, run it again"):
        audit_game(d)
    out = away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:30Z")
    assert out.startswith("bob is away from 2027-03-02 to 2027-03-05 (4 days)")
    assert len(recorded.vacations(d)) == 1
    assert read_game(d).deadline == at("2027-03-07T10:00Z")
    assert audit_game(d).resolutions == 1


def test_a_deadline_moved_by_the_moderator_still_waits_for_a_player_away(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    away(d, "bob", "2027-03-04", "2027-03-06", "2027-03-01T12:00Z")
    assert read_game(d).deadline == at("2027-03-03T10:00Z")  # before his vacation
    out = run("deadline", d, "--extend", "1d", "--why", "x", "--now", "2027-03-01T13:00Z")
    # 4 March 10:00 falls in it: 10 hours were left when he left, after 7 March 00:00
    assert read_game(d).deadline == at("2027-03-07T10:00Z")
    assert "Sun 7 Mar 2027, 10:00 UTC" in out
    assert audit_game(d).resolutions == 1


@pytest.mark.parametrize("carol_first", [True, False])
def test_the_clock_stops_while_anyone_awaited_is_away(tmp_path: Path, carol_first: bool) -> None:
    d = make_at(tmp_path)  # the setup turn, from 1 March 10:00, due 3 March 10:00
    spans = [("carol", "2027-03-01", "2027-03-03"), ("bob", "2027-03-02", "2027-03-05")]
    for player, start, end in spans if carol_first else reversed(spans):
        away(d, player, start, end, "2027-03-01T10:30Z")
    # the clock ran from 10:00 to 10:30 (carol's counts from when it was declared), stopped
    # to 6 March 00:00, then runs the 47.5 hours left
    assert read_game(d).deadline == at("2027-03-07T23:30Z")
    assert audit_game(d).resolutions == 1


def test_a_turn_begun_during_a_vacation_gets_its_whole_time_across_a_clock_change(
    tmp_path: Path,
) -> None:
    d = tmp_path / "g"
    run("new", d, "--players", "alice,bob,carol", "--seed", SEED, "--turn-time", "2d",
        "--timezone", "Europe/Rome", "--now", "2027-03-25T10:00Z")  # fmt: skip
    for p in ("alice", "bob", "carol"):
        away(d, p, "2027-03-27", "2027-03-30", "2027-03-25T10:30Z")
    ready(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-27T19:00Z")  # during everyone's vacation
    assert read_game(d).deadline == at("2027-04-02T00:00+02:00")  # 2 days of the wall clock
    assert audit_game(d).resolutions == 2


def test_players_away_in_a_game_that_plays_on_are_no_outage(tmp_path: Path) -> None:
    d = make_at(tmp_path, "--vacation-mode", "autopilot")
    away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    away(d, "carol", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    ready(d, "alice")
    run("resolve", d, "--now", "2027-03-03T11:00Z")  # no --force needed: they are away
    events = read_history(d, 1).events
    assert {e.player for e in events if isinstance(e, Away)} == {"bob", "carol"}


def test_a_player_away_in_a_game_that_plays_on_is_not_reminded(tmp_path: Path) -> None:
    from pbem.mail.reminders import queue_reminders
    from pbem.records import settings

    d = tmp_path / "g"
    players = "alice=a@example.org,bob=b@example.org,carol=c@example.org"
    run("new", d, "--players", players, "--seed", SEED, "--turn-time", "2d",
        "--vacation-mode", "autopilot", "--now", START)  # fmt: skip
    away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    run("config", d, "remind=24h", "from=mod@example.org")
    queued = queue_reminders(d, settings.in_force(d, read_game(d).mail), at("2027-03-02T11:00Z"))
    told = " ".join((d / "outbox" / name).read_text() for name in queued.queued)
    assert len(queued.queued) == 2
    assert "a@example.org" in told and "c@example.org" in told and "b@example.org" not in told


def test_a_vacation_declared_after_an_early_turn_still_counts_once_it_is_undone(
    tmp_path: Path,
) -> None:
    d = make_at(tmp_path)
    ready(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-01T11:00Z")
    first = read_game(d).state.current_player.name
    ready(d, first)
    run("resolve", d, "--now", "2027-03-01T12:00Z")  # resolved long before its deadline
    away(d, first, "2027-03-02", "2027-03-08", "2027-03-01T13:00Z")
    run("undo", d, "--why", "redo", "--now", "2027-03-01T14:00Z")
    # the first player's turn again: it waits for them (it was due 3 March 11:00)
    assert read_game(d).deadline == at("2027-03-09T00:00Z") + timedelta(hours=35)
    assert audit_game(d).resolutions == 2


def test_a_substitute_is_not_away_and_has_their_own_allowance(tmp_path: Path) -> None:
    d = make_at(tmp_path)
    away(d, "bob", "2027-03-02", "2027-03-12", "2027-03-01T12:00Z")
    assert read_game(d).deadline > at("2027-03-13T00:00Z")
    run("substitute", d, "bob", "--to", "erin=erin@example.org", "--now", "2027-03-01T13:00Z")
    assert read_game(d).deadline == at("2027-03-03T10:00Z")  # erin is not away
    out = away(d, "bob", "2027-03-20", "2027-03-30", "2027-03-01T14:00Z")
    assert out.startswith("bob is away from 2027-03-20 to 2027-03-30 (11 days)")
    assert audit_game(d).resolutions == 1


def test_a_vacation_waits_for_a_resolution_half_written_and_a_rerun_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pbem.game import processor

    d = make_at(tmp_path)
    ready(d, "alice", "bob", "carol")

    def broken(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(processor, "write_game", broken)
    with pytest.raises(OSError):
        processor.resolve_game(d, now=at("2027-03-01T11:00Z"))
    monkeypatch.undo()
    out = away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z", code=1)
    assert "a resolution was interrupted: run 'pbem resolve' to finish it" in out
    run("resolve", d, "--now", "2027-03-01T11:00Z")
    again = away(d, "alice", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    assert again == away(d, "alice", "2027-03-02", "2027-03-05", "2027-03-01T12:30Z")
    assert len(recorded.vacations(d)) == 1
    out = away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T10:59Z", code=1)
    assert "is before the last resolution's" in out


def test_the_players_are_told_when_a_vacation_moves_the_deadline(tmp_path: Path) -> None:
    d = tmp_path / "g"
    run("new", d, "--players", "alice=a@example.org,bob=b@example.org", "--seed", SEED,
        "--turn-time", "2d", "--now", START)  # fmt: skip
    out = away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:00Z")
    assert "The players are told: 2 messages in outbox/" in out
    text = " ".join(p.read_text() for p in (d / "outbox").glob("*.eml"))
    assert "bob is away from 2 March 2027 to 5 March 2027" in " ".join(text.split())


def test_a_vacation_stopped_before_the_players_were_told_tells_them_when_run_again(
    tmp_path: Path,
) -> None:
    d = tmp_path / "g"
    run("new", d, "--players", "alice=a@example.org,bob=b@example.org", "--seed", SEED,
        "--turn-time", "2d", "--now", START)  # fmt: skip
    # recorded, game.toml written, then stopped before the notices were queued
    vacations.declare(d, "bob", date(2027, 3, 2), date(2027, 3, 5), at("2027-03-01T12:00Z"))
    assert not list((d / "outbox").glob("notice-*.eml"))
    out = away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T12:30Z")
    assert "The players are told: 2 messages in outbox/" in out
    assert len(recorded.vacations(d)) == 1
    names = sorted(p.name for p in (d / "outbox").glob("notice-*.eml"))
    assert len(names) == 2
    away(d, "bob", "2027-03-02", "2027-03-05", "2027-03-01T13:00Z")  # the same, once more
    assert sorted(p.name for p in (d / "outbox").glob("notice-*.eml")) == names
    # a vacation that moves no deadline tells no one, however often it is asked
    out = away(d, "alice", "2027-04-20", "2027-04-21", "2027-03-01T13:00Z")
    out += away(d, "alice", "2027-04-20", "2027-04-21", "2027-03-01T13:30Z")
    assert "The players are told" not in out


@pytest.mark.parametrize("value", ["\u00b2d", "-1d", "14x", "1e3d"])
def test_an_allowance_that_is_not_a_number_of_days_is_a_sentence(
    tmp_path: Path, value: str
) -> None:
    out = run("new", tmp_path / "g", "--players", "a,b", "--turn-time", "1d", "--vacation",
              value, code=1)  # fmt: skip
    assert "--vacation must be days for the game (14d)" in out
