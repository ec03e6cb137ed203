"""One mailbox for many games: each message goes to its game and is answered once (Maildir and a
real IMAP server); From, Reply-To and Bcc come from the settings in force when a message is
sent (a real SMTP server); a game under way starts its mail with its latest reports."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from conftest import flat, snapshot, stopped_after_the_history, write_skeletons
from dovecot import Dovecot, start
from test_mail import (
    NOW,
    Server,
    into_maildir,
    into_mbox,
    message,
    orders_for,
    outbox,
    parse,
    run,
    running_server,
)

from pbem.game import processor
from pbem.mail import route
from pbem.records.opening import read_game
from pbem.records.settings import Security

ANN, BEN, CY, DEE = (f"{p}@example.org" for p in ("ann", "ben", "cy", "dee"))
GAMES = {
    "friday": [("ann", ANN), ("ben", BEN)],
    "duel": [("ann", ANN), ("cy", CY)],
    "league": [("ben", BEN), ("cy", CY), ("dee", DEE)],
}
MODERATOR = "games@club.example"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("club") / "games"
    for name, players in GAMES.items():
        processor.new_game(root / name, players, processor.Options(), seed=bytes(32), name=name)
    (root / "pbem.toml").write_text(f'[mail]\nfrom = "{MODERATOR}"\n')
    return root


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "games"))


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server()


@pytest.fixture(scope="module")
def dovecot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dovecot]:
    yield from start(tmp_path_factory.mktemp("dovecot"))


def every_outbox(root: Path) -> dict[str, EmailMessage]:
    """Every message waiting in the root's outboxes, by game/file name."""
    out = {}
    for folder in [root, *(root / name for name in GAMES)]:
        for name, msg in outbox(folder).items():
            out[f"{folder.name}/{name}"] = msg
    return out


def mixed_mail(root: Path) -> list[EmailMessage]:
    """Orders for three games, a copy of one, a message for no game from a player, one from a
    stranger, orders with a forged From, and a reply tagged with its game."""
    orders = {name: orders_for(root / name, players[0][0]) for name, players in GAMES.items()}
    return [
        message(ANN, orders["friday"], mid="<1@t>", minutes=1),
        message(ANN, orders["duel"], mid="<2@t>", minutes=2),
        message(BEN, orders["league"], mid="<3@t>", minutes=3),
        message(ANN, orders["friday"], mid="<1@t>", minutes=1),  # the same message again
        message(CY, 'game = "tuesday"\nturn = 1\n', mid="<4@t>", minutes=4),
        message("eve@example.org", "hello", mid="<5@t>", minutes=5),
        message("mallory@evil.example", orders["friday"], mid="<6@t>", minutes=6),
        message(DEE, "when is my turn?", mid="<7@t>", subject="Re: [league] turn 0", minutes=7),
    ]


def check_routed(root: Path, output: str) -> None:
    """What `mixed_mail` must give: each message answered once, at its game."""
    answers = every_outbox(root)
    to = sorted((key.split("/")[0], str(msg["To"])) for key, msg in answers.items())
    assert to == [
        ("duel", ANN),  # accepted
        ("friday", ANN),  # accepted
        ("friday", ANN),  # told of orders sent in her name
        ("friday", MODERATOR),  # the moderator's summary: the forged message
        ("games", CY),  # for no game: cy plays in duel and league
        ("games", MODERATOR),  # the root's note to the moderator: cy's message, in full
        ("league", BEN),  # accepted
        ("league", DEE),  # rejected: no orders in the reply
        ("league", MODERATOR),  # the moderator's summary: dee's question, passed on
    ]
    (for_none,) = [m for k, m in answers.items() if k.startswith("games/reply-")]
    assert "At this address you play in: duel, league" in for_none.get_content()
    assert "passed to the moderator" in flat(for_none.get_content())
    (note,) = [m for k, m in answers.items() if k.startswith("games/note-")]
    assert "<4@t> from cy@example.org (plays in duel, league)" in note.get_content()
    assert '| game = "tuesday"' in note.get_content()
    assert "'tuesday', which is not run at this address" in for_none.get_content()
    assert (root / "friday" / "orders" / "ann.toml").exists()
    assert (root / "duel" / "orders" / "ann.toml").exists()
    assert (root / "league" / "orders" / "ben.toml").exists()
    assert "for no game: <5@t> from eve@example.org" in output
    assert "not answered: eve@example.org is not a player's address" in output


