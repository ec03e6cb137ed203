"""Table talk: players' messages to each other, relayed by the game (pbem.mail.press), checked
against the game's settings, recorded in press/ and listed in the reports of those party to
them; delivered through a real SMTP server on loopback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from conftest import flat, force_state, write_skeletons
from test_mail import (
    GAME,
    MODERATOR,
    NOW,
    Server,
    fetch,
    message,
    new_game,  # noqa: F401 (a fixture)
    outbox,
    running_server,
)
from test_mail import (
    game_dir as game_dir,  # noqa: F401 (a fixture)
)

from pbem import mail
from pbem.game import processor
from pbem.game.setting import configure
from pbem.records.opening import read_game
from pbem.records.press import press_records

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
ADDRESSES = {"alice": ALICE, "bob": BOB, "carol": CAROL}


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server()


def delivered(directory: Path, server: Server) -> dict[str, list[EmailMessage]]:
    """Send what waits in the outbox; the table talk each address received (in order)."""
    result = mail.send_mail(directory, server=server.smtp(), now=NOW)
    assert result.ok, result.lines()
    out: dict[str, list[EmailMessage]] = {}
    for msg, (_, rcpt, _raw) in zip(
        server.recorder.messages(), server.recorder.received, strict=True
    ):
        if "press:" in str(msg["Subject"]):
            for to in rcpt:
                out.setdefault(to, []).append(msg)
    return out


def counts(got: dict[str, list[EmailMessage]]) -> dict[str, int]:
    return {to: len(messages) for to, messages in got.items()}


def body(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def answer(directory: Path, result: mail.FetchResult, n: int = 0) -> str:
    reply = result.incoming[n].reply
    assert reply is not None
    return body(outbox(directory)[reply])


def mail_message(path: Path) -> EmailMessage:
    from email import policy
    from email.parser import BytesParser

    return BytesParser(policy=policy.default).parsebytes(path.read_bytes())  # type: ignore[return-value]


def out_of_the_game(directory: Path, seat: str, heir: str, dropped: bool = False) -> None:
    """`seat` is out of the game (eliminated, or `dropped` for missed turns), `heir` holding
    its territories."""
    state = read_game(directory).state
    territories = {
        t: replace(h, owner=heir) if h.owner == seat else h for t, h in state.territories.items()
    }
    players = tuple(
        replace(p, alive=False, dropped=dropped, hand=()) if p.name == seat else p
        for p in state.players
    )
    force_state(directory, replace(state, territories=territories, players=players))


def relayed(directory: Path) -> list[str]:
    return sorted(p.name for p in (directory / "outbox").glob("press-*.eml"))


# --- delivered to exactly the right players ----------------------------------------------------


def test_private_press_reaches_its_one_reader_once_and_no_address_is_shown(
    game_dir: Path, server: Server
) -> None:
    text = "Bob, shall we split Asia? Carol is weak in Siam."
    result = fetch(game_dir, [message(ALICE, f"{text}\n\n-- \nAlice", subject="press: bob")])
    assert result.incoming[0].verdict is mail.Verdict.RELAYED
    assert "relayed (message 1 of this game)" in answer(game_dir, result)
    got = delivered(game_dir, server)
    assert list(got) == [BOB] and len(got[BOB]) == 1
    copy = got[BOB][0]
    assert copy["Subject"] == f"[{GAME}] press: alice"  # a reply is press to alice
    assert text in body(copy) and "from alice to bob:" in body(copy)
    assert "-- \nAlice" not in body(copy).split("\n\n-- \n")[0]  # the signature is left out
    raw = server.recorder.received[[t for _, t, _ in server.recorder.received].index([BOB])][2]
    assert b"alice@" not in raw and b"carol@" not in raw
    assert copy["Reply-To"] == "pbem@localhost"  # the game's address
    # sent again: nothing more goes out
    assert counts(delivered(game_dir, server)) == {BOB: 1}


def test_press_to_several_players_reaches_each_once_naming_the_others(
    game_dir: Path, server: Server
) -> None:
    fetch(game_dir, [message(ALICE, "A pact against the north?", subject="press: bob and Carol")])
    got = delivered(game_dir, server)
    assert sorted(got) == [BOB, CAROL] and all(len(v) == 1 for v in got.values())
    assert got[BOB][0]["Subject"] == f"[{GAME}] press: alice, carol"
    assert got[CAROL][0]["Subject"] == f"[{GAME}] press: alice, bob"
    assert "from alice to bob, carol:" in body(got[BOB][0])


def test_public_press_reaches_every_other_player_and_not_its_sender(
    game_dir: Path, server: Server
) -> None:
    fetch(game_dir, [message(BOB, "Peace in our time.", subject="Press: ALL")])
    got = delivered(game_dir, server)
    assert sorted(got) == [ALICE, CAROL]
    assert all(m["Subject"] == f"[{GAME}] press: all" for v in got.values() for m in v)


def test_a_reply_to_press_is_press_to_the_sender_without_the_quote(
    game_dir: Path, server: Server
) -> None:
    fetch(game_dir, [message(ALICE, "Split Asia?", subject="press: bob")])
    first = delivered(game_dir, server)[BOB][0]
    reply = message(
        BOB,
        "Deal. Ural is yours.\n\nOn Mon, pbem wrote:\n> Split Asia?\n",
        subject=f"Re: {first['Subject']}",
        minutes=5,
    )
    result = fetch(game_dir, [reply])
    assert result.incoming[0].verdict is mail.Verdict.RELAYED
    got = delivered(game_dir, server)
    assert sorted(got) == [ALICE, BOB]  # (bob's first copy, from the first send)
    text = body(got[ALICE][0])
    assert "Deal. Ural is yours." in text and "Split Asia?" not in text
    assert [p.text for p in press_records(game_dir)] == ["Split Asia?", "Deal. Ural is yours."]


def test_unnamed_press_hides_its_sender_and_is_answered_by_its_number(
    game_dir: Path, server: Server
) -> None:
    configure(game_dir, {"press_anonymous": "yes"})
    result = fetch(game_dir, [message(ALICE, "I know what you did.", subject="press: bob")])
    assert "not told who sent it" in answer(game_dir, result)
    copy = delivered(game_dir, server)[BOB][0]
    assert copy["Subject"] == f"[{GAME}] press: #1"
    assert "alice" not in body(copy).lower() and b"alice" not in copy.as_bytes().lower()
    back = fetch(
        game_dir,
        [
            message(BOB, "Who are you?", subject=f"Re: {copy['Subject']}", minutes=3),
            message(CAROL, "Me too?", subject="press: #1", minutes=4),
        ],
    )
    assert [i.verdict for i in back.incoming] == [mail.Verdict.RELAYED, mail.Verdict.REJECTED]
    assert "no message #1 of table talk that you read" in answer(game_dir, back, 1)
    assert press_records(game_dir)[1].to == ("alice",)  # bob answered #1: alice reads it
    assert "bob" not in body(delivered(game_dir, server)[ALICE][0]).lower()  # unnamed too


# --- the settings refuse what they forbid, with a clear answer ---------------------------------


@pytest.mark.parametrize(
    ("settings", "subject", "said"),
    [
        ({"press": "none"}, "press: bob", "this game has no table talk"),
        ({"press": "public"}, "press: bob", "to everyone only"),
        ({"press": "private"}, "press: all", "to chosen players only"),
        ({}, "press: zoe", "there is no player 'zoe' in this game: the players are"),
        ({}, "press: alice", "name whom the table talk is for"),
        ({}, "press:", "name whom the table talk is for"),
    ],
)
def test_the_settings_and_the_names_refuse_what_they_forbid(
    game_dir: Path, settings: dict[str, str], subject: str, said: str
) -> None:
    configure(game_dir, settings)
    result = fetch(game_dir, [message(ALICE, "hello", subject=subject)])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    text = answer(game_dir, result)
    assert said in text and "Nothing of this message was relayed" in text
    assert relayed(game_dir) == [] and press_records(game_dir) == []
    assert result.incoming[0].kept is not None  # kept for the moderator


def test_a_message_over_the_size_is_refused_whole(game_dir: Path) -> None:
    configure(game_dir, {"press_size": "40"})
    result = fetch(
        game_dir,
        [
            message(ALICE, "x" * 41, subject="press: bob"),
            message(ALICE, "y" * 40, subject="press: bob", minutes=1),
        ],
    )
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED, mail.Verdict.RELAYED]
    assert "41 characters long; this game relays at most 40" in answer(game_dir, result)


def test_the_rate_limit_counts_a_players_press_of_the_turn(game_dir: Path) -> None:
    configure(game_dir, {"press_per_turn": "2"})
    three = [message(ALICE, f"note {n}", subject="press: bob", minutes=n) for n in range(3)]
    result = fetch(game_dir, [*three, message(BOB, "mine", subject="press: alice", minutes=4)])
    verdicts = [i.verdict for i in result.incoming]
    assert verdicts == [mail.Verdict.RELAYED] * 2 + [mail.Verdict.REJECTED, mail.Verdict.RELAYED]
    assert "at most 2 a turn" in flat(answer(game_dir, result, 2))
    write_skeletons(game_dir)
    processor.resolve_game(game_dir, now=NOW)
    later = fetch(game_dir, [message(ALICE, "note 3", subject="press: bob", minutes=9)])
    assert later.incoming[0].verdict is mail.Verdict.RELAYED  # a new turn, a new count


def test_a_player_out_of_the_game_sends_nothing_or_public_press_only(game_dir: Path) -> None:
    out_of_the_game(game_dir, "carol", "alice")
    first = fetch(game_dir, [message(CAROL, "revenge", subject="press: all")])
    assert first.incoming[0].verdict is mail.Verdict.REJECTED
    assert "you are out of the game: you may not send table talk" in answer(game_dir, first)
    configure(game_dir, {"press_when_out": "public"})
    second = fetch(
        game_dir,
        [
            message(CAROL, "good game all", subject="press: all", minutes=1),
            message(CAROL, "bob, beat alice", subject="press: bob", minutes=2),
        ],
    )
    assert [i.verdict for i in second.incoming] == [mail.Verdict.RELAYED, mail.Verdict.REJECTED]
    assert "to everyone only" in answer(game_dir, second, 1)


# --- nothing leaks and nothing loops -----------------------------------------------------------


def test_an_auto_reply_to_relayed_press_is_not_relayed(game_dir: Path) -> None:
    fetch(game_dir, [message(ALICE, "Split Asia?", subject="press: bob")])
    before = relayed(game_dir)
    auto = message(
        BOB,
        "I am away until Monday.",
        subject=f"Automatic reply: [{GAME}] press: alice",
        minutes=2,
        headers={"Auto-Submitted": "auto-replied"},
    )
    office = message(
        BOB, "Out of office.", subject=f"Out of Office: Re: [{GAME}] press: alice", minutes=3
    )
    result = fetch(game_dir, [auto, office])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.UNANSWERED] * 2
    assert relayed(game_dir) == before and len(press_records(game_dir)) == 1


def test_a_stranger_cannot_send_press_and_is_not_answered(game_dir: Path) -> None:
    result = fetch(game_dir, [message("eve@evil.example", "hi bob", subject="press: bob")])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert result.incoming[0].reply is None
    assert relayed(game_dir) == [] and not (game_dir / "press").exists()


def test_hostile_text_is_relayed_safely(game_dir: Path, server: Server) -> None:
    sneaky = "pay \u202egnp.exe\u202c now\x1b[31m red\x07\r\nsecond line"
    html = "<p>Hi <b>Bob</b>,</p><script>alert(1)</script><p>meet in Ural &amp; Siam</p>"
    fetch(
        game_dir,
        [
            message(ALICE, sneaky, subject="press: bob"),
            message(ALICE, None, html=html, subject="press: bob", minutes=1),
        ],
    )
    first, second = press_records(game_dir)
    assert first.text == "pay gnp.exe now[31m red\nsecond line"
    assert "<" not in second.text and "meet in Ural & Siam" in second.text
    write_skeletons(game_dir)
    processor.resolve_game(game_dir, now=NOW)
    html_report = next((game_dir / "reports").glob("0001-*/bob.html")).read_text()
    assert "Ural &amp; Siam" in html_report and "<script>alert" not in html_report


def test_a_huge_message_is_refused_unread(game_dir: Path) -> None:
    result = fetch(game_dir, [message(ALICE, "x" * (5 * 1024 * 1024), subject="press: bob")])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert relayed(game_dir) == []


# --- [[press]] in an order file ----------------------------------------------------------------


def test_press_tables_in_an_attached_order_file(game_dir: Path, server: Server) -> None:
    text = (
        f'game = "{GAME}"\nplayer = "alice"\n\n'
        '[[press]]\nto = "all"\ntext = "Hello, table."\n\n'
        '[[press]]\nto = ["carol"]\ntext = """\nCarol:\nlet us talk.\n"""\n'
    )
    result = fetch(game_dir, [message(ALICE, "my press", subject="talk", attach=text)])
    assert result.incoming[0].verdict is mail.Verdict.RELAYED
    assert [(p.to, p.text) for p in press_records(game_dir)] == [
        (("all",), "Hello, table."),
        (("carol",), "Carol:\nlet us talk."),
    ]
    got = delivered(game_dir, server)
    assert len(got[BOB]) == 1 and len(got[CAROL]) == 2


def test_press_beside_orders_in_one_file_plays_and_relays_nothing(game_dir: Path) -> None:
    text = (
        f'game = "{GAME}"\nplayer = "alice"\n\n[[place]]\nterritory = "Peru"\narmies = 1\n\n'
        '[[press]]\nto = "bob"\ntext = "hi"\n'
    )
    result = fetch(game_dir, [message(ALICE, text, subject="orders")])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "send orders in a message of their own" in answer(game_dir, result)
    assert not (game_dir / "orders" / "alice.toml").exists() and relayed(game_dir) == []


def test_orders_in_a_message_of_table_talk_are_not_played_and_the_answer_says_so(
    game_dir: Path,
) -> None:
    from test_mail import orders_for

    result = fetch(game_dir, [message(ALICE, orders_for(game_dir, "alice"), subject="press: bob")])
    assert result.incoming[0].verdict is mail.Verdict.RELAYED
    assert "The orders in this message were not read" in answer(game_dir, result)
    assert not (game_dir / "orders" / "alice.toml").exists()


# --- the record --------------------------------------------------------------------------------


def test_a_fetch_killed_in_the_middle_of_a_relay_relays_each_message_once(
    game_dir: Path, server: Server, tmp_path: Path
) -> None:
    """Killed (`kill -9`) after the first reader's copy is in the outbox and before the
    second's: run again, the message is recorded once and each reader gets it once."""
    from test_mail import into_maildir

    import pbem.mail.press as press_module

    box = into_maildir(
        tmp_path / "box", [message(ALICE, "To you both.", subject="press: bob, carol")]
    )
    pid = os.fork()
    if pid == 0:  # the child: killed as the second copy is queued
        try:
            calls: list[int] = []
            queue = press_module.queue

            def dying(*args: object, **kwargs: object) -> str:
                calls.append(1)
                if len(calls) == 2:
                    from pbem.records.disk import settle

                    settle()  # the record and the first copy are on the disk
                    os._exit(9)
                return queue(*args, **kwargs)  # type: ignore[arg-type]

            press_module.queue = dying  # type: ignore[assignment]
            mail.fetch_orders(game_dir, mail.Sources(maildir=box), MODERATOR, NOW)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 9
    assert len(relayed(game_dir)) == 1 and len(press_records(game_dir)) == 1
    again = mail.fetch_orders(game_dir, mail.Sources(maildir=box), MODERATOR, NOW)
    assert again.incoming[0].verdict is mail.Verdict.RELAYED
    assert len(press_records(game_dir)) == 1
    got = delivered(game_dir, server)
    assert sorted(got) == [BOB, CAROL] and all(len(v) == 1 for v in got.values())
    rerun = mail.fetch_orders(game_dir, mail.Sources(maildir=box), MODERATOR, NOW)
    assert rerun.incoming == () and rerun.count(mail.Verdict.DUPLICATE) == 1
    assert counts(delivered(game_dir, server)) == {BOB: 1, CAROL: 1}


