"""A seat handed over when something goes wrong: a run stopped part way, an undo, a mail
send in between, names and addresses that look alike, answers to the new player, and the
messages each player is sent. Each test states what docs/seats.md promises."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
import test_players
from test_mail import fetch as fetch_mail
from test_mail import message, orders_for, outbox, reply_to

from pbem import mail
from pbem.errors import AuditError, GameFileError, PbemError
from pbem.game import processor, seats
from pbem.game.audit import audit_game
from pbem.records.history import report_dir
from pbem.records.opening import read_game

NEW = "erin@example.org"
AT = "2027-03-02T09:30:00+00:00"
run = test_players.run
template, d = test_players.template, test_players.d  # a game of three: alice, bob, carol


def _crash(*_: object) -> None:
    raise OSError(28, "No space left on device")


def place_all(d: Path, *players: str) -> None:
    for p in players:
        (d / "orders" / f"{p}.toml").write_text(orders_for(d, p))


def at(text: str) -> datetime:
    return processor.clock.parse_instant(text)


# A resolution half written: the substitute waits for it ------------------------------------


def test_substitute_is_refused_while_a_resolution_is_interrupted(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    place_all(d, "alice", "bob", "carol")
    monkeypatch.setattr(processor, "write_game", _crash)  # killed after history/0001.toml
    with pytest.raises(OSError):
        processor.resolve_game(d, now=at("2027-03-03T09:00Z"))
    monkeypatch.undo()
    with pytest.raises(PbemError, match="interrupted"):
        seats.substitute(d, "carol", "erin", NEW, at(AT))
    processor.resolve_game(d, now=at("2027-03-03T10:00Z"))  # completes the resolution
    assert audit_game(d).resolutions == 2


# A substitute half made: every other command refuses the game until it is run again ------


def test_resolve_refuses_to_go_on_while_a_substitute_is_half_done(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    place_all(d, "alice", "bob", "carol")  # carol's, signed with her secret
    monkeypatch.setattr(seats, "write_game", _crash)
    with pytest.raises(OSError):
        seats.substitute(d, "carol", "erin", NEW, at(AT))
    monkeypatch.undo()
    for command in (
        lambda: processor.resolve_game(d, now=at("2027-03-03T09:00Z")),
        lambda: processor.check_files(d, []),
        lambda: mail.send_mail(d),
    ):
        with pytest.raises(GameFileError, match="run 'pbem substitute DIR carol --to erin="):
            command()
    seats.substitute(d, "carol", "erin", NEW, at(AT))
    with pytest.raises(PbemError, match="carol"):  # carol's orders no longer count
        processor.resolve_game(d, now=at("2027-03-03T09:00Z"))
    assert audit_game(d).resolutions == 1


# Stopped before the report is made again: a rerun completes it ---------------------------


def test_a_substitute_killed_before_the_report_is_written_is_completed_by_a_rerun(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seats, "write_files", _crash)
    with pytest.raises(OSError):
        seats.substitute(d, "carol", "erin", NEW, at(AT))
    monkeypatch.undo()
    seats.substitute(d, "carol", "erin", NEW, at(AT))
    secret = read_game(d).registration("carol").secret  # type: ignore[union-attr]
    assert f'secret = "{secret}"' in (report_dir(d, 0) / "carol.txt").read_text()


def test_the_new_player_is_never_mailed_a_report_with_the_previous_secret(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = read_game(d).registration("carol").secret  # type: ignore[union-attr]
    monkeypatch.setattr(seats, "write_files", _crash)
    with pytest.raises(OSError):
        seats.substitute(d, "carol", "erin", NEW, at(AT))
    monkeypatch.undo()
    with pytest.raises(GameFileError, match="was interrupted"):  # 'pbem run' from cron, say
        mail.send_mail(d)
    seats.substitute(d, "carol", "erin", NEW, at(AT))
    mail.send_mail(d)
    msg = outbox(d)["r0000-deal-carol-1.eml"]
    assert msg["To"] == NEW
    assert old not in msg.as_string()
    assert read_game(d).registration("carol").secret in msg.as_string()  # type: ignore[union-attr]


# A mail send between a substitute stopped part way and its rerun --------------------------


def test_mail_send_during_a_half_done_substitute_does_not_use_up_the_new_players_report(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mail.send_mail(d)
    monkeypatch.setattr(seats, "write_game", _crash)
    with pytest.raises(OSError):
        seats.substitute(d, "carol", "erin", NEW, at(AT))
    monkeypatch.undo()
    before = set(outbox(d))
    with pytest.raises(GameFileError, match="was interrupted"):
        mail.send_mail(d)
    assert set(outbox(d)) == before
    seats.substitute(d, "carol", "erin", NEW, at(AT))
    mail.send_mail(d)
    new = {n: m for n, m in outbox(d).items() if n not in before}
    assert [str(m["To"]) for m in new.values()] == [NEW]


# A substitute after an undo: the undone attempt keeps the secret it was signed with -------


def test_audit_passes_when_a_seat_changes_hands_after_an_undo(d: Path) -> None:
    place_all(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-03T09:00Z")
    run("undo", d, "--why", "late orders", "--now", "2027-03-03T10:00Z")
    run("substitute", d, "carol", "--to", f"erin={NEW}", "--now", "2027-03-03T11:00Z")
    place_all(d, "carol")  # erin's orders, with her secret
    run("resolve", d, "--now", "2027-03-03T12:00Z")
    assert audit_game(d).resolutions == 2


# Names: "in any case or width of letters" -----------------------------------------------


def test_the_seats_own_player_in_full_width_letters_is_refused(d: Path) -> None:
    before = (d / "game.toml").read_bytes()
    out = run("substitute", d, "carol", "--to", "ｃａｒｏｌ=c2@example.org", "--now", AT, code=1)
    assert "plays the seat carol already" in out
    assert (d / "game.toml").read_bytes() == before


# Mail answers to the new player never speak of the previous player's orders as theirs ----


def test_the_new_player_is_not_told_that_the_previous_players_orders_stand(d: Path) -> None:
    fetch_mail(d, [message("carol@example.org", orders_for(d, "carol"), mid="<c@x>")])
    assert (d / "orders" / "carol.toml").exists()  # carol's, accepted
    run("substitute", d, "carol", "--to", f"erin={NEW}", "--now", AT)
    bad = orders_for(d, "carol").replace('player = "carol"', 'player = "carol"\nfoo = 1')
    result = fetch_mail(d, [message(NEW, bad, minutes=5, mid="<e@x>")])
    _, body = reply_to(d, result, "<e@x>")
    assert "accepted earlier stand" not in body
    result = fetch_mail(d, [message(NEW, orders_for(d, "carol"), minutes=6, mid="<e2@x>")])
    _, body = reply_to(d, result, "<e2@x>")
    assert "They replace the orders you sent" not in body


# The audit of a substitute half made says what to do --------------------------------------


def test_the_audit_of_a_half_done_substitute_says_to_run_it_again(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seats, "write_game", _crash)
    with pytest.raises(OSError):
        seats.substitute(d, "carol", "erin", NEW, at(AT))
    monkeypatch.undo()
    with pytest.raises(AuditError) as err:
        audit_game(d)
    assert "history/addresses/" not in str(err.value)
    assert "substitute" in str(err.value)


def test_the_new_player_is_not_told_their_orders_replace_ones_they_never_sent(d: Path) -> None:
    fetch_mail(d, [message("carol@example.org", orders_for(d, "carol"), mid="<c@x>")])
    run("substitute", d, "carol", "--to", f"erin={NEW}", "--now", AT)
    result = fetch_mail(d, [message(NEW, orders_for(d, "carol"), minutes=6, mid="<e2@x>")])
    _, body = reply_to(d, result, "<e2@x>")
    assert "They replace the orders you sent" not in body


# Address changes and seat changes count in the order made, whatever their --now -----------


def test_an_address_change_right_after_a_substitute_audits(d: Path) -> None:
    run("substitute", d, "carol", "--to", f"erin={NEW}", "--now", AT)
    run("config", d, "player.carol.email=erin2@example.org", "--now", AT)  # the same second
    assert audit_game(d).resolutions == 1


def test_a_substitute_dated_before_an_address_change_of_the_same_turn_audits(d: Path) -> None:
    run("config", d, "player.carol.email=carol2@example.org", "--now", "2027-03-02T10:00Z")
    # docs/seats.md: "--now dates the change"; the moderator dates it to when it was agreed
    run("substitute", d, "carol", "--to", f"erin={NEW}", "--now", "2027-03-02T09:30Z")
    assert audit_game(d).resolutions == 1


# The refusal names the seat's player now --------------------------------------------------


def test_the_refusal_names_the_seats_player_now(d: Path) -> None:
    first = orders_for(d, "carol")  # carol's, with her first secret
    run("substitute", d, "carol", "--to", f"erin={NEW}", "--now", AT)
    run("substitute", d, "carol", "--to", "carol=carol@example.org", "--now", AT)  # back
    (d / "orders" / "carol.toml").write_text(first)
    out = run("check", d, d / "orders" / "carol.toml", code=1)
    assert "erin took over" not in out


# Each player's message has a Message-ID of its own ----------------------------------------


def test_the_new_players_first_report_has_a_message_id_of_its_own(d: Path) -> None:
    mail.send_mail(d)
    run("substitute", d, "carol", "--to", f"erin={NEW}", "--now", AT)
    mail.send_mail(d)
    box = outbox(d)
    old, new = box["r0000-deal-carol.eml"], box["r0000-deal-carol-1.eml"]
    assert (old["To"], new["To"]) == ("carol@example.org", NEW)
    assert old["Message-ID"] != new["Message-ID"]