# --- routing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("orders", "subject", "game"),
    [
        ('game = "friday"\nturn = 3\n', "", "friday"),
        ("game='duel'\n", "", "duel"),
        ('# my orders\n  game  =  "duel"  # the duel\n', "", "duel"),
        ('game = "friday"\n', "Re: [duel] turn 3: your move", "friday"),
        ('game = "nowhere"\n', "Re: [duel] turn 3: your move", "duel"),
        (None, "Re: [duel] accepted: your orders", "duel"),
        (None, "Re: [nowhere] [friday] turn 2", "friday"),
        ('game = "nowhere"\n', "orders", None),
        (None, "Re: turn 3", None),
        ('game = "Friday"\n', "", None),
    ],
)
def test_a_message_goes_to_the_game_its_orders_or_its_subject_name(
    orders: str | None, subject: str, game: str | None
) -> None:
    assert route.game_for(orders, subject, {"friday", "duel"}) == game


def test_one_maildir_for_three_games(root: Path, tmp_path: Path) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root))
    output = run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    check_routed(root, output)
    # the copy of <1@t> is known at once: read before, never handed to its game again
    assert "8 messages read: 5 to 3 games, 2 for no game, 1 read before" in output
    before = snapshot(root)
    again = run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    assert snapshot(root) == before
    assert again.splitlines()[-1] == "8 messages read: 0 to 0 games, 0 for no game, 8 read before"


def test_a_message_is_routed_once_even_when_its_game_appears_later(
    root: Path, tmp_path: Path
) -> None:
    box = into_maildir(
        tmp_path / "Maildir", [message(CY, 'game = "tuesday"\nturn = 0\n', mid="<t@t>")]
    )
    run("mail", "fetch", root, "--maildir", box)
    processor.new_game(root / "tuesday", [("cy", CY), ("dee", DEE)], processor.Options())
    output = run("mail", "fetch", root, "--maildir", box)
    assert "1 read before" in output
    assert outbox(root / "tuesday") == {}


def test_one_imap_folder_for_three_games(root: Path, dovecot: Dovecot) -> None:
    dovecot.deliver(*(m.as_bytes() for m in mixed_mail(root)), folder="Club")
    args = ["--imap", dovecot.spec(), "--user", "moderator", "--folder", "Club"]
    server = dovecot.server(Security.SSL, "Club")
    from pbem.mail import inbox

    box = inbox.Mailbox(imap=server)
    result = inbox.fetch(root, box, None, NOW)
    assert isinstance(result, inbox.RootFetch)
    check_routed(root, "\n".join(result.lines()))
    assert all("\\Seen" in flags for flags in dovecot.flags("Club"))
    before = snapshot(root)
    env = {"PBEM_IMAP_PASSWORD": "correct horse", "SSL_CERT_FILE": str(dovecot.folder / "cert.pem")}
    again = run("mail", "fetch", root, *args, "--security", "ssl", env=env)
    after = snapshot(root)
    # nothing changed but the record of when the mailbox was last read in full
    assert after.pop("mail/fetched.json") != before.pop("mail/fetched.json")
    assert after == before
    assert again.splitlines()[-1] == "0 messages read: 0 to 0 games, 0 for no game, 0 read before"