def test_the_report_and_view_list_the_press_each_player_was_party_to(game_dir: Path) -> None:
    fetch(
        game_dir,
        [
            message(ALICE, "for bob only", subject="press: bob"),
            message(BOB, "for everyone", subject="press: all", minutes=1),
        ],
    )
    write_skeletons(game_dir)
    processor.resolve_game(game_dir, now=NOW)
    folder = next((game_dir / "reports").glob("0001-*"))
    for player, wanted in (
        ("alice", ["for bob only", "for everyone"]),
        ("bob", ["for bob only", "for everyone"]),
        ("carol", ["for everyone"]),
    ):
        text = (folder / f"{player}.txt").read_text()
        assert "Table talk this turn" in text
        assert [t for t in ("for bob only", "for everyone") if t in text] == wanted
        view = json.loads((folder / f"{player}.view.json").read_text())
        assert [p["text"] for p in view["press"]] == wanted
    assert "#1, from alice to bob:" in (folder / "alice.txt").read_text()
    assert "#1, from alice to bob:" in (folder / "bob.txt").read_text()
    # the next turn's reports list only the press of their own turn
    write_skeletons(game_dir)
    processor.resolve_game(game_dir, now=NOW + timedelta(minutes=1))
    later = next((game_dir / "reports").glob("0002-*"))
    assert "Table talk" not in (later / "bob.txt").read_text()
    assert "press" not in json.loads((later / "bob.view.json").read_text())


