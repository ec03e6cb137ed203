"""A player's address changed with `pbem config DIR player.NAME.email=ADDRESS`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_mail import GAME, make_template, message, orders_for, outbox, snapshot
from test_mail import fetch as fetch_mail

from pbem import mail
from pbem.cli import main
from pbem.errors import AuditError
from pbem.game import players, processor
from pbem.game.store import read_game

NEW = "alice@elsewhere.example"
OLD = "alice@example.org"


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def d(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / GAME))


def test_a_changed_address_is_recorded_with_the_time_and_the_audit_passes(d: Path) -> None:
    out = run("config", d, f"player.alice.email={NEW}", "--now", "2027-03-02T09:30+01:00")
    assert out == (f"alice's address is now {NEW} (was {OLD}); recorded in history/addresses/.\n")
    reg = read_game(d).registration("alice")
    assert reg is not None and reg.email == NEW
    assert players.address_changes(d) == [
        players.AddressChange(1, 1, "2027-03-02T09:30:00+01:00", "alice", NEW, OLD)
    ]
    assert (d / "history" / "addresses" / "0001-1.toml").is_file()
    assert run("audit", d).startswith("audit passed")


def test_the_next_mail_goes_to_the_new_address(d: Path) -> None:
    run("config", d, f"player.alice.email={NEW}", "--now", "2027-03-02T09:30Z")
    mail.send_mail(d)
    assert outbox(d)["r0000-alice.eml"]["To"] == NEW
    result = fetch_mail(d, [message(NEW, orders_for(d, "alice"))])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.ACCEPTED]


def test_mail_from_the_old_address_is_no_longer_alices(d: Path) -> None:
    run("config", d, f"player.alice.email={NEW}", "--now", "2027-03-02T09:30Z")
    result = fetch_mail(d, [message(OLD, orders_for(d, "alice"))])
    assert [i.verdict for i in result.incoming] != [mail.Verdict.ACCEPTED]
    assert not (d / "orders" / "alice.toml").exists()


def test_a_hand_edited_address_fails_the_audit_after_a_recorded_change(d: Path) -> None:
    run("config", d, f"player.alice.email={NEW}", "--now", "2027-03-02T09:30Z")
    path = d / "game.toml"
    path.write_text(path.read_text().replace(NEW, "alice@third.example"))
    with pytest.raises(AuditError) as caught:
        processor.audit_game(d)
    assert str(caught.value) == (
        f"alice's address: game file alice@third.example, history {NEW} "
        "(the last change recorded in history/addresses/)"
    )


@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        ("player.zed.email=z@example.org", "there is no player 'zed' in this game"),
        ("player.alice.email=not-an-address", "'not-an-address' is not an email address"),
        ("player.alice.email=bob@example.org", "bob@example.org is bob's address"),
        (f"player.alice.email={OLD}", f"alice's address is {OLD} already"),
        ("nonsense=1", "there is no mail setting 'nonsense'"),
        ("smtp_port=99999", "smtp_port must be a port number"),
    ],
)
def test_a_bad_setting_is_refused_and_changes_nothing(d: Path, setting: str, reason: str) -> None:
    before = snapshot(d)
    out = run("config", d, "player.carol.email=c2@example.org", setting, code=1)
    assert reason in out and "Traceback" not in out
    assert snapshot(d) == before


def test_an_address_can_be_taken_away(d: Path) -> None:
    run("config", d, "player.carol.email=", "--now", "2027-03-02T09:30Z")
    result = mail.send_mail(d)
    assert "r0000-carol.eml" not in outbox(d)
    assert any("carol has no address" in note for note in result.notes)
    assert run("audit", d).startswith("audit passed")