def test_imap_with_starttls_from_the_settings(
    root: Path, dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch
) -> None:
    dovecot.deliver(
        message(ANN, orders_for(root / "duel", "ann"), mid="<s@t>").as_bytes(), folder="Tls"
    )
    monkeypatch.setenv("PBEM_IMAP_PASSWORD", "correct horse")
    monkeypatch.setenv("SSL_CERT_FILE", str(dovecot.folder / "cert.pem"))
    host, port = dovecot.spec(Security.STARTTLS).split(":")
    run(
        "config", root, f"imap_host={host}", f"imap_port={port}", "imap_security=starttls",
        "imap_user=moderator", "imap_folder=Tls",
    )  # fmt: skip
    output = run("mail", "fetch", root)
    assert "accepted: <s@t> from ann@example.org (ann)" in output
    assert (root / "duel" / "orders" / "ann.toml").exists()


def test_a_game_that_cannot_take_its_mail_gets_it_next_time(root: Path, tmp_path: Path) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[:3])
    kept = (root / "duel" / "game.toml").read_bytes()
    (root / "duel" / "game.toml").write_text("damaged")
    output = run("mail", "fetch", root, "--maildir", box, code=1)
    assert "failed: duel:" in output and "read again next time" in output
    assert (root / "friday" / "orders" / "ann.toml").exists()
    (root / "duel" / "game.toml").write_bytes(kept)
    output = run("mail", "fetch", root, "--maildir", box)
    assert "accepted: <2@t> from ann@example.org (ann)" in output
    assert output.splitlines()[-1] == "3 messages read: 1 to 1 game, 0 for no game, 2 read before"


def test_a_game_whose_mail_folder_is_a_link_takes_none_and_the_others_do(
    root: Path, tmp_path: Path
) -> None:
    """mail/ linked elsewhere: the fetch writes nothing there (no rejected message, no seen
    list), the game's message is read again next time, the other games take theirs."""
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[:3])
    elsewhere = tmp_path / "elsewhere"
    if (root / "duel" / "mail").exists():
        shutil.move(root / "duel" / "mail", elsewhere)
    else:
        elsewhere.mkdir()
    there = snapshot(elsewhere)
    (root / "duel" / "mail").symlink_to(elsewhere)
    output = run("mail", "fetch", root, "--maildir", box, code=1)
    assert f"failed: duel: {root / 'duel' / 'mail'} is a symbolic link" in output, output
    assert "read again next time" in output
    assert (root / "friday" / "orders" / "ann.toml").exists()
    assert snapshot(elsewhere) == there
    (root / "duel" / "mail").unlink()
    shutil.move(elsewhere, root / "duel" / "mail")
    output = run("mail", "fetch", root, "--maildir", box)
    assert "accepted: <2@t> from ann@example.org (ann)" in output