# --- privacy over a whole game -----------------------------------------------------------------


def test_over_a_whole_game_no_player_holds_press_they_were_not_party_to(tmp_path: Path) -> None:
    """Three players talk every turn (to one other, to everyone, unnamed half the game) while
    bots' orders play the game to its end; then every file a player is given (their reports,
    views and order files, and every message mailed to them) is searched for each message's
    mark: a player holds exactly the marks of the press they sent or were sent, an unnamed
    message's sender is never named to its readers, and one who answers an unnamed message by
    its number (`press: #N`) is never told whom their answer went to."""
    import random

    from bots import orders_for
    from test_mail import PLAYERS, SEED

    from pbem.core.state import Options, Phase

    directory = tmp_path / GAME
    processor.new_game(directory, PLAYERS, Options(), seed=SEED, name=GAME)
    rng = random.Random(7)
    names = [name for name, _ in PLAYERS]
    party: dict[str, set[str]] = {name: set() for name in names}
    unnamed: dict[str, str] = {}  # mark: sender
    hidden: dict[str, str] = {}  # mark: the unnamed seat it was written to as #N
    when = NOW
    for r in range(200):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            break
        anonymous = "yes" if r % 4 >= 2 else "no"
        configure(directory, {"press_anonymous": anonymous})
        letters = []
        for n, sender in enumerate(names):
            if not game.state.player(sender).alive:
                continue
            reader = rng.choice([other for other in names if other != sender])
            public = rng.random() < 0.2
            to = "all" if public else reader
            answerable = [
                p
                for p in press_records(directory)
                if p.anonymous and not p.public and sender in p.to and p.sender != sender
            ]
            mark = f"mark-{r}-{sender}-{'all' if public else reader}-x"
            if anonymous == "yes" and answerable and rng.random() < 0.5:
                earlier = rng.choice(answerable)
                public, reader, to = False, earlier.sender, f"#{earlier.number}"
                mark = f"mark-{r}-{sender}-answer-x"
                hidden[mark] = reader
            letters.append(
                message(
                    ADDRESSES[sender],
                    f"Psst: {mark}",
                    subject=f"press: {to}",
                    minutes=r * 10 + n,
                    mid=f"<{mark}@test>",
                )
            )
            party[sender].add(mark)
            for other in names if public else [reader]:
                party[other].add(mark)
            if anonymous == "yes":
                unnamed[mark] = sender
        result = fetch(directory, letters)
        assert all(i.verdict is mail.Verdict.RELAYED for i in result.incoming), result.lines()
        for name in game.state.awaiting():
            reg = game.registration(name)
            assert reg is not None
            orders = replace(orders_for(game.state, name, rng), secret=reg.secret)
            (directory / "orders" / f"{name}.toml").write_text(orders.to_toml(), "utf-8")
        when += timedelta(hours=1)
        processor.resolve_game(directory, now=when)
        mail.send_mail(directory, now=when)  # each player's reports into the outbox
    assert read_game(directory).state.phase is Phase.OVER
    marks = {m for held in party.values() for m in held}
    for name in names:
        texts = [p.read_text("utf-8") for p in (directory / "reports").glob(f"*/{name}.*")]
        for path in (directory / "outbox").glob("*.eml"):
            msg = mail_message(path)
            if str(msg["To"]) == ADDRESSES[name]:
                texts += [
                    str(part.get_content())
                    for part in msg.walk()
                    if part.get_content_maintype() == "text" or part.get_filename() is not None
                ]
        held = {m for m in marks if any(m in t for t in texts)}
        assert held == party[name], (name, sorted(held ^ party[name])[:5])
        for text in texts:
            for mark, sender in unnamed.items():
                if sender == name or mark not in text:
                    continue
                for before in text.split(mark)[:-1]:
                    told = before[-200:]
                    assert f"from {sender} " not in told and f'"from": "{sender}"' not in told
        heads = ("\n  #", '"number"', "<div>#", "Table talk in", "Your table talk is relayed")
        for text in texts:
            for mark, seat in hidden.items():
                if seat == name or mark not in text:
                    continue
                for before in text.split(mark)[:-1]:
                    start = max(before.rfind(head) for head in heads)
                    told = before[start:] if start >= 0 else before[-200:]
                    assert seat not in told, (name, mark, told)
    assert hidden, "no unnamed message was answered by its number"


