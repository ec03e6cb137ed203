"""Reminders: `remind = "24h, 2h"` mails each awaited player without valid orders that long
before the deadline, once each, and a run again sends nothing more."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_mail import Server, orders_for, run, running_server

ROME = ["--turn-time", "48h", "--due-at", "20:00", "--timezone", "Europe/Rome"]
START = "2026-11-30T21:00+01:00"
"""The setup turn is due on Thursday 3 December, 20:00 in Rome."""
PLAYERS = "alice=alice@example.org,bob=bob@example.org,carol=carol@example.org"


@pytest.fixture
def smtp() -> Iterator[Server]:
    yield from running_server()


@pytest.fixture
def game(tmp_path: Path, smtp: Server) -> Path:
    root = tmp_path / "games"
    d = root / "rome"
    run("new", d, "--players", PLAYERS, "--seed", "22" * 32, "--now", START, *ROME)
    run("config", root, "smtp_host=127.0.0.1", f"smtp_port={smtp.port}", "remind=24h, 2h")
    run("run", root, "--send", "--now", START)  # the setup reports
    smtp.recorder.received.clear()
    return d


def reminders(smtp: Server) -> list[tuple[str, str]]:
    return sorted(
        (str(m["To"]), " ".join(str(m["Subject"]).split()))
        for m in smtp.recorder.messages()
        if "reminder" in str(m["Subject"])
    )


def test_each_player_without_orders_is_reminded_once_at_each_time(game: Path, smtp: Server) -> None:
    root = game.parent
    (game / "orders" / "alice.toml").write_text(orders_for(game, "alice"))
    run("run", root, "--send", "--now", "2026-12-02T19:00+01:00")  # 25 hours before
    assert reminders(smtp) == []
    out = run("run", root, "--send", "--now", "2026-12-02T20:30+01:00")
    assert "reminder queued" in out
    first = reminders(smtp)
    assert [to for to, _ in first] == ["bob@example.org", "carol@example.org"]  # not alice
    assert all(
        s.startswith("[rome] reminder: the setup turn is due by Thu 3 Dec 2026, 20:00 CET")
        for _, s in first
    )
    (bob,) = [m for m in smtp.recorder.messages() if m["To"] == "bob@example.org"]
    text = bob.get_content()
    assert "pbem has no valid orders from you yet" in text
    assert "If you miss this turn, you may miss 2 more in a row before you leave the game." in text
    run("run", root, "--send", "--now", "2026-12-02T21:00+01:00")  # again: nothing more
    assert len(reminders(smtp)) == 2
    (game / "orders" / "bob.toml").write_text(orders_for(game, "bob"))
    run("run", root, "--send", "--now", "2026-12-03T18:30+01:00")  # 90 minutes before
    assert len(reminders(smtp)) == 3 and reminders(smtp).count(first[1]) == 1
    assert [to for to, _ in reminders(smtp)].count("carol@example.org") == 2
    run("run", root, "--send", "--now", "2026-12-03T18:45+01:00")
    assert len(reminders(smtp)) == 3


def test_after_a_gap_only_the_latest_reminder_goes(game: Path, smtp: Server) -> None:
    run("run", game.parent, "--send", "--now", "2026-12-03T19:00+01:00")  # both times passed
    assert [to for to, _ in reminders(smtp)] == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]
    run("run", game.parent, "--send", "--now", "2026-12-03T19:30+01:00")
    assert len(reminders(smtp)) == 3


def test_no_reminder_after_the_deadline_or_without_the_setting(game: Path, smtp: Server) -> None:
    run("config", game.parent, "remind=")
    run("run", game.parent, "--send", "--now", "2026-12-03T19:00+01:00")
    assert reminders(smtp) == []
    run("config", game.parent, "remind=2h")
    out = run("run", game.parent, "--send", "--now", "2026-12-03T20:30+01:00", code=0)
    assert reminders(smtp) == [] and "reminder queued" not in out


def test_a_reminder_setting_must_be_durations(game: Path) -> None:
    out = run("config", game.parent, "remind=tomorrow", code=1)
    assert 'remind must be durations before the deadline like 24h or "24h, 2h"' in out