def interrupted(game: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The game's pending turn resolved by a run stopped after writing its history."""
    write_skeletons(game)
    stopped_after_the_history(game, monkeypatch)


def held_mail(root: Path) -> list[EmailMessage]:
    """Orders for friday, and a question for duel (whose resolution is interrupted)."""
    return [
        message(ANN, orders_for(root / "friday", "ann"), mid="<f@t>", minutes=1),
        message(ANN, "when is my turn?", mid="<h@t>", subject="Re: [duel] turn 0", minutes=2),
    ]


def test_mail_held_for_an_interrupted_game_is_read_once_it_is_complete(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupted(root / "duel", monkeypatch)
    box = into_maildir(tmp_path / "Maildir", held_mail(root))
    first = run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    assert "held: <h@t> from ann@example.org" in first
    assert "accepted: <f@t> from ann@example.org (ann)" in first
    assert outbox(root / "duel") == {}
    again = run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    assert "held: <h@t> from ann@example.org" in again  # still waiting, not lost
    assert again.splitlines()[-1] == "2 messages read: 1 to 1 game, 0 for no game, 1 read before"
    assert processor.resolve_game(root / "duel").recovered
    done = run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    assert "<h@t> from ann@example.org (ann)" in done and "held" not in done
    assert [str(m["To"]) for m in outbox(root / "duel").values()].count(ANN) == 1
    assert done.splitlines()[-1] == "2 messages read: 1 to 1 game, 0 for no game, 1 read before"
    last = run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    assert last.splitlines()[-1] == "2 messages read: 0 to 0 games, 0 for no game, 2 read before"


@pytest.mark.parametrize("into", ["the root", "the game"])
def test_imap_mail_held_for_an_interrupted_game_stays_unseen_until_it_is_complete(
    root: Path, dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch, into: str
) -> None:
    from pbem.mail import inbox

    interrupted(root / "duel", monkeypatch)
    folder = "Held" + into.split()[-1]
    dovecot.deliver(*(m.as_bytes() for m in held_mail(root)), folder=folder)
    box = inbox.Mailbox(imap=dovecot.server(Security.SSL, folder))
    target = root if into == "the root" else root / "duel"
    first = "\n".join(inbox.fetch(target, box, None, NOW).lines())
    assert "held: <h@t> from ann@example.org" in first
    # into the game alone, every message is held (each is read against the game)
    held = [True, False] if into == "the root" else [False, False]
    assert ["\\Seen" in flags for flags in dovecot.flags(folder)] == held
    assert processor.resolve_game(root / "duel").recovered
    done = "\n".join(inbox.fetch(target, box, None, NOW).lines())
    assert "<h@t> from ann@example.org (ann)" in done and "held" not in done
    answered = 1 if into == "the root" else 2  # friday's orders too, fetched into duel
    assert [str(m["To"]) for m in outbox(root / "duel").values()].count(ANN) == answered
    assert all("\\Seen" in flags for flags in dovecot.flags(folder))


@pytest.mark.parametrize("kind", ["--maildir", "--mbox"])
def test_run_with_a_mailbox_on_the_command_line_fetches_it_without_fetch(
    root: Path, tmp_path: Path, kind: str
) -> None:
    """A mailbox named on the command line is there to be read: `pbem run ROOT --maildir M`
    fetches as `--fetch --maildir M` does (docs/batch.md)."""
    orders = [
        message(ANN, orders_for(root / "friday", "ann"), mid="<a@t>", minutes=1),
        message(BEN, orders_for(root / "friday", "ben"), mid="<b@t>", minutes=2),
    ]
    where = tmp_path / "box"
    box = into_maildir(where, orders) if kind == "--maildir" else into_mbox(where, orders)
    dry = run("run", root, kind, box, "--dry-run", "--now", NOW.isoformat())
    assert "dry run: no mail fetched or sent" in dry
    assert not (root / "friday" / "orders" / "ann.toml").exists()
    output = run("run", root, kind, box, "--now", NOW.isoformat())
    assert "accepted: <a@t> from ann@example.org (ann)" in output
    assert "accepted: <b@t> from ben@example.org (ben)" in output
    (row,) = [line for line in output.splitlines() if line.split()[1:2] == ["friday"]]
    assert row.startswith("resolved ")
    assert read_game(root / "friday").state.resolution == 2


# --- sending -----------------------------------------------------------------------------------


def test_the_address_in_force_when_sent_is_used(root: Path, server: Server) -> None:
    run("mail", "send", root)  # queued: no server in the settings
    run("config", root, "from=club@club.example", "bcc=archive@club.example")
    run("config", root / "duel", "reply_to=duel@club.example")
    run("mail", "send", root, "--smtp", server.spec)
    assert len(server.recorder.received) == 7
    for sender, rcpt, content in server.recorder.received:
        msg = parse(content)
        assert sender == str(msg["From"]) == "club@club.example"
        assert "archive@club.example" in rcpt and msg["Bcc"] is None
    duel = [parse(c) for _, _, c in server.recorder.received if b"[duel]" in c]
    assert duel and all(str(m["Reply-To"]) == "duel@club.example" for m in duel)
    friday = [parse(c) for _, _, c in server.recorder.received if b"[friday]" in c]
    assert friday and all(str(m["Reply-To"]) == "club@club.example" for m in friday)


def test_a_game_file_setting_overrides_the_root_and_a_flag_both(root: Path, server: Server) -> None:
    run("config", root / "league", "from=league@club.example")
    run("mail", "send", root / "league", "--smtp", server.spec)
    run("mail", "send", root / "friday", "--smtp", server.spec, "--from", "flag@club.example")
    senders = {sender for sender, _, _ in server.recorder.received}
    assert senders == {"league@club.example", "flag@club.example"}


def test_the_server_comes_from_the_settings(root: Path, server: Server) -> None:
    run("config", root, "smtp_host=127.0.0.1", f"smtp_port={server.port}")
    output = run("mail", "send", root)
    assert "sent r0000-deal-ann.eml to ann@example.org" in output
    assert len(server.recorder.received) == 7


def test_a_running_game_first_mails_only_its_latest_reports(root: Path, server: Server) -> None:
    game = root / "friday"
    for _ in range(3):
        write_skeletons(game)
        processor.resolve_game(game)
    output = run("mail", "send", game, "--smtp", server.spec)
    assert "only the reports after turn 2 (resolution 3, history/0003.toml) are mailed" in output
    subjects = sorted(str(m["Subject"]) for m in server.recorder.messages())
    assert len(subjects) == 2 and all("[friday]" in s for s in subjects)
    assert {m["Message-ID"].split(".")[2] for m in server.recorder.messages()} == {"r0003"}
    assert "nothing to send" in run("mail", "send", game, "--smtp", server.spec)
    run("mail", "send", game, "--smtp", server.spec, "--all")
    assert len(server.recorder.received) == 8


def test_a_new_game_mails_its_setup_reports(root: Path, server: Server) -> None:
    run("mail", "send", root / "friday", "--smtp", server.spec)
    assert len(server.recorder.received) == 2


def test_answers_go_out_in_the_order_the_messages_came_in(
    root: Path, tmp_path: Path, server: Server
) -> None:
    run("mail", "send", root / "league", "--smtp", server.spec)
    server.recorder.received.clear()
    players = ["dee", "cy", "ben", "dee", "cy"]
    mail_in = [
        message(f"{p}@example.org", f"question {n}", mid=f"<q{n}@t>", minutes=n,
                subject="Re: [league] turn 0")
        for n, p in enumerate(players)
    ]  # fmt: skip
    run("mail", "fetch", root, "--maildir", into_maildir(tmp_path / "M", mail_in))
    run("mail", "send", root / "league", "--smtp", server.spec)
    sent = server.recorder.messages()
    assert [str(m["In-Reply-To"]) for m in sent[:5]] == [f"<q{n}@t>" for n in range(5)]
    # then the moderator's summary, which lists the five questions
    assert len(sent) == 6 and sent[5]["To"] == MODERATOR
    assert all(f"question {n}" in sent[5].get_content() for n in range(5))


def test_run_fetches_resolves_and_sends(root: Path, tmp_path: Path, server: Server) -> None:
    run("config", root, "smtp_host=127.0.0.1", f"smtp_port={server.port}")
    run("config", root, f"maildir={tmp_path / 'Maildir'}")
    duel = root / "duel"
    mail_in = [
        message(address, orders_for(duel, player), mid=f"<{player}@t>")
        for player, address in GAMES["duel"]
    ]
    into_maildir(tmp_path / "Maildir", mail_in)
    output = run("run", root, "--fetch", "--send", "--now", NOW.isoformat())
    assert "resolved  duel" in output and read_game(duel).state.resolution == 2
    assert "accepted: <ann@t> from ann@example.org (ann)" in output  # what the fetch did
    assert "2 messages read: 2 to 1 game, 0 for no game, 0 read before" in output
    sent = [m for m in server.recorder.messages() if "[duel]" in str(m["Subject"])]
    subjects = sorted(str(m["Subject"]) for m in sent)
    assert sum("accepted" in s for s in subjects) == 2
    assert sum(s.startswith("[duel] turn 1") for s in subjects) == 2
    for _, address in GAMES["duel"]:  # each player reads "accepted" before the next report
        mine = [str(m["Subject"]) for m in sent if m["To"] == address]
        assert [("accepted" in s, "turn 1" in s) for s in mine] == [(True, False), (False, True)]
    assert output.splitlines()[-1].endswith("1 resolved, 2 waiting")


def test_a_message_for_a_name_two_games_share_waits(root: Path, tmp_path: Path) -> None:
    shutil.copytree(root / "duel", root / "old" / "duel")
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[1:2])
    output = run("mail", "fetch", root, "--maildir", box, code=1)
    assert "the name of more than one game" in output and "rename one" in output
    assert every_outbox(root) == {}
    shutil.rmtree(root / "old")
    assert "accepted: <2@t>" in run("mail", "fetch", root, "--maildir", box)


def test_games_that_share_a_name_send_nothing(root: Path, server: Server) -> None:
    shutil.copytree(root / "duel", root / "old" / "duel")
    output = run("mail", "send", root, "--smtp", server.spec, code=1)
    assert output.count("not sent: the name 'duel' is also the name of") == 2
    assert all(b"[duel]" not in content for _, _, content in server.recorder.received)
    assert len(server.recorder.received) == 5


# --- the mailbox, the answers for no game, and sending from the library -------------------------


def test_a_mailbox_on_the_command_line_replaces_the_one_in_the_settings(
    root: Path, tmp_path: Path
) -> None:
    from pbem.mail import inbox

    run("config", root, "maildir=Maildir", "imap_host=imap.club.example", "imap_user=mod")
    configured = inbox.mailbox(root)
    assert configured.folders.maildir == root.resolve() / "Maildir"
    assert configured.imap is not None and configured.imap.host == "imap.club.example"
    flagged = inbox.mailbox(root, {"mbox": str(tmp_path / "box")})
    assert (flagged.folders.maildir, flagged.folders.mbox, flagged.imap) == (
        None,
        tmp_path / "box",
        None,
    )
    files = inbox.mailbox(root, {}, [tmp_path / "one.eml"])
    assert (files.folders.maildir, files.folders.files, files.imap) == (
        None,
        (tmp_path / "one.eml",),
        None,
    )


def test_a_message_read_again_from_another_mailbox_is_routed_once(
    root: Path, tmp_path: Path
) -> None:
    mail_in = mixed_mail(root)[:1]
    run("mail", "fetch", root, "--maildir", into_maildir(tmp_path / "Maildir", mail_in))
    copy = tmp_path / "copy.eml"
    copy.write_bytes(mail_in[0].as_bytes())
    output = run("mail", "fetch", root, copy)
    assert output.splitlines()[-1] == "1 message read: 0 to 0 games, 0 for no game, 1 read before"


def test_what_became_of_a_message_for_no_game_is_named(root: Path, tmp_path: Path) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[4:6])
    output = run("mail", "fetch", root, "--maildir", box)
    answer = next(line for line in output.splitlines() if line.startswith("  answer: "))
    assert (root / answer.split(": ", 1)[1]).is_file()
    kept = next(line for line in output.splitlines() if line.startswith("  kept: "))
    assert kept.endswith(".eml") and (root / kept.split(": ", 1)[1]).read_bytes().startswith(
        b"From"
    )