# --- the record on the command line, and other languages ---------------------------------------


def test_pbem_press_lists_the_record_whole_or_as_a_player_was_told_it(game_dir: Path) -> None:
    from test_mail import run

    assert run("press", game_dir).strip() == f"{GAME}: no table talk yet"
    configure(game_dir, {"press_anonymous": "yes"})
    fetch(
        game_dir,
        [
            message(ALICE, "a secret pact", subject="press: bob"),
            message(BOB, "line one\nline two", subject="press: all", minutes=1),
        ],
    )
    whole = run("press", game_dir)
    assert (
        "#1, turn 0, 2027-03-01T12:00:00+00:00: from alice (not named to its readers) to bob"
        in whole
    )
    assert "    | line one\n    | line two" in whole
    carol = run("press", game_dir, "--player", "Carol")
    assert "a secret pact" not in carol and "from a player not named to everyone" in carol
    bob = json.loads(run("press", game_dir, "--player", "bob", "--json"))
    assert [(p["from"], p["text"]) for p in bob] == [
        (None, "a secret pact"),
        ("bob", "line one\nline two"),
    ]
    records = json.loads(run("press", game_dir, "--json"))
    assert [p["from"] for p in records] == ["alice", "bob"]
    assert "there is no player 'zoe'" in run("press", game_dir, "--player", "zoe", code=1)


