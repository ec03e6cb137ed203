"""Deadlines on the clock: durations, due times, time zones and daylight saving."""

from __future__ import annotations

from datetime import time, timedelta

import pytest

from pbem.errors import PbemError
from pbem.records.clock import (
    Schedule,
    describe,
    format_duration,
    iso,
    next_deadline,
    parse_duration,
    parse_instant,
    parse_time_of_day,
    zone,
)

ROME = "Europe/Rome"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("36h", timedelta(hours=36)),
        ("2d", timedelta(days=2)),
        ("90m", timedelta(minutes=90)),
        ("1d12h", timedelta(hours=36)),
        (" 48H ", timedelta(hours=48)),
    ],
)
def test_durations_are_days_hours_and_minutes(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "48", "two days", "2w", "0h", "-3h", "3h x"])
def test_a_bad_duration_says_how_to_write_one(text: str) -> None:
    with pytest.raises(PbemError, match="48h|longer than 0"):
        parse_duration(text)


def test_a_duration_prints_back_as_it_parses() -> None:
    for text in ("36h", "2d", "90m", "1d12h", "1h30m"):
        assert parse_duration(format_duration(parse_duration(text))) == parse_duration(text)
    assert format_duration(timedelta(hours=48)) == "2d"


def test_due_times_are_on_the_24_hour_clock() -> None:
    assert parse_time_of_day("20:00") == time(20, 0)
    assert parse_time_of_day("7:05") == time(7, 5)
    for bad in ("24:00", "8pm", "20.00", "20:60"):
        with pytest.raises(PbemError, match="HH:MM"):
            parse_time_of_day(bad)


def test_an_unknown_time_zone_is_named() -> None:
    assert zone(ROME).key == ROME
    with pytest.raises(PbemError, match="'Europe/Atlantis' is not a time zone"):
        zone("Europe/Atlantis")


def test_a_time_needs_its_offset() -> None:
    assert iso(parse_instant("2026-12-03T20:00+01:00")) == "2026-12-03T20:00:00+01:00"
    assert iso(parse_instant("2026-12-03T19:00Z")) == "2026-12-03T19:00:00+00:00"
    with pytest.raises(PbemError, match="has no offset"):
        parse_instant("2026-12-03T20:00")
    with pytest.raises(PbemError, match="not an ISO 8601 time"):
        parse_instant("tomorrow")


def test_a_turn_is_due_turn_time_after_the_resolution() -> None:
    schedule = Schedule(timedelta(hours=36))
    deadline = next_deadline(parse_instant("2026-12-01T08:00Z"), schedule)
    assert iso(deadline) == "2026-12-02T20:00:00+00:00"


def test_the_deadline_moves_forward_to_the_next_due_time_in_the_zone() -> None:
    schedule = Schedule(timedelta(hours=48), time(20, 0), ROME)
    after = parse_instant("2026-11-30T21:00+01:00")
    assert iso(next_deadline(after, schedule)) == "2026-12-03T20:00:00+01:00"
    exactly = parse_instant("2026-11-30T20:00+01:00")
    assert iso(next_deadline(exactly, schedule)) == "2026-12-02T20:00:00+01:00"


@pytest.mark.parametrize(
    ("previous", "expected"),
    [
        # The last Sunday of March 2027 (the 28th): clocks go from 02:00 CET to 03:00 CEST.
        ("2027-03-27T20:00+01:00", "2027-03-28T20:00:00+02:00"),
        ("2027-03-26T20:00+01:00", "2027-03-28T20:00:00+02:00"),
        # The last Sunday of October 2027 (the 31st): from 03:00 CEST back to 02:00 CET.
        ("2027-10-30T20:00+02:00", "2027-10-31T20:00:00+01:00"),
        ("2027-10-31T20:00+01:00", "2027-11-01T20:00:00+01:00"),
    ],
)
def test_a_daily_deadline_stays_at_its_time_across_daylight_saving(
    previous: str, expected: str
) -> None:
    days = 1 if previous[8:10] in ("27", "30", "31") else 2
    schedule = Schedule(timedelta(days=days), time(20, 0), ROME)
    assert iso(next_deadline(parse_instant(previous), schedule)) == expected


def test_a_due_time_the_spring_change_skips_comes_an_hour_later() -> None:
    schedule = Schedule(timedelta(hours=24), time(2, 30), ROME)
    deadline = next_deadline(parse_instant("2027-03-27T01:00+01:00"), schedule)
    assert iso(deadline) == "2027-03-28T03:30:00+02:00"


def test_a_due_time_the_autumn_change_repeats_is_its_first_occurrence() -> None:
    schedule = Schedule(timedelta(hours=24), time(2, 30), ROME)
    deadline = next_deadline(parse_instant("2027-10-30T01:00+02:00"), schedule)
    assert iso(deadline) == "2027-10-31T02:30:00+02:00"


def test_a_deadline_reads_with_weekday_zone_and_time_left() -> None:
    deadline = parse_instant("2026-12-02T20:00+01:00")
    now = parse_instant("2026-11-30T21:00+01:00")
    assert describe(deadline, zone(ROME), now) == "Wed 2 Dec 2026, 20:00 CET, in 47 hours"
    summer = parse_instant("2027-07-01T20:00+02:00")
    assert describe(summer, zone(ROME)) == "Thu 1 Jul 2027, 20:00 CEST"
    assert describe(deadline, zone(ROME), deadline + timedelta(minutes=30)).endswith(
        "30 minutes ago"
    )
    assert describe(deadline, zone(ROME), deadline - timedelta(days=5)).endswith("in 5 days")


def test_a_schedule_round_trips_through_the_game_file() -> None:
    schedule = Schedule(timedelta(hours=36), time(20, 0), ROME)
    assert Schedule.from_dict(schedule.to_dict()) == schedule
    assert Schedule.from_dict({"turn_time": "2d"}) == Schedule(timedelta(days=2))


@pytest.mark.parametrize(
    ("left", "words"),
    [
        (timedelta(0), "in 0 minutes"),
        (timedelta(minutes=1), "in 1 minute"),
        (timedelta(minutes=119, seconds=59), "in 119 minutes"),
        (timedelta(minutes=120), "in 2 hours"),
        (timedelta(hours=71, minutes=59), "in 71 hours"),
        (timedelta(hours=72), "in 3 days"),
        (timedelta(days=4, minutes=-1), "in 3 days"),
        (-timedelta(seconds=1), "0 minutes ago"),
        (-timedelta(minutes=1), "1 minute ago"),
        (-timedelta(hours=3), "3 hours ago"),
    ],
)
def test_the_time_left_is_in_minutes_then_hours_then_days(left: timedelta, words: str) -> None:
    deadline = parse_instant("2026-12-02T20:00+01:00")
    assert describe(deadline, zone(ROME), deadline - left).endswith(f", {words}")


def test_durations_print_without_empty_units_and_times_take_a_small_z() -> None:
    assert format_duration(timedelta(days=1, minutes=30)) == "1d30m"
    assert format_duration(timedelta(0)) == "0m"
    assert iso(parse_instant("2026-12-03T20:00z")) == "2026-12-03T20:00:00+00:00"
    assert iso(parse_instant("2026-12-03T20:00:00.750+01:00")) == "2026-12-03T20:00:00+01:00"