def test_a_damaged_game_is_left_out_of_the_games_an_answer_names(
    root: Path, tmp_path: Path
) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[4:5])  # cy: duel and league
    (root / "duel" / "game.toml").write_text("damaged")
    run("mail", "fetch", root, "--maildir", box)
    (answer,) = [m for name, m in outbox(root).items() if name.startswith("reply-")]
    assert "At this address you play in: league." in answer.get_content()


def test_the_answers_for_no_game_take_the_addresses_in_force_when_sent(
    root: Path, tmp_path: Path, server: Server
) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[4:5])
    run("mail", "fetch", root, "--maildir", box)
    queued = run("mail", "send", root)  # no server in the settings: it waits
    assert "games (messages for no game): 2 messages wait in outbox/" in queued  # and the note
    run("config", root, "from=club@club.example", "reply_to=answers@club.example")
    run("mail", "send", root, "--smtp", server.spec)
    (answer,) = [m for m in server.recorder.messages() if "reached no game" in str(m["Subject"])]
    assert (str(answer["From"]), str(answer["Reply-To"])) == (
        "club@club.example",
        "answers@club.example",
    )


def test_the_library_sends_the_latest_reports_and_no_copies_unless_asked(root: Path) -> None:
    from pbem.mail import inbox

    for game in ("friday", "duel"):
        write_skeletons(root / game)
        processor.resolve_game(root / game)
    game = inbox.send_game(root / "friday")
    assert sorted(game.built) == ["r0001-setup-turn-ann.eml", "r0001-setup-turn-ben.eml"]
    duel = inbox.send_root(root, games=[root / "duel"])  # as `pbem run --send` does
    assert [(name, sorted(r.built)) for name, r in duel.games] == [
        ("duel", ["r0001-setup-turn-ann.eml", "r0001-setup-turn-cy.eml"])
    ]
    rest = inbox.send(root)
    assert isinstance(rest, inbox.RootSend)
    built = {name: sorted(result.built) for name, result in rest.games}
    assert built == {
        "duel": [],
        "friday": [],
        "league": [
            "r0000-deal-ben.eml",
            "r0000-deal-cy.eml",
            "r0000-deal-dee.eml",
        ],  # a new game: its setup
    }
    assert all(msg["Bcc"] is None for msg in every_outbox(root).values())


