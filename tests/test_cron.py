"""The README's cron line, as pasted: in an environment as bare as cron's (`env -i`, PATH and
HOME only), against a real IMAP server and a real SMTP server, it mails a new game's first
reports with the player's kit, then plays a turn whose orders came by mail."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dovecot import PASSWORD, USER, Dovecot, start
from test_mail import Server, message, orders_for, run, running_server

from pbem.records.opening import read_game

README = Path(__file__).resolve().parent.parent / "README.md"
PLAYERS = "ann=ann@example.org,ben=ben@example.org"


def cron_line() -> str:
    """The command of the README's crontab line (after its five time fields)."""
    block = re.search(r"```crontab\n(.*?)\n```", README.read_text(), re.S)
    assert block is not None, "the README has no crontab block"
    fields = block.group(1).strip().split(None, 5)
    assert fields[:5] == ["*/10", "*", "*", "*", "*"]
    return fields[5]


@pytest.fixture
def dovecot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dovecot]:
    yield from start(tmp_path_factory.mktemp("dovecot"))


@pytest.fixture
def smtp() -> Iterator[Server]:
    yield from running_server()


def test_the_readme_cron_line_mails_the_kit_then_plays_a_turn_sent_by_mail(
    tmp_path: Path, dovecot: Dovecot, smtp: Server
) -> None:
    home = tmp_path / "srv"
    games = home / "games"
    run("new", games / "spring", "--players", PLAYERS, "--seed", "11" * 32)
    run(
        "config", games, "from=games@club.example",
        "imap_host=127.0.0.1", f"imap_port={dovecot.port}", "imap_security=none",
        f"imap_user={USER}", "smtp_host=127.0.0.1", f"smtp_port={smtp.port}",
    )  # fmt: skip
    setup = re.search(r"```sh\n(cd /srv/pbem && umask 077 && printf .*?)\n```", README.read_text())
    assert setup is not None, "the README says how to write pbem.env"
    written = setup.group(1).replace("/srv/pbem", str(home)).replace("imap secret", PASSWORD)
    subprocess.run(["sh", "-c", written], check=True)  # as the README says, the password too
    assert (home / "pbem.env").stat().st_mode & 0o077 == 0
    (home / ".venv").symlink_to(Path(sys.prefix))  # the README's venv, where the line wants it
    command = cron_line().replace("/srv/pbem", str(home))

    def cron() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["env", "-i", "PATH=/usr/bin:/bin", f"HOME={tmp_path}", "sh", "-c", command],
            capture_output=True,
            text=True,
            timeout=120,
        )

    first = cron()
    assert first.returncode == 0, (first.stdout, first.stderr, (home / "run.log").read_text())
    assert first.stdout == first.stderr == ""  # everything goes to run.log
    reports = smtp.recorder.messages()
    assert sorted(str(m["To"]) for m in reports) == ["ann@example.org", "ben@example.org"]
    for msg in reports:
        assert "pbem-player.pyz" in [p.get_filename() for p in msg.iter_attachments()]
    spring = games / "spring"
    dovecot.deliver(
        *(
            message(f"{p}@example.org", orders_for(spring, p), subject="[spring] my orders",
                    mid=f"<{p}@t>").as_bytes()
            for p in ("ann", "ben")
        )
    )  # fmt: skip
    smtp.recorder.received.clear()
    second = cron()
    assert second.returncode == 0, (home / "run.log").read_text()
    assert read_game(spring).state.resolution == 2  # the setup turn, played with their orders
    log = (home / "run.log").read_text()
    assert "accepted: <ann@t>" in log and "resolved  spring" in log
    subjects = [str(m["Subject"]) for m in smtp.recorder.messages()]
    assert sum("accepted" in s for s in subjects) == 2
    assert sum("turn 1" in s for s in subjects) == 2
