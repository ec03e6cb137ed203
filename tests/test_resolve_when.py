"""When cron resolves a turn whose orders are all in: at once (the default), at the deadline
(`resolve = "at-deadline"`), or a grace period after the last orders came in, for a player's
correction (`grace = "30m"`)."""

from __future__ import annotations

from pathlib import Path

from test_mail import T0, into_maildir, message, orders_for, run

from pbem.records.history import read_history
from pbem.records.opening import read_game

PLAYERS = "ann=ann@example.org,ben=ben@example.org"


def make(root: Path, *settings: str, started: str = "2027-02-27T12:00Z") -> Path:
    d = root / "g"
    run("new", d, "--players", PLAYERS, "--seed", "33" * 32, "--turn-time", "48h", "--now", started)
    if settings:
        run("config", d, *settings)
    return d


def status_row(root: Path, now: str) -> str:
    return run("status", root, "--now", now).splitlines()[1]


def test_at_deadline_waits_for_the_deadline_though_every_order_is_in(tmp_path: Path) -> None:
    d = make(tmp_path / "games", "resolve=at-deadline")
    for player in ("ann", "ben"):
        (d / "orders" / f"{player}.toml").write_text(orders_for(d, player))
    row = status_row(d.parent, "2027-02-28T12:00Z")
    assert row.startswith("waiting") and "resolved at the deadline, 2027-03-01T12:00Z" in row
    run("run", d.parent, "--now", "2027-02-28T12:00Z")
    assert read_game(d).state.resolution == 1
    run("run", d.parent, "--now", "2027-03-01T12:00Z")
    assert read_game(d).state.resolution == 2
    record = read_history(d, 1)
    assert not any(o.autopilot for o in record.orders)  # the players' own, at the deadline


def test_a_grace_period_after_the_last_orders_leaves_time_for_a_correction(
    tmp_path: Path,
) -> None:
    d = make(tmp_path / "games", "grace=30m", started="2027-02-28T12:00Z")
    msgs = [
        message("ann@example.org", orders_for(d, "ann"), minutes=0, mid="<a@t>"),
        message("ben@example.org", orders_for(d, "ben"), minutes=5, mid="<b@t>"),
    ]
    box = into_maildir(tmp_path / "Maildir", msgs)
    run("mail", "fetch", d, "--maildir", box, "--now", "2027-03-01T12:10Z")
    assert T0.isoformat().startswith("2027-03-01T12:00")
    row = status_row(d.parent, "2027-03-01T12:20Z")
    assert row.startswith("waiting") and "resolved from 2027-03-01T12:35Z" in row
    run("run", d.parent, "--now", "2027-03-01T12:20Z")
    assert read_game(d).state.resolution == 1
    run("run", d.parent, "--now", "2027-03-01T12:35Z")
    assert read_game(d).state.resolution == 2


def test_the_default_resolves_as_soon_as_every_order_is_in(tmp_path: Path) -> None:
    d = make(tmp_path / "games")
    for player in ("ann", "ben"):
        (d / "orders" / f"{player}.toml").write_text(orders_for(d, player))
    run("run", d.parent, "--now", "2027-02-27T13:00Z")
    assert read_game(d).state.resolution == 2


def test_the_settings_are_checked(tmp_path: Path) -> None:
    d = make(tmp_path / "games")
    assert "resolve must be when-ready or at-deadline" in run("config", d, "resolve=soon", code=1)
    assert "grace must be a duration like 30m" in run("config", d, "grace=later", code=1)