def test_the_library_writes_a_new_games_first_reports_without_the_kit_unless_asked(
    root: Path,
) -> None:
    from pbem.mail import inbox

    def attached(game: str) -> dict[str, list[str | None]]:
        return {
            name: [p.get_filename() for p in msg.iter_attachments()]
            for name, msg in outbox(root / game).items()
        }

    inbox.send_game(root / "league")
    inbox.send_root(root, games=[root / "friday"])
    inbox.send(root / "duel")
    for game, players in GAMES.items():
        files = attached(game)
        assert sorted(files) == [f"r0000-deal-{p}.eml" for p, _ in players]  # written
        assert all("pbem-player.pyz" not in names for names in files.values())
    assert all(msg["Bcc"] is None for msg in every_outbox(root).values())


def test_a_game_whose_settings_are_damaged_is_not_sent_and_the_rest_are(
    root: Path, server: Server
) -> None:
    path = root / "duel" / "game.toml"
    path.write_text(path.read_text() + '\n[mail]\nfrom = "nobody"\n')
    output = run("mail", "send", root, "--smtp", server.spec, code=1)
    assert "failed: duel: " in output and "from must be one email address" in output
    assert len(server.recorder.received) == 5


def test_a_fetch_that_fails_for_one_game_fails_the_run(root: Path, tmp_path: Path) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[1:2])  # ann's orders for duel
    run("config", root, f"maildir={box}")
    seen = root / "duel" / "mail" / "seen.json"
    seen.parent.mkdir()
    seen.write_text("[")  # damaged: the game cannot take its mail (another run holding it
    output = run("run", root, "--fetch", "--now", NOW.isoformat(), code=1)  # is no failure)
    assert "failed: duel: " in output and "read again next time" in output
    assert output.splitlines()[-1].endswith("3 waiting")


