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
from pbem.records import undone
from pbem.records.opening import read_game

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
    assert outbox(d)["r0000-deal-alice.eml"]["To"] == NEW
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
    assert "r0000-deal-carol.eml" not in outbox(d)
    assert any("carol has no address" in note for note in result.notes)
    assert run("audit", d).startswith("audit passed")


def test_an_address_in_another_case_is_still_the_other_players(d: Path) -> None:
    before = snapshot(d)
    out = run("config", d, "player.alice.email=Bob@Example.ORG", code=1)
    assert "Bob@Example.ORG is bob's address: each player needs one of their own" in out
    assert snapshot(d) == before


def test_a_player_may_change_the_case_of_their_own_address(d: Path) -> None:
    out = run("config", d, "player.alice.email=Alice@Example.org", "--now", "2027-03-02T09:30Z")
    assert out.startswith(f"alice's address is now Alice@Example.org (was {OLD})")


def test_settings_apply_in_turn_so_an_address_given_up_can_be_taken(d: Path) -> None:
    now = "2027-03-02T09:30Z"
    run("config", d, "player.bob.email=", "player.alice.email=bob@example.org", "--now", now)
    game = read_game(d)
    emails = {r.name: r.email for r in game.registrations}
    assert (emails["alice"], emails["bob"]) == ("bob@example.org", "")
    changes = players.address_changes(d)
    assert [(c.number, c.player, c.describe()) for c in changes] == [
        (1, "bob", "bob's address is now no address (was bob@example.org)"),
        (2, "alice", f"alice's address is now bob@example.org (was {OLD})"),
    ]
    assert (d / "history" / "addresses" / "0001-2.toml").is_file()
    run("config", d, "player.bob.email=b2@example.org", "--now", now)
    assert players.address_changes(d)[-1].describe() == (
        "bob's address is now b2@example.org (was none)"
    )
    assert run("audit", d).startswith("audit passed")


def test_configure_without_a_setting_asks_for_one(d: Path) -> None:
    from datetime import datetime, timezone

    from pbem.errors import PbemError

    with pytest.raises(PbemError, match="give a setting to change: player.NAME.email=ADDRESS"):
        players.configure(d, [], datetime(2027, 3, 2, tzinfo=timezone.utc))


def test_change_address_itself_refuses_what_is_not_an_address(d: Path) -> None:
    from datetime import datetime, timezone

    from pbem.errors import PbemError

    before = snapshot(d)
    with pytest.raises(PbemError, match="'two words' is not an email address"):
        players.change_address(d, "alice", "two words", datetime(2027, 3, 2, tzinfo=timezone.utc))
    assert snapshot(d) == before


def test_an_address_recorded_for_someone_who_does_not_play_fails_the_audit(d: Path) -> None:
    run("config", d, f"player.alice.email={NEW}", "--now", "2027-03-02T09:30Z")
    path = d / "history" / "addresses" / "0001-1.toml"
    path.write_text(path.read_text().replace('"alice"', '"zed"'))
    with pytest.raises(AuditError, match="records an address for 'zed', who does not play"):
        processor.audit_game(d)
    path.write_text(path.read_text().replace('player = "zed"\n', ""))
    with pytest.raises(Exception, match=r"0001-1.toml is damaged or incomplete \(KeyError"):
        processor.audit_game(d)


def test_an_address_is_not_changed_while_an_undo_is_half_done(d: Path) -> None:
    import tomli_w

    pending = undone.UndoRecord(1, 1, "2027-03-02T09:00:00Z", "late orders", "00" * 32, 1)
    (d / "history" / undone.PENDING).write_text(tomli_w.dumps(pending.to_dict()))
    before = snapshot(d)
    out = run("config", d, f"player.alice.email={NEW}", "--now", "2027-03-02T09:30Z", code=1)
    assert (
        "the undo of turn 1 (resolution 1, history/0001.toml) was interrupted: "
        "run 'pbem undo' again to finish it"
    ) in out
    assert snapshot(d) == before


def test_a_language_and_an_address_changed_in_one_command_are_both_told(d: Path) -> None:
    out = run(
        "config",
        d,
        "player.bob.language=it",
        f"player.alice.email={NEW}",
        "--now",
        "2027-03-02T09:30Z",
    )
    assert sorted(out.splitlines()) == [
        f"alice's address is now {NEW} (was {OLD}); recorded in history/addresses/.",
        "bob's language is now italiano (it) (was the game's); from the next report on.",
    ]
    assert read_game(d).language_of("bob") == "it"