def test_a_player_writes_and_reads_table_talk_in_their_language(game_dir: Path) -> None:
    """bob reads Swedish: his copy, its subject and the answers to him are in Swedish, and
    the Swedish word for press is read from him (as every language's is from anyone)."""
    from test_mail import run

    run("config", game_dir, "player.bob.language=sv", "--now", NOW.isoformat())
    fetch(game_dir, [message(ALICE, "Hej Bob!", subject="press: bob")])
    copy = outbox(game_dir)[relayed(game_dir)[0]]
    assert copy["Subject"] == f"[{GAME}] meddelande: alice"
    assert body(copy).startswith(f"Spelarmeddelande i {GAME}, tur 0, från alice till bob:")
    result = fetch(
        game_dir,
        [
            message(BOB, "Hej!", subject=f"SV: {copy['Subject']}", minutes=2),
            message(BOB, "Alla, hej!", subject="Meddelande: alla", minutes=3),
            message(BOB, "?", subject="meddelande: zoe", minutes=4),
        ],
    )
    verdicts = [i.verdict for i in result.incoming]
    assert verdicts == [mail.Verdict.RELAYED, mail.Verdict.RELAYED, mail.Verdict.REJECTED]
    assert answer(game_dir, result).startswith("Ditt spelarmeddelande är vidarebefordrat")
    assert "det finns ingen spelare 'zoe' i det här spelet" in answer(game_dir, result, 2)
    assert [p.to for p in press_records(game_dir)[1:]] == [("alice",), ("all",)]


def test_in_a_folder_of_games_press_goes_to_the_game_its_subject_names(
    tmp_path: Path, server: Server
) -> None:
    """ben plays in two games: his reply tagged [league] is relayed to league's player only;
    his untagged press names no game, is relayed nowhere and is answered from the folder."""
    from test_mail import into_maildir, run

    root = tmp_path / "games"
    games = {"friday": ["ann", "ben"], "league": ["ben", "cy", "dee"]}
    for name, players in games.items():
        seats = [(p, f"{p}@example.org") for p in players]
        processor.new_game(root / name, seats, processor.Options(), seed=bytes(32), name=name)
    box = into_maildir(
        tmp_path / "box",
        [
            message("ben@example.org", "Cy, north or south?", subject="Re: [league] press: cy"),
            message("ben@example.org", "Ann?", subject="press: ann", minutes=1),
        ],
    )
    run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    assert [p.text for p in press_records(root / "league")] == ["Cy, north or south?"]
    assert press_records(root / "friday") == []
    run("mail", "send", root, "--smtp", server.spec, "--now", NOW.isoformat())
    talk = [
        (rcpt, msg["Subject"])
        for msg, (_, rcpt, _raw) in zip(
            server.recorder.messages(), server.recorder.received, strict=True
        )
        if "press" in str(msg["Subject"])
    ]
    assert sorted(talk) == [
        (["ben@example.org"], "[league] press relayed: cy"),
        (["cy@example.org"], "[league] press: ben"),
    ]
    (for_none,) = [m for m in server.recorder.messages() if "you play in" in body(m)]
    assert for_none["To"] == "ben@example.org" and "Ann?" not in body(for_none)