def test_a_folder_that_is_not_there_is_neither_a_game_nor_a_root(tmp_path: Path) -> None:
    from pbem.errors import GameFileError
    from pbem.mail import inbox

    nowhere = tmp_path / "nowhere"
    message = f"{nowhere} is not a game directory: it has no game.toml \\(nor is it a folder"
    with pytest.raises(GameFileError, match=message):
        inbox.fetch(nowhere, inbox.Mailbox())
    with pytest.raises(GameFileError, match=message):
        inbox.send(nowhere)
    assert not nowhere.exists()


def test_a_root_with_nothing_to_send_says_so(root: Path, server: Server) -> None:
    run("mail", "send", root, "--smtp", server.spec)
    assert run("mail", "send", root, "--smtp", server.spec) == "nothing to send in 3 games\n"


def test_run_sends_a_new_games_first_reports_with_the_kit(root: Path, server: Server) -> None:
    run("config", root, "smtp_host=127.0.0.1", f"smtp_port={server.port}")
    run("run", root, "--send", "--kit", "--now", NOW.isoformat())
    firsts = [m for m in server.recorder.messages() if ".r0000." in str(m["Message-ID"])]
    assert firsts and all(
        "pbem-player.pyz" in [p.get_filename() for p in m.iter_attachments()] for m in firsts
    )
    assert "--kit goes with --send" in run("run", root, "--kit", code=2)


