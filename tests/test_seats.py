"""A seat handed to a substitute with `pbem substitute`: a new player, a secret of their own,
the previous player's secret refused, and the history and the audit keeping track."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import test_players
from test_mail import fetch as fetch_mail
from test_mail import message, orders_for, outbox

from pbem import mail
from pbem.core import engine, secrets
from pbem.core.autopilot import autopilot_orders
from pbem.core.events import SeatTaken
from pbem.core.state import replaced
from pbem.errors import AuditError, PbemError
from pbem.game import processor, seats, undo
from pbem.game.audit import audit_game
from pbem.records import seat_changes
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game
from pbem.records.store import load_game

NEW = "erin@example.org"
AT = "2027-03-02T09:30:00+00:00"
FIXTURE = Path(__file__).parent / "fixtures" / "format7-game"
run = test_players.run
template, d = test_players.template, test_players.d  # the fixtures: a game of three


def hand_over(d: Path, seat: str = "carol", to: str = f"erin={NEW}") -> str:
    return run("substitute", d, seat, "--to", to, "--why", "carol moved abroad", "--now", AT)


def place_all(d: Path, *players: str) -> None:
    for p in players:
        (d / "orders" / f"{p}.toml").write_text(orders_for(d, p))


def test_the_new_player_gets_a_secret_of_their_own_and_the_old_one_is_refused(d: Path) -> None:
    old = orders_for(d, "carol")
    before = read_game(d).registration("carol")
    out = hand_over(d)
    assert out == (
        "erin took over carol's seat before turn 0 (carol moved abroad).\n"
        "The seat's latest report is made again for erin, with their secret: 'pbem mail send' "
        "mails it to them as their first.\n"
    )
    reg = read_game(d).registration("carol")
    assert reg is not None and before is not None
    assert (reg.holder, reg.email, reg.played_by) == ("erin", NEW, "erin")
    assert reg.secret == secrets.holder_secret(read_game(d).seed, "carol", 1, "erin")
    assert reg.secret != before.secret
    (d / "orders" / "carol.toml").write_text(old)
    refused = run("check", d, d / "orders" / "carol.toml", code=1)
    assert "this seat has a new player: erin took over the seat carol before turn 0" in refused
    place_all(d, "carol")
    assert "valid" in run("check", d, d / "orders" / "carol.toml")


def test_the_change_is_recorded_told_first_and_audited(d: Path) -> None:
    hand_over(d)
    [change] = seat_changes.seat_changes(d)
    assert (change.resolution, change.number, change.seat, change.previous) == (
        1,
        1,
        "carol",
        "carol",
    )
    assert (change.time, change.why, change.holders) == (AT, "carol moved abroad", 1)
    assert (d / "history" / "seats" / "0001-1.toml").is_file()
    place_all(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-03T09:00Z")
    events = read_history(d, 1).events
    assert events[0] == SeatTaken("carol", "erin", "carol", 0)
    story = (report_dir(d, 1) / "alice.txt").read_text()
    assert "erin took over carol's seat before turn 0" in " ".join(story.split())
    assert audit_game(d).resolutions == 2


def test_orders_the_previous_player_signed_still_audit_after_the_change(d: Path) -> None:
    place_all(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-03T09:00Z")  # carol's own orders, with her secret
    hand_over(d)
    assert audit_game(d).resolutions == 2
    path = d / "history" / "seats" / "0002-1.toml"
    path.write_text(path.read_text().replace("previous_secret = ", 'previous_secret = "0" #'))
    with pytest.raises(AuditError, match="secret is not carol's"):
        audit_game(d)


def test_a_hand_edited_holder_or_secret_fails_the_audit(d: Path) -> None:
    hand_over(d)
    path = d / "game.toml"
    text = path.read_text()
    path.write_text(text.replace('holder = "erin"', 'holder = "mallory"'))
    with pytest.raises(AuditError, match="the seat carol: game file played by mallory"):
        audit_game(d)
    secret = read_game(d).registration("bob")
    assert secret is not None
    path.write_text(text.replace('holder = "erin"\n', ""))
    with pytest.raises(AuditError, match="history by erin"):
        audit_game(d)


def test_the_new_players_first_report_is_remade_for_them_and_mailed_with_the_kit(d: Path) -> None:
    mail.send_mail(d)
    first = set(outbox(d))
    hand_over(d)
    text = (report_dir(d, 0) / "carol.txt").read_text()
    reg = read_game(d).registration("carol")
    assert reg is not None
    assert f'secret = "{reg.secret}"' in text
    assert "erin, you play the seat carol" in " ".join(text.split())
    mail.send_mail(d, kit=True)
    new = {n: m for n, m in outbox(d).items() if n not in first}
    assert list(new) == ["r0000-deal-carol-1.eml"]
    msg = new["r0000-deal-carol-1.eml"]
    assert msg["To"] == NEW
    assert [p.get_filename() for p in msg.iter_attachments()].count("pbem-player.pyz") == 1
    place_all(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-03T09:00Z")
    mail.send_mail(d, kit=True)
    later = [m for n, m in outbox(d).items() if n not in first and n not in new]
    assert sorted(str(m["To"]) for m in later) == sorted(
        ["alice@example.org", "bob@example.org", NEW]
    )
    assert all("carol@example.org" not in str(m["To"]) for m in later)
    kits = [p.get_filename() for m in later for p in m.iter_attachments()]
    assert "pbem-player.pyz" not in kits  # the kit comes with the first report only


def test_the_previous_player_mailing_is_not_the_seats_player_any_more(d: Path) -> None:
    old = orders_for(d, "carol")
    hand_over(d)
    result = fetch_mail(d, [message("carol@example.org", old)])
    assert [i.verdict for i in result.incoming] != [mail.Verdict.ACCEPTED]
    result = fetch_mail(d, [message(NEW, old, minutes=1, mid="<old@x>")])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED]
    assert not (d / "orders" / "carol.toml").exists()
    result = fetch_mail(d, [message(NEW, orders_for(d, "carol"), minutes=2, mid="<new@x>")])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.ACCEPTED]


def test_a_seat_changing_hands_starts_its_missed_turns_again() -> None:
    from pbem.core.board import load_board  # the engine alone: seats with two turns missed
    from pbem.core.state import Options

    state, _ = engine.new_game(
        "g",
        ["ann", "bob"],
        load_board("classic"),
        Options(),
        engine.Randomness(b"k" * 32, b"h" * 32),
    )
    state = replaced(state, players=tuple(replaced(p, missed=2) for p in state.players))
    orders = [autopilot_orders(state, p.name, "s") for p in state.players]
    taken = (SeatTaken("bob", "erin", "bob", 0),)
    new, events = engine.resolve(
        state, orders, engine.Randomness(b"k" * 32, b"h" * 32), {"ann", "bob"}, taken
    )
    assert events[0] == taken[0]
    missed = {p.name: p.missed for p in new.players}
    assert missed == {"ann": 3, "bob": 1}
    assert not new.player("bob").dropped and new.player("ann").dropped


def test_an_undo_past_a_change_of_seat_is_refused(d: Path) -> None:
    place_all(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-03T09:00Z")
    hand_over(d)
    with pytest.raises(PbemError, match="cannot be undone: after it, erin took over carol's seat"):
        undo.undo_last(d, processor.clock.parse_instant("2027-03-03T10:00Z"), "late orders")
    assert audit_game(d).resolutions == 2


@pytest.mark.parametrize(
    ("seat", "to", "words"),
    [
        ("dave", f"erin={NEW}", "there is no seat 'dave' in this game"),
        ("carol", "alice=x@example.org", "alice is the name of a player"),
        ("carol", "erin=bob@example.org", "bob@example.org is bob's address"),
        ("carol", "carol=c2@example.org", "carol plays the seat carol already"),
        ("carol", "erin", "give the new player's address: --to erin=ADDRESS"),
        ("carol", "er.in=e@example.org", "cannot be a player name"),
        ("carol", "ALICE=x@example.org", "is the name of a player of this game (alice's seat)"),
    ],
)
def test_a_substitute_the_game_cannot_take_is_refused_and_nothing_changes(
    d: Path, seat: str, to: str, words: str
) -> None:
    before = (d / "game.toml").read_bytes()
    out = run("substitute", d, seat, "--to", to, "--now", AT, code=1)
    assert words in out
    assert (d / "game.toml").read_bytes() == before
    assert not (d / "history" / "seats").exists()


def test_an_interrupted_change_is_completed_by_running_it_again(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(seats, "write_game", broken)
    with pytest.raises(OSError):
        seats.substitute(d, "carol", "erin", NEW, processor.clock.parse_instant(AT))
    monkeypatch.undo()
    assert (d / "history" / "seats" / "0001-1.toml").is_file()
    half = load_game(d).registration("carol")
    assert half is not None and half.holder is None
    with pytest.raises(PbemError, match="carol to erin was interrupted: run 'pbem substitute"):
        read_game(d)
    again = seats.substitute(d, "carol", "erin", NEW, processor.clock.parse_instant(AT))
    assert again == seat_changes.seat_changes(d)[0]
    assert len(seat_changes.seat_changes(d)) == 1
    assert read_game(d).registration("carol").holder == "erin"  # type: ignore[union-attr]
    assert audit_game(d).resolutions == 1


def test_a_seat_passed_on_twice_has_a_secret_for_each_holder(d: Path) -> None:
    hand_over(d)
    first = read_game(d).registration("carol")
    run("substitute", d, "carol", "--to", "finn=finn@example.org", "--now", AT)
    second = read_game(d).registration("carol")
    assert first is not None and second is not None
    assert second.secret == secrets.holder_secret(read_game(d).seed, "carol", 2, "finn")
    assert second.secret != first.secret
    place_all(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-03T09:00Z")
    assert [e for e in read_history(d, 1).events if isinstance(e, SeatTaken)] == [
        SeatTaken("carol", "erin", "carol", 0),
        SeatTaken("carol", "finn", "erin", 0),
    ]
    assert audit_game(d).resolutions == 2


def test_a_game_of_format_7_takes_a_substitute_and_audits(tmp_path: Path) -> None:
    d = Path(shutil.copytree(FIXTURE, tmp_path / "format7-game"))
    assert audit_game(d).resolutions == 3
    run("substitute", d, "dave", "--to", "erin=erin@example.org:sv", "--now", "2027-01-07T09:00Z")
    assert "format = 8" in (d / "game.toml").read_text()
    game = read_game(d)
    bob = game.registration("bob")
    assert bob is not None
    (d / "orders" / "bob.toml").write_text(orders_for(d, "bob"))
    run("resolve", d, "--now", "2027-01-08T09:00Z")
    assert read_history(d, 3).events[0] == SeatTaken("dave", "erin", "dave", 2)
    assert audit_game(d).resolutions == 4
    assert read_game(d).language_of("dave") == "sv"


def test_the_new_player_sees_the_seats_hand_and_mission_and_the_old_one_nothing_new(
    tmp_path: Path,
) -> None:
    d = tmp_path / "m"
    players = "alice=alice@example.org,bob=bob@example.org,carol=carol@example.org"
    run("new", d, "--players", players, "--missions", "--seed", "0d" * 32, "--now", AT)
    before = (report_dir(d, 0) / "carol.txt").read_text()
    mission = next(line for line in before.splitlines() if "Your secret mission" in line)
    mail.send_mail(d)
    sent = set(outbox(d))
    hand_over(d)
    text = (report_dir(d, 0) / "carol.txt").read_text()
    assert mission in text  # the seat's own mission, for its new player
    view = json.loads((report_dir(d, 0) / "carol.view.json").read_text())
    assert [p["name"] for p in view["players"] if "mission" in p] == ["carol"]
    assert [p["name"] for p in view["players"] if "hand" in p] == ["carol"]
    mail.send_mail(d)
    new = [m for name, m in outbox(d).items() if name not in sent]
    assert [str(m["To"]) for m in new] == [NEW]  # the previous player is mailed nothing new


def test_every_report_names_who_plays_a_seat_now(d: Path) -> None:
    hand_over(d)
    place_all(d, "alice", "bob", "carol")
    run("resolve", d, "--now", "2027-03-03T09:00Z")
    for name in ("alice.txt", "bob.html", "carol.txt"):
        text = " ".join((report_dir(d, 1) / name).read_text().split())
        assert "carol (played by erin)" in text, name
    moderator = " ".join((report_dir(d, 1) / "_moderator.txt").read_text().split())
    assert "carol (played by erin)" in moderator


def test_a_seat_a_program_plays_is_named_so(d: Path) -> None:
    from dataclasses import replace

    from pbem.languages import i18n
    from pbem.present.context import seat_label

    game = read_game(d)
    bots = tuple(replace(r, bot="reference") if r.name == "bob" else r for r in game.registrations)
    game = replace(game, registrations=bots)
    assert [seat_label(game, s) for s in ("alice", "bob")] == ["alice", "bob (a bot)"]
    with i18n.speaking(i18n.language("sv")):
        assert seat_label(game, "bob") == "bob (ett program)"