def test_a_press_folder_linked_elsewhere_stops_the_game_before_anything_is_written(
    game_dir: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (game_dir / "press").symlink_to(elsewhere)
    with pytest.raises(Exception, match="press is a symbolic link"):
        fetch(game_dir, [message(ALICE, "hi", subject="press: bob")])
    assert list(elsewhere.iterdir()) == [] and relayed(game_dir) == []


def test_table_talk_nested_too_deep_is_refused_with_the_reason(game_dir: Path) -> None:
    from test_mail_fetch import nested

    deep = nested(ALICE, 30).replace(b"Subject: deep", b"Subject: press: bob")
    (incoming,) = fetch(game_dir, [deep]).incoming
    assert incoming.verdict is mail.Verdict.REJECTED
    assert "nested too deep to read (more than 20 levels)" in incoming.reasons[0]
    assert relayed(game_dir) == [] and press_records(game_dir) == []


def test_a_seat_played_by_a_program_or_without_an_address_reads_no_table_talk(
    tmp_path: Path,
) -> None:
    """dave's seat is a bot's and erin has no address: public press goes to bob alone, and
    press for either of them is refused saying why."""
    from pbem.game.bots import set_bot

    directory = tmp_path / GAME
    seats = [("alice", ALICE), ("bob", BOB), ("dave", "dave@example.org"), ("erin", "")]
    processor.new_game(directory, seats, processor.Options(), seed=bytes(32), name=GAME)
    set_bot(directory, "dave", "reference")
    result = fetch(
        directory,
        [
            message(ALICE, "Hello all.", subject="press: all"),
            message(ALICE, "Dave?", subject="press: dave", minutes=1),
            message(ALICE, "Erin?", subject="press: erin", minutes=2),
        ],
    )
    verdicts = [i.verdict for i in result.incoming]
    assert verdicts == [mail.Verdict.RELAYED, mail.Verdict.REJECTED, mail.Verdict.REJECTED]
    assert [str(outbox(directory)[name]["To"]) for name in relayed(directory)] == [BOB]
    for n, seat in ((1, "dave"), (2, "erin")):
        assert f"{seat} is played by a program or has no address" in answer(directory, result, n)


def test_a_substitute_s_press_is_recorded_as_the_seat_s_with_who_played_it(
    game_dir: Path,
) -> None:
    """zoe took carol's seat: her press is carol's seat's, from zoe's address, and the record
    names her as who played the seat; the seat's earlier player can no longer send for it."""
    from pbem.game import seats

    seats.substitute(game_dir, "carol", "zoe", "zoe@example.org", NOW)
    result = fetch(
        game_dir,
        [
            message("zoe@example.org", "Zoe here, for carol's armies.", subject="press: alice"),
            message(CAROL, "Still me?", subject="press: alice", minutes=1),
        ],
    )
    assert [i.verdict for i in result.incoming] == [mail.Verdict.RELAYED, mail.Verdict.REJECTED]
    (record,) = press_records(game_dir)
    assert (record.sender, record.holder) == ("carol", "zoe")
    text = next((game_dir / "press").glob("0001-*.toml")).read_text()
    assert 'holder = "zoe"' in text and 'from = "carol"' in text


def test_a_damaged_record_is_named_and_other_files_in_press_are_left_alone(
    game_dir: Path,
) -> None:
    from pbem.errors import GameFileError

    fetch(game_dir, [message(ALICE, "one", subject="press: bob")])
    folder = game_dir / "press"
    (folder / "notes.txt").write_text("the moderator's own notes\n")
    (folder / ".0002-0123456789abcdef.toml.1a2b3c4d.tmp").write_text("half written")
    assert [p.text for p in press_records(game_dir)] == ["one"]
    (record,) = folder.glob("0001-*.toml")
    for damage in ('to = "bob"', "to = []", "to = [1]"):
        text = record.read_text()
        record.write_text(
            "\n".join(
                damage if line.startswith("to =") else line
                for line in text.replace('[\n    "bob",\n]', '["bob"]').splitlines()
            )
        )
        with pytest.raises(GameFileError, match=f"{record.name} is damaged or incomplete"):
            press_records(game_dir)
        record.write_text(text)
    record.write_text(record.read_text().replace("number = 1", "number = 5"))
    with pytest.raises(GameFileError, match=f"{record.name} holds message 5"):
        press_records(game_dir)


def test_a_long_line_of_table_talk_is_wrapped_to_the_reports_width(game_dir: Path) -> None:
    long = "Let us talk about the north: " + "the ice is thin, and so is my patience. " * 8
    fetch(game_dir, [message(ALICE, long, subject="press: bob")])
    write_skeletons(game_dir)
    processor.resolve_game(game_dir, now=NOW)
    text = next((game_dir / "reports").glob("0001-*/bob.txt")).read_text()
    talk = text[text.index("Table talk this turn") : text.index("What happened")]
    rows = [row for row in talk.splitlines() if row.startswith("    |")]
    assert len(rows) > 3 and all(len(row) <= 78 for row in rows)
    assert " ".join(row[6:] for row in rows) == long.strip()
    html = next((game_dir / "reports").glob("0001-*/bob.html")).read_text()
    assert long.strip() in html  # the page wraps it as the screen is wide


def test_the_moderators_overview_names_every_sender_and_says_whom_the_readers_were_not_told(
    game_dir: Path,
) -> None:
    configure(game_dir, {"press_anonymous": "yes"})
    fetch(game_dir, [message(ALICE, "boo", subject="press: bob")])
    write_skeletons(game_dir)
    processor.resolve_game(game_dir, now=NOW)
    folder = next((game_dir / "reports").glob("0001-*"))
    overview = " ".join((folder / "_moderator.txt").read_text().split())
    assert "#1, from alice to bob: (not named to its readers)" in overview
    bob = " ".join((folder / "bob.txt").read_text().split())
    assert "#1, from a player not named to bob:" in bob and "not named to its readers" not in bob


def test_an_answer_to_unnamed_press_never_names_its_sender_to_the_one_who_answers(
    game_dir: Path, server: Server
) -> None:
    """alice's unnamed #1 reaches bob; bob answers "#1" and carol together: alice reads it, but
    neither bob (his answer, his report, his view, the record as he is told it) nor carol (her
    copy, its subject, her report) learns that #1 was alice's."""
    from test_mail import run

    configure(game_dir, {"press_anonymous": "yes"})
    fetch(game_dir, [message(ALICE, "Who am I?", subject="press: bob")])
    result = fetch(
        game_dir, [message(BOB, "No idea. Carol?", subject="press: #1, carol", minutes=2)]
    )
    assert result.incoming[0].verdict is mail.Verdict.RELAYED
    mine = answer(game_dir, result)
    assert "alice" not in mine and "to #1, carol" in mine
    got = delivered(game_dir, server)
    assert sorted(got) == [ALICE, BOB, CAROL]
    carol = got[CAROL][0]
    assert "alice" not in str(carol["Subject"]) + body(carol)
    assert carol["Subject"] == f"[{GAME}] press: #2"  # unnamed bob; #1's sender out of reach
    assert "to #1, carol:" in body(carol)
    assert "No idea. Carol?" in body(got[ALICE][0])
    write_skeletons(game_dir)
    processor.resolve_game(game_dir, now=NOW)
    folder = next((game_dir / "reports").glob("0001-*"))
    for seat in ("bob", "carol"):
        text = (folder / f"{seat}.txt").read_text() + (folder / f"{seat}.view.json").read_text()
        assert "alice" not in text[text.index("Table talk") :].split("What happened")[0]
        assert "alice" not in json.dumps(
            json.loads((folder / f"{seat}.view.json").read_text())["press"]
        )
        told = run("press", game_dir, "--player", seat)
        assert "alice" not in told and "#1" in told
    assert "to alice, carol" in run("press", game_dir)  # the moderator knows
    (record,) = [p for p in press_records(game_dir) if p.number == 2]
    assert record.to == ("alice", "carol") and record.readers_for("bob") == ("#1", "carol")
    assert record.readers_for("alice") == ("#1", "carol") and record.readers_for(None) == record.to


def test_the_longest_message_a_game_may_allow_is_below_what_a_message_is_read_to(
    game_dir: Path,
) -> None:
    """A message's own text is read up to 20,000 characters: no game may allow press that long,
    so a longer text is refused as too long rather than cut and relayed."""
    from pbem.records.settings import LARGEST_PRESS_SIZE, SettingsError

    assert LARGEST_PRESS_SIZE < 20_000
    with pytest.raises(SettingsError):
        configure(game_dir, {"press_size": str(LARGEST_PRESS_SIZE + 1)})
    configure(game_dir, {"press_size": str(LARGEST_PRESS_SIZE)})
    result = fetch(game_dir, [message(ALICE, "y" * 25_000, subject="press: bob")])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert f"this game relays at most {LARGEST_PRESS_SIZE}" in answer(game_dir, result)


def test_press_for_a_player_who_left_the_game_is_refused_and_public_press_skips_them(
    game_dir: Path,
) -> None:
    out_of_the_game(game_dir, "carol", "alice", dropped=True)
    result = fetch(
        game_dir,
        [
            message(BOB, "Carol?", subject="press: carol"),
            message(BOB, "All of you.", subject="press: all", minutes=1),
        ],
    )
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED, mail.Verdict.RELAYED]
    assert "carol has left the game" in answer(game_dir, result)
    assert [str(outbox(game_dir)[n]["To"]) for n in relayed(game_dir)] == [ALICE]