def test_a_killed_root_fetch_leaves_no_temporary_behind_the_next(
    root: Path, tmp_path: Path
) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[:1])
    (root / "mail").mkdir(exist_ok=True)
    left = root / "mail" / ".seen.json.ab12cd34.tmp"  # as atomic_write names its temporaries
    left.write_text("{")
    kept = root / "mail" / "notes.txt"  # the moderator's own file: never touched
    kept.write_text("mine")
    run("mail", "fetch", root, "--maildir", box)
    assert not left.exists() and kept.read_text() == "mine"


def test_a_game_fetched_alone_records_when_its_mailbox_was_read_and_when_it_failed(
    root: Path, tmp_path: Path
) -> None:
    import json

    from pbem import mail
    from pbem.errors import PbemError
    from pbem.mail import inbox
    from pbem.records.mailbox_state import FETCHED, last_read

    game = root / "friday"
    box = into_maildir(tmp_path / "Maildir", [])
    inbox.fetch(game, inbox.Mailbox(mail.Sources(maildir=box)), now=NOW)
    assert last_read(game) == NOW  # the time of the fetch, not the clock's
    later = NOW + timedelta(hours=1)
    gone = inbox.Mailbox(mail.Sources(maildir=tmp_path / "gone"))
    with pytest.raises(PbemError, match="cannot read the Maildir"):
        inbox.fetch(game, gone, now=later)
    record = json.loads((game / FETCHED).read_text())
    assert record["failed"] == later.isoformat() and "cannot read the Maildir" in record["why"]
    assert last_read(game) == NOW  # still the last time it was read in full


def test_a_root_whose_one_address_is_refused_sends_the_rest_and_fails(
    root: Path, server: Server
) -> None:
    server.recorder.refuse = {CY: "550 5.1.1 no such user"}
    output = run("mail", "send", root, "--smtp", server.spec, code=1)
    assert "friday: sent r0000-deal-ann.eml to ann@example.org" in output
    assert "duel: failed: r0000-deal-cy.eml: cy@example.org refused: 550" in output
    assert sorted(a for _, rcpt, _ in server.recorder.received for a in rcpt) == sorted(
        [ANN, BEN, ANN, BEN, DEE]
    )


def test_a_root_send_removes_what_a_killed_run_left_half_written_in_the_roots_outbox(
    root: Path, tmp_path: Path, server: Server
) -> None:
    box = into_maildir(tmp_path / "Maildir", mixed_mail(root)[4:5])  # cy's, for no game
    run("mail", "fetch", root, "--maildir", box)
    left = root / "outbox" / ".reply-ab.eml.ab12cd34.tmp"  # as atomic_write names them
    left.write_text("half")
    output = run("mail", "send", root, "--smtp", server.spec)
    assert "games (messages for no game): sent reply-" in output
    assert not left.exists()
