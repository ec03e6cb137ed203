"""Mail in: who may send orders for a player, and what of a message's text is read as orders."""

from __future__ import annotations

import shutil
from dataclasses import FrozenInstanceError
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest
from test_mail import orders_for, ready_file

from pbem import mail
from pbem.core.state import Options
from pbem.errors import GameFileError, PbemError
from pbem.game import processor
from pbem.mail import machine, message, records, sources
from pbem.mail import smtp as send
from pbem.records.mailstate import SEEN, MailState
from pbem.records.opening import read_game

GAME = "summer-2027"
MODERATOR = "moderator@example.org"
PLAYERS = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")]
T0 = datetime(2027, 6, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("made") / GAME
    processor.new_game(directory, PLAYERS, Options(), seed=bytes(range(32)), name=GAME)
    return directory


@pytest.fixture
def game_dir(made: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(made, tmp_path / GAME))


def ready_orders(directory: Path, player: str) -> str:
    """Valid orders the player wrote (not the ready file unchanged, which a text never plays)."""
    return orders_for(directory, player)


def raw_message(headers: list[tuple[str, str]], body: str) -> bytes:
    """A message as bytes, headers exactly as given (two From headers are possible here)."""
    lines = [f"{name}: {value}" for name, value in headers]
    lines += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", body]
    return "\r\n".join(lines).encode()


def headers(sender: str, n: int = 0) -> list[tuple[str, str]]:
    return [
        ("From", sender),
        ("To", MODERATOR),
        ("Subject", "orders"),
        ("Date", format_datetime(T0 + timedelta(minutes=n))),
        ("Message-ID", f"<m{n}@test>"),
    ]


def fetch_raw(directory: Path, *messages: bytes, now: datetime | None = None) -> mail.FetchResult:
    files = []
    for i, data in enumerate(messages):
        path = directory.parent / f"in-{i}.eml"
        path.write_bytes(data)
        files.append(path)
    return mail.fetch_orders(directory, mail.Sources(files=tuple(files)), MODERATOR, now=now)


@pytest.mark.parametrize(
    "from_header",
    [
        "alice@example.org, mallory@evil.example",
        "Mallory <mallory@evil.example>, Alice <alice@example.org>",
        "alice@example.org, alice@example.org.evil.example",
    ],
)
def test_a_from_with_a_registered_and_an_unregistered_address_is_not_the_player(
    game_dir: Path, from_header: str
) -> None:
    result = fetch_raw(game_dir, raw_message(headers(from_header), ready_orders(game_dir, "alice")))
    [incoming] = result.incoming
    assert incoming.verdict is mail.Verdict.REJECTED
    assert "From" in incoming.reasons[0] or "not the address registered" in incoming.reasons[0]
    assert not (game_dir / "orders" / "alice.toml").exists()
    assert message.sender_address([from_header])[0] is None


@pytest.mark.parametrize("player_first", [False, True])
def test_two_from_headers_are_not_the_player(game_dir: Path, player_first: bool) -> None:
    two = [("From", "mallory@evil.example"), *headers("alice@example.org")]
    if player_first:  # the player's address where a reader of the first header finds it
        two = [*headers("alice@example.org"), ("From", "mallory@evil.example")]
    result = fetch_raw(game_dir, raw_message(two, ready_orders(game_dir, "alice")))
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "more than one From header" in " ".join(result.incoming[0].reasons)
    assert not (game_dir / "orders" / "alice.toml").exists()
    values = [value for name, value in two if name == "From"]
    assert message.sender_address(values) == (None, "it has more than one From header")


@pytest.mark.parametrize("values", [[], [""], ["  "]])
def test_a_from_header_missing_or_blank_is_no_from_address(values: list[str]) -> None:
    assert message.sender_address(values) == (None, "it has no From address")


def test_a_route_address_is_not_the_player(game_dir: Path) -> None:
    value = "<@relay.example:alice@example.org>"
    result = fetch_raw(game_dir, raw_message(headers(value), ready_orders(game_dir, "alice")))
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert not (game_dir / "orders" / "alice.toml").exists()
    assert message.sender_address([value]) == (
        None,
        f"its From header is not one readable address: {value}",
    )


@pytest.mark.parametrize(
    ("value", "pairs"),
    [
        ("<@relay.example:alice@example.org>", [("", "alice@example.org")]),
        ("Alice <@relay.example:alice@example.org>", [("Alice", "alice@example.org")]),
        ("alice@example.org <bob@evil.example>", [("", "alice@example.org")]),
        ("alice@example.org <bob@evil.example>", [("alice@example.org", "bob@evil.example")]),
    ],
)
def test_a_lenient_address_parser_does_not_make_a_stranger_the_player(
    value: str, pairs: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Older Pythons' `getaddresses` reads these as one address (the newer ones refuse them or
    give two): what pbem checks beside the parser refuses them all the same."""
    monkeypatch.setattr(message, "getaddresses", lambda values: pairs)
    assert message.sender_address([value]) == (
        None,
        f"its From header is not one readable address: {value}",
    )


def test_the_registered_address_alone_is_the_player_whatever_its_case(game_dir: Path) -> None:
    result = fetch_raw(
        game_dir,
        raw_message(headers("Alice <ALICE@Example.org>"), ready_orders(game_dir, "alice")),
    )
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED
    assert result.incoming[0].sender == "ALICE@Example.org"
    assert (game_dir / "orders" / "alice.toml").read_text() == ready_orders(game_dir, "alice")


def test_another_players_address_is_not_the_player(game_dir: Path) -> None:
    result = fetch_raw(
        game_dir, raw_message(headers("bob@example.org"), ready_orders(game_dir, "alice"))
    )
    [incoming] = result.incoming
    assert incoming.verdict is mail.Verdict.REJECTED and incoming.player == "alice"
    assert incoming.reasons == (
        "bob@example.org is not the address registered for alice: orders are taken only from "
        "the player's own address",
    )
    assert not (game_dir / "orders" / "alice.toml").exists()


ORDERS = 'game = "g"\nturn = 0\nplayer = "alice"\nsecret = "x"\n\n[[place]]\nterritory = "Peru"\n'


@pytest.mark.parametrize("indent", [" ", "  ", "\t", "    "])
def test_indented_quoted_lines_are_not_orders(indent: str) -> None:
    quoted = "".join(f"{indent}> {line}\n" for line in ORDERS.replace("Peru", "Ural").splitlines())
    assert message.orders_from_body(ORDERS + "\nOn Monday, pbem wrote:\n" + quoted) == ORDERS
    assert message.orders_from_body("On Monday, pbem wrote:\n" + quoted + "\n" + ORDERS) == ORDERS
    assert message.orders_from_body("Only a quote:\n" + quoted) is None


def test_the_ready_file_indented_in_a_quote_is_not_taken(game_dir: Path) -> None:
    mine = ready_file(game_dir, "alice")
    quoted = "".join(f"  > {line}\n" for line in mine.splitlines())
    body = "Here is what you sent me:\n\n" + quoted
    result = fetch_raw(game_dir, raw_message(headers("alice@example.org"), body))
    [incoming] = result.incoming
    assert incoming.verdict is mail.Verdict.REJECTED
    assert "no orders found" in incoming.reasons[0]
    assert not (game_dir / "orders" / "alice.toml").exists()


def test_an_attribution_line_is_left_out_only_before_a_quote() -> None:
    kept = ORDERS + 'name = "x"  # note:\n'
    assert message.orders_from_body(kept) == kept
    assert message.orders_from_body(ORDERS + "Bob wrote:\n\n> old\n") == ORDERS


def test_windows_and_old_mac_line_ends_and_nonbreaking_spaces_are_read() -> None:
    assert message.orders_from_body(ORDERS.replace("\n", "\r\n")) == ORDERS
    assert message.orders_from_body(ORDERS.replace("\n", "\r")) == ORDERS
    assert message.orders_from_body(ORDERS.replace(" = ", "\xa0=\xa0")) == ORDERS


def test_a_message_without_a_date_is_rejected(game_dir: Path) -> None:
    no_date = [h for h in headers("alice@example.org") if h[0] != "Date"]
    result = fetch_raw(game_dir, raw_message(no_date, ready_orders(game_dir, "alice")))
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "no valid Date header" in result.incoming[0].reasons[0]


def test_a_message_without_a_message_id_gets_one_from_its_bytes() -> None:
    raw = raw_message([("From", "alice@example.org")], "hello")
    made = message.read_letter(raw).message_id
    assert made.startswith("<") and made.endswith("@pbem.invalid>")
    assert made == message.read_letter(raw).message_id
    assert made != message.read_letter(raw + b"x").message_id


# --- mail out ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "host", "port"),
    [
        ("mail.example.org:587", "mail.example.org", 587),
        ("mail.example.org", "mail.example.org", 25),
        ("[::1]:2525", "::1", 2525),
        (" 127.0.0.1:1 ", "127.0.0.1", 1),
        ("h:65535", "h", 65535),
    ],
)
def test_a_server_is_host_and_port(spec: str, host: str, port: int) -> None:
    server = mail.smtp_server(spec)
    assert (server.host, server.port, str(server)) == (host, port, f"{host}:{port}")
    assert server.password() is None


@pytest.mark.parametrize("spec", ["h:0", "h:65536", ":25", "h:-1", "h:x"])
def test_a_bad_server_is_refused(spec: str) -> None:
    with pytest.raises(PbemError, match="--smtp must be HOST:PORT"):
        mail.smtp_server(spec)


def test_the_password_comes_from_the_environment_before_the_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[bool] = []

    def ask() -> str:
        asked.append(True)
        return "typed"

    monkeypatch.setenv(send.PASSWORD_ENV, "from-env")
    assert mail.smtp_server("h:25", user="u", ask=ask).password() == "from-env"
    monkeypatch.delenv(send.PASSWORD_ENV)
    assert mail.smtp_server("h:25", user="u", ask=ask).password() == "typed"
    assert asked == [True]
    assert mail.smtp_server("h:25", user="u").password() is None
    assert mail.smtp_server("h:25", ask=ask).password() is None and asked == [True]


def test_no_password_for_a_login_is_a_clean_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(send.PASSWORD_ENV, raising=False)
    with pytest.raises(PbemError, match="no SMTP password for pbem: set PBEM_SMTP_PASSWORD"):
        send._connect(mail.smtp_server("127.0.0.1:1", user="pbem"))


def test_what_a_send_did_is_told_line_by_line() -> None:
    result = mail.SendResult(
        built=["r0002-turn-1-alice.eml"],
        delivered=["r0002-turn-1-alice.eml to alice@x.org"],
        failed=["r0002-turn-1-bob.eml: bob@x.org refused: 550 no"],
        pending=["r0002-turn-1-bob.eml"],
        notes=["carol has no address: report 0002-turn-1/carol not mailed"],
    )
    assert not result.ok
    assert result.lines() == [
        "wrote outbox/r0002-turn-1-alice.eml",
        "sent r0002-turn-1-alice.eml to alice@x.org",
        "failed: r0002-turn-1-bob.eml: bob@x.org refused: 550 no",
        "carol has no address: report 0002-turn-1/carol not mailed",
        "1 message waits in outbox/: r0002-turn-1-bob.eml",
    ]
    dry = mail.SendResult(built=["a.eml"], pending=["a.eml"], dry_run=True)
    assert dry.ok and dry.lines() == [
        "would write outbox/a.eml",
        "1 message would wait in outbox/: a.eml",
    ]
    assert mail.SendResult().lines() == ["nothing to send"]
    assert mail.SendResult(delivered=["x"]).lines() == ["sent x"]


def test_server_answers_read_as_text() -> None:
    import smtplib

    assert send._reply_text(550, b"no such \xc3\xa9 box") == "550 no such é box"
    assert send._reply_text(421, "bye") == "421 bye"
    assert send._reason(smtplib.SMTPResponseException(554, b"spam")) == "554 spam"
    assert send._reason(smtplib.SMTPException("odd")) == "odd"
    assert send._reason(smtplib.SMTPException()) == "SMTPException"


def test_a_report_message_needs_a_report_and_a_player(game_dir: Path) -> None:
    game = read_game(game_dir)
    assert mail.build_report(game, 0, "nobody", MODERATOR) is None
    assert mail.build_report(game, 5, "alice", MODERATOR) is None
    msg = mail.build_report(game, 0, "alice", MODERATOR, bcc="copy@example.org")
    assert msg is not None
    assert str(msg["Bcc"]) == "copy@example.org" and str(msg["Reply-To"]) == MODERATOR
    assert str(msg["Message-ID"]) == f"<pbem.{GAME}.r0000.alice@example.org>"
    assert mail.build_report(game, 0, "alice", MODERATOR)["Bcc"] is None  # type: ignore[index]


def test_a_report_subject_without_a_view() -> None:
    assert mail.report_subject(None, "alice", "after turn 6") == "report after turn 6"


def test_mail_state_files_that_are_damaged_are_named(game_dir: Path) -> None:
    hello = raw_message(headers("stranger@example.org"), "hello")
    folder = game_dir / records.MAIL
    folder.mkdir()
    (folder / SEEN).write_text("[1]")
    with pytest.raises(GameFileError, match="seen.json is damaged: not a JSON object"):
        fetch_raw(game_dir, hello)
    (folder / SEEN).write_text("{")
    with pytest.raises(GameFileError, match="seen.json is damaged"):
        fetch_raw(game_dir, hello)
    (folder / SEEN).write_text('{"messages": {}}')
    [incoming] = fetch_raw(game_dir, hello).incoming
    assert incoming.verdict is mail.Verdict.REJECTED
    with pytest.raises(PbemError, match="give a mailbox to read"):
        fetch_raw(game_dir)


# --- reading what was attached -----------------------------------------------------------------


def _part(data: bytes, charset: str | None = None) -> EmailMessage:
    part = EmailMessage()
    part.set_content(data, maintype="application", subtype="toml", filename="orders.toml")
    if charset is not None:
        part.set_param("charset", charset)
    return part


def _attached(part: EmailMessage) -> bytes:
    msg = EmailMessage()
    msg.set_content("attached")
    msg.make_mixed()
    msg.attach(part)
    return msg.as_bytes()


def test_an_order_file_may_be_64_kib_and_no_more() -> None:
    limit = mail.MAX_ORDERS_BYTES
    assert limit == 64 * 1024
    letter = message.read_letter(_attached(_part(b"#" * limit)))
    assert letter.orders is not None and len(letter.orders) == limit
    big = message.read_letter(_attached(_part(b"#" * (limit + 1))))
    assert big.orders is None
    assert big.problem == (
        f"the attachment orders.toml is {limit + 1} bytes; an order file may be at most 64 KiB"
    )


def test_an_attachment_is_read_in_its_charset_without_a_byte_order_mark() -> None:
    text = 'game = "g"  # café\n'

    def read(data: bytes, charset: str | None = None) -> str | None:
        return message.read_letter(_attached(_part(data, charset))).orders

    assert read(b"\xef\xbb\xbf" + text.encode()) == text
    assert read(b"\xef\xbb\xbf" + text.encode(), "UTF-8") == text
    assert read(text.encode("latin-1"), "latin-1") == text
    # no charset said, not UTF-8: read as windows-1252, as mail programs and browsers do
    assert read(text.encode("latin-1")) == text
    assert read(text.encode(), "klingon") == text  # an unknown label on UTF-8
    letter = message.read_letter(_attached(_part(text.encode("latin-1"), "klingon")))
    assert letter.problem == "the attachment orders.toml is not text in klingon: save it as UTF-8"
    assert read(b"\xff\xfe" + text.encode("utf-16-le")) == text  # Notepad's "Unicode"
    assert read(b"\xfe\xff" + text.encode("utf-16-be"), "us-ascii") == text


def test_a_missing_mailbox_of_either_kind_is_named(tmp_path: Path) -> None:
    with pytest.raises(PbemError, match="cannot read the mbox"):
        sources.read_entries(mail.Sources(mbox=tmp_path / "nothing"))
    with pytest.raises(PbemError, match="cannot read the Maildir"):
        sources.read_entries(mail.Sources(maildir=tmp_path / "nothing"))
    [entry] = sources.read_entries(mail.Sources(files=(tmp_path / "nothing.eml",)))
    assert entry.raw is None and entry.error is not None and "cannot read" in entry.error


def test_each_replaced_order_file_is_kept_under_the_next_number(game_dir: Path) -> None:
    mine = ready_orders(game_dir, "alice")
    versions = [mine + f"# version {n}\n" for n in range(4)]
    for n, text in enumerate(versions):
        fetch_raw(game_dir, raw_message(headers("alice@example.org", n), text))
    replaced = game_dir / "orders" / "replaced"
    assert sorted(p.name for p in replaced.iterdir()) == [
        "alice-1.toml",
        "alice-2.toml",
        "alice-3.toml",
    ]
    assert [(replaced / f"alice-{n}.toml").read_text() for n in (1, 2, 3)] == versions[:3]
    assert (game_dir / "orders" / "alice.toml").read_text() == versions[3]


def test_a_server_listens_on_port_25_unless_told_and_results_are_fixed() -> None:
    assert mail.SmtpServer("mail.example.org").port == 25
    incoming = mail.Incoming("<m@x>", "a@x.org", mail.Verdict.ACCEPTED)
    result = mail.FetchResult(GAME, (incoming,))
    for thing, field in ((incoming, "verdict"), (result, "game")):
        with pytest.raises(FrozenInstanceError):
            setattr(thing, field, None)


class FakeClient:
    """Stands in for an SMTP connection: refuses the addresses in `refuse`, records the rest."""

    def __init__(self, refuse: set[str]) -> None:
        self.refuse = refuse
        self.sent: list[list[str]] = []

    def sendmail(
        self, from_addr: str, to_addrs: list[str], msg: bytes, mail_options: list[str]
    ) -> dict[str, tuple[int, bytes]]:
        refused = {a: (450, b"mailbox busy") for a in to_addrs if a in self.refuse}
        self.sent.append([a for a in to_addrs if a not in refused])
        return refused

    def quit(self) -> None:
        pass


def test_a_refusal_is_forgotten_once_the_address_takes_the_message(
    game_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = FakeClient({"bob@example.org"})
    monkeypatch.setattr(send, "_connect", lambda server: client)
    first = mail.send_mail(game_dir, MODERATOR, mail.SmtpServer("h"))
    assert first.failed == [
        "r0000-deal-bob.eml: bob@example.org refused for now: 450 mailbox busy; it waits"
    ]
    state = MailState.peek(game_dir).sent
    refused = state["messages"]["r0000-deal-bob.eml"]["refused"]
    assert refused == {"bob@example.org": "450 mailbox busy"}
    client.refuse = set()
    second = mail.send_mail(game_dir, MODERATOR, mail.SmtpServer("h"))
    assert second.ok and second.delivered == ["r0000-deal-bob.eml to bob@example.org"]
    state = MailState.peek(game_dir).sent
    assert state["messages"]["r0000-deal-bob.eml"] == {
        "delivered": ["bob@example.org"],
        "refused": {},
        "message_id": f"<pbem.{GAME}.r0000.bob@example.org>",
    }
    assert sorted(p.name for p in (game_dir / "outbox" / "sent").iterdir()) == [
        "r0000-deal-alice.eml",
        "r0000-deal-bob.eml",
        "r0000-deal-carol.eml",
    ]


def test_a_player_without_an_address_is_named_not_mailed(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    players = [("alice", "alice@example.org"), ("bob", ""), ("carol", "carol@example.org")]
    processor.new_game(directory, players, Options(), seed=bytes(range(32)), name="g")
    result = mail.send_mail(directory, MODERATOR)
    assert result.notes == ["bob has no address: report 0000-deal/bob not mailed"]
    assert sorted(result.built) == ["r0000-deal-alice.eml", "r0000-deal-carol.eml"]
    assert "bob has no address: report 0000-deal/bob not mailed" in result.lines()


def test_a_made_up_message_id_is_the_hash_of_the_bytes() -> None:
    import hashlib

    raw = raw_message([("From", "alice@example.org")], "hello")
    expected = f"<{hashlib.sha256(raw).hexdigest()[:32]}@pbem.invalid>"
    assert message.read_letter(raw).message_id == expected


def test_an_overlong_message_id_is_recorded_under_its_first_500_characters() -> None:
    mid = "<" + "x" * 300 + "@" + "y" * 300 + ">"
    letter = message.read_letter(
        raw_message([("From", "alice@example.org"), ("Message-ID", mid)], "hi")
    )
    assert letter.message_id == mid[:500]
    assert letter.thread_id is None  # too long to be one: answers are not threaded to it


def test_the_last_20_references_and_the_first_5_replied_to_are_kept() -> None:
    ids = [f"<r{n}@t>" for n in range(30)]
    raw = raw_message(
        [
            ("From", "alice@example.org"),
            ("Message-ID", "<m@t>"),
            ("References", " ".join(ids)),
            ("In-Reply-To", " ".join(ids[:8])),
        ],
        "hi",
    )
    letter = message.read_letter(raw)
    assert letter.references == tuple(ids[10:])  # the nearest the message answered
    assert letter.in_reply_to == tuple(ids[:5])


@pytest.mark.parametrize(
    "text", ["2027-03-01T12:00Z", "2027-03-01T12:00z", "2027-03-01T13:00+01:00"]
)
def test_now_is_an_iso_time_with_an_offset(text: str) -> None:
    assert mail.parse_time(text) == datetime(2027, 3, 1, 12, 0, tzinfo=timezone.utc)


def test_what_became_of_a_message_is_told_with_its_answer() -> None:
    answered = mail.Incoming("<m@x>", "a@x.org", mail.Verdict.ACCEPTED, "alice", reply="r.eml")
    assert answered.describe() == "accepted: <m@x> from a@x.org (alice)\n  answer: outbox/r.eml"
    silent = mail.Incoming("<m@x>", "", mail.Verdict.UNANSWERED, reasons=("not answered: bot",))
    assert silent.describe() == "not answered: <m@x> from (no sender)\n  not answered: bot"
    kept = mail.Incoming("<m@x>", "b@x.org", mail.Verdict.REJECTED, kept="mail/rejected/1.eml")
    assert kept.describe() == "rejected: <m@x> from b@x.org\n  kept: mail/rejected/1.eml"


def test_an_overlong_from_is_named_cut_short() -> None:
    value = "Someone " + "x" * 300 + " <a@x.org>, b@x.org"
    address, problem = message.sender_address([value])
    assert address is None
    assert problem == f"its From header is not one readable address: {value[:200]}"


def test_a_file_that_cannot_be_read_is_rejected_under_its_name(
    game_dir: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "gone.eml"
    [incoming] = mail.fetch_orders(game_dir, mail.Sources(files=(missing,)), MODERATOR).incoming
    assert incoming.verdict is mail.Verdict.REJECTED
    assert incoming.message_id == f"file {missing}"
    assert "cannot read" in incoming.reasons[0]


def test_the_first_of_repeated_machine_headers_counts() -> None:
    assert machine.automatic({"auto-submitted": ["no", "auto-replied"]}) is None
    assert machine.automatic({"auto-submitted": ["auto-replied", "no"]}) is not None


def test_a_reused_message_id_with_other_content_is_read_once(game_dir: Path) -> None:
    first = raw_message(headers("alice@example.org"), "hello")
    other = raw_message(headers("alice@example.org"), ready_orders(game_dir, "alice"))
    fetch_raw(game_dir, first)
    [again] = fetch_raw(game_dir, other).incoming
    assert again.reply is not None and "not used" in again.reasons[0]  # its sender is told
    [third] = fetch_raw(game_dir, other).incoming
    assert third.verdict is mail.Verdict.DUPLICATE and third.reply is None and not third.reasons
    assert not (game_dir / "orders" / "alice.toml").exists()


def test_orders_of_the_same_date_replace_the_ones_accepted(game_dir: Path) -> None:
    mine = ready_orders(game_dir, "alice")
    same_time = headers("alice@example.org", 5)
    later_id = [(k, "<other@test>" if k == "Message-ID" else v) for k, v in same_time]
    now = T0 + timedelta(days=1)
    fetch_raw(game_dir, raw_message(same_time, mine + "# first\n"), now=now)
    [second] = fetch_raw(game_dir, raw_message(later_id, mine + "# second\n"), now=now).incoming
    assert second.verdict is mail.Verdict.ACCEPTED
    assert (game_dir / "orders" / "alice.toml").read_text() == mine + "# second\n"


def test_a_message_from_the_future_counts_as_read_now(game_dir: Path) -> None:
    now = T0 - timedelta(days=1)
    raw = raw_message(headers("alice@example.org"), ready_orders(game_dir, "alice"))
    [incoming] = mail.fetch_orders(
        game_dir, mail.Sources(files=(_saved(game_dir, raw),)), MODERATOR, now=now
    ).incoming
    assert incoming.verdict is mail.Verdict.ACCEPTED
    assert incoming.reasons == (
        f"the message is dated {format_datetime(T0)}, in the future: it counts as received "
        f"when pbem read it, {format_datetime(now)}",
    )
    bobs = raw_message(headers("bob@example.org", 1), ready_orders(game_dir, "bob"))
    [present] = mail.fetch_orders(
        game_dir,
        mail.Sources(files=(_saved(game_dir, bobs, "bob.eml"),)),
        MODERATOR,
        now=T0 + timedelta(days=1),
    ).incoming
    assert present.verdict is mail.Verdict.ACCEPTED and present.reasons == ()
    accepted = MailState.peek(game_dir).seen["accepted"]
    r = read_game(game_dir).state.resolution
    assert accepted[f"{r}/alice"]["dated"] == T0.isoformat()  # the date it gave is kept
    assert "dated" not in accepted[f"{r}/bob"]


def test_a_message_dated_the_moment_it_is_read_is_not_from_the_future(game_dir: Path) -> None:
    raw = raw_message(headers("alice@example.org"), ready_orders(game_dir, "alice"))
    [incoming] = fetch_raw(game_dir, raw, now=T0).incoming
    assert incoming.verdict is mail.Verdict.ACCEPTED
    assert incoming.reasons == ()


def test_an_auto_reply_is_recorded_with_who_sent_it(game_dir: Path) -> None:
    raw = raw_message(
        [*headers("bob@example.org"), ("Auto-Submitted", "auto-replied")], "I am away\n"
    )
    [incoming] = fetch_raw(game_dir, raw, now=T0).incoming
    assert incoming.verdict is mail.Verdict.UNANSWERED
    assert incoming.sender == "bob@example.org"
    assert "bob@example.org" in incoming.describe()


def _saved(directory: Path, raw: bytes, name: str = "future.eml") -> Path:
    path = directory.parent / name
    path.write_bytes(raw)
    return path


def test_an_attribution_with_toml_characters_is_left_out_before_its_quote() -> None:
    quoted = "".join(f"> {line}\n" for line in ORDERS.splitlines())
    body = ORDERS + '\nOn Monday, "Bob Smith" <bob@x.org> wrote:\n\n' + quoted
    assert message.orders_from_body(body) == ORDERS


def _nested(depth: int, inner: EmailMessage) -> EmailMessage:
    msg = inner
    for _ in range(depth):
        outer = EmailMessage()
        outer.make_mixed()
        outer.attach(msg)
        msg = outer
    return msg


def test_orders_nested_a_dozen_parts_deep_are_found() -> None:
    text = EmailMessage()
    text.set_content(ORDERS)
    found = message.read_letter(_nested(12, text).as_bytes())
    assert found.orders == ORDERS and found.problem is None
    deep = message.read_letter(_nested(message.MAX_DEPTH + 2, text).as_bytes())
    assert deep.orders is None and deep.problem is not None and "nested" in deep.problem


def test_many_different_order_files_are_refused_as_two_sets_of_orders() -> None:
    msg = EmailMessage()
    msg.set_content("see attached")
    for n in range(6):
        msg.add_attachment(b"x", maintype="application", subtype="toml", filename=f"o{n}.toml")
    msg.add_attachment(b"y", maintype="application", subtype="toml")
    letter = message.read_letter(msg.as_bytes())
    assert letter.problem == "it holds two different sets of orders"
    first, second = letter.choice().ambiguous or ()
    assert (first.name, second.name) == ("o0.toml", "")
    assert letter.orders == "x"  # the first set (which names the game it goes to)
    same = EmailMessage()
    same.set_content("see attached")
    for _ in range(2):
        same.add_attachment(b"y", maintype="application", subtype="toml")
    assert message.read_letter(same.as_bytes()).orders == "y"  # the same file twice is one


def test_a_text_file_attached_before_the_message_is_not_its_text() -> None:
    msg = EmailMessage()
    msg.make_mixed()
    note = EmailMessage()
    note.set_content("hello, no orders here")
    note["Content-Disposition"] = 'attachment; filename="notes.txt"'
    body = EmailMessage()
    body.set_content(ORDERS)
    msg.attach(note)
    msg.attach(body)
    assert message.read_letter(msg.as_bytes()).orders == ORDERS


def test_a_message_read_again_is_a_duplicate_from_its_sender(game_dir: Path) -> None:
    raw = raw_message(headers("alice@example.org"), ready_orders(game_dir, "alice"))
    fetch_raw(game_dir, raw)
    [again] = fetch_raw(game_dir, raw).incoming
    assert (again.verdict, again.sender) == (mail.Verdict.DUPLICATE, "alice@example.org")


def test_the_last_order_line_right_before_a_quote_is_kept() -> None:
    quoted = "".join(f"> {line}\n" for line in ORDERS.splitlines())
    assert message.orders_from_body(ORDERS + quoted) == ORDERS