# --- found by a review: names, households, subjects, headings ------------------------------------


def test_a_player_called_by_a_word_for_everyone_gets_private_press(tmp_path: Path) -> None:
    directory = tmp_path / GAME
    seats = [("alice", ALICE), ("allen", "allen@example.org"), ("carol", CAROL)]
    processor.new_game(directory, seats, processor.Options(), seed=bytes(32), name=GAME)
    fetch(directory, [message(ALICE, "Allen, only between us.", subject="press: Allen")])
    (record,) = press_records(directory)
    assert record.to == ("allen",)
    assert [str(outbox(directory)[n]["To"]) for n in relayed(directory)] == ["allen@example.org"]


def test_naming_a_guess_beside_an_unnamed_number_tells_nothing(game_dir: Path) -> None:
    configure(game_dir, {"press_anonymous": "yes"})
    fetch(
        game_dir,
        [
            message(ALICE, "one", subject="press: bob"),
            message(ALICE, "two", subject="press: bob", minutes=1),
        ],
    )
    result = fetch(
        game_dir,
        [
            message(BOB, "guess", subject="press: #1, alice", minutes=2),
            message(BOB, "same?", subject="press: #1, #2", minutes=3),
        ],
    )
    assert "to #1, alice" in answer(game_dir, result, 0)  # as written, whoever #1 is
    assert "to #1, #2" in answer(game_dir, result, 1)  # not merged into one sender
    guess, same = press_records(game_dir)[2:]
    assert guess.to == ("alice",) and same.to == ("alice",)  # each delivered once
    assert sum(str(outbox(game_dir)[n]["To"]) == ALICE for n in relayed(game_dir)) == 2


def test_a_press_file_in_another_players_name_is_refused_without_telling_them(
    game_dir: Path,
) -> None:
    text = f'game = "{GAME}"\nplayer = "carol"\n\n[[press]]\nto = "alice"\ntext = "hi"\n'
    result = fetch(game_dir, [message(BOB, "see attached", subject="talk", attach=text)])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert 'player = "bob"' in answer(game_dir, result)
    to_carol = [
        m for n, m in outbox(game_dir).items() if not n.startswith("r0000") and m["To"] == CAROL
    ]
    assert to_carol == []  # carol is not told of it (nor, so, of bob's address)
    # an example file in the text of a message of table talk is only text
    example = message(BOB, "Send it like this:\n\n" + text, subject="press: carol", minutes=1)
    again = fetch(game_dir, [example])
    assert again.incoming[0].verdict is mail.Verdict.RELAYED
    assert press_records(game_dir)[0].to == ("carol",)


def test_a_household_address_sends_press_from_the_seat_its_file_names(tmp_path: Path) -> None:
    directory = tmp_path / GAME
    home = "home@example.org"
    seats = [("alice", ALICE), ("bob", home), ("carol", home)]
    processor.new_game(directory, seats, processor.Options(), seed=bytes(32), name=GAME)
    text = f'game = "{GAME}"\nplayer = "carol"\n\n[[press]]\nto = "alice"\ntext = "from carol"\n'
    result = fetch(
        directory,
        [
            message(home, "hi", subject="press: alice"),
            message(home, "file", subject="talk", attach=text, minutes=1),
        ],
    )
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED, mail.Verdict.RELAYED]
    assert "this address plays for bob, carol" in answer(directory, result, 0)
    (record,) = press_records(directory)
    assert (record.sender, record.text) == ("carol", "from carol")


@pytest.mark.parametrize("subject", ["Press: my orders for turn 1", "Bericht: mijn orders"])
def test_a_subject_that_only_begins_with_the_word_plays_the_orders_in_it(
    game_dir: Path, subject: str
) -> None:
    from test_mail import orders_for

    result = fetch(game_dir, [message(ALICE, orders_for(game_dir, "alice"), subject=subject)])
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED
    assert (game_dir / "orders" / "alice.toml").exists() and press_records(game_dir) == []


def test_a_subject_that_begins_with_the_word_but_names_no_one_is_also_passed_on(
    game_dir: Path,
) -> None:
    result = fetch(game_dir, [message(ALICE, "When is my turn?", subject="Messaggio: turno")])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    said = answer(game_dir, result)
    assert "there is no player 'turno' in this game" in said
    assert "your message has been passed to the moderator" in flat(said)
    (note,) = [m for n, m in outbox(game_dir).items() if n.startswith("note-")]
    assert "When is my turn?" in body(note)


def test_orders_under_a_subject_of_table_talk_in_a_game_without_it_are_played(
    game_dir: Path,
) -> None:
    from test_mail import orders_for

    configure(game_dir, {"press": "none"})
    body = orders_for(game_dir, "alice")
    result = fetch(game_dir, [message(ALICE, body, subject="press: bob")])
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED


def test_a_refusal_of_table_talk_says_the_orders_beside_it_were_not_read(game_dir: Path) -> None:
    from test_mail import orders_for

    configure(game_dir, {"press_size": "10"})
    result = fetch(game_dir, [message(ALICE, orders_for(game_dir, "alice"), subject="press: bob")])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "The orders in this message were not read" in answer(game_dir, result)


def test_a_relayed_text_cannot_pass_for_the_games_own_heading(game_dir: Path) -> None:
    fake = f"hi\n\nTable talk in {GAME}, turn 0, from alice to carol:\n\nGive me Siam."
    fetch(game_dir, [message(BOB, fake, subject="press: carol")])
    copy = body(outbox(game_dir)[relayed(game_dir)[0]])
    assert copy.startswith(f"Table talk in {GAME}, turn 0, from bob to carol:\n\n| hi\n")
    assert f"\n| Table talk in {GAME}, turn 0, from alice to carol:\n" in copy
    assert copy.count("\nTable talk in") == 0


def test_an_answer_to_a_sender_who_has_left_is_refused_without_naming_them(
    game_dir: Path,
) -> None:
    configure(game_dir, {"press_anonymous": "yes"})
    fetch(game_dir, [message(ALICE, "boo", subject="press: bob")])
    out_of_the_game(game_dir, "alice", "carol", dropped=True)
    result = fetch(game_dir, [message(BOB, "hello?", subject="press: #1", minutes=5)])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    said = answer(game_dir, result)
    assert "the sender of #1 has left the game or reads no table talk" in said
    assert "alice" not in said


def test_the_time_of_press_is_kept_in_utc(game_dir: Path) -> None:
    letter = message(ALICE, "hi", subject="press: bob")
    del letter["Date"]
    letter["Date"] = "Mon, 01 Mar 2027 17:30:00 +0530"
    fetch(game_dir, [letter])
    assert press_records(game_dir)[0].time == "2027-03-01T12:00:00+00:00"


def test_a_substitute_counts_only_their_own_press_of_the_turn(game_dir: Path) -> None:
    from pbem.game import seats

    configure(game_dir, {"press_per_turn": "1"})
    fetch(game_dir, [message(CAROL, "from carol", subject="press: alice")])
    seats.substitute(game_dir, "carol", "zoe", "zoe@example.org", NOW)
    result = fetch(game_dir, [message("zoe@example.org", "zoe", subject="press: alice", minutes=1)])
    assert result.incoming[0].verdict is mail.Verdict.RELAYED
