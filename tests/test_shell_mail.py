"""Mail in: who may send orders for a player, and what of a message's text is read as orders."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest

from pbem.core.state import Options
from pbem.game import processor
from pbem.game.store import read_game
from pbem.mail import mailer as mail
from pbem.present import report

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
    game = read_game(directory)
    reg = game.registration(player)
    assert reg is not None
    return report.order_skeleton(game.state, player, reg.secret)


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


def fetch_raw(directory: Path, *messages: bytes) -> mail.FetchResult:
    files = []
    for i, data in enumerate(messages):
        path = directory.parent / f"in-{i}.eml"
        path.write_bytes(data)
        files.append(path)
    return mail.fetch_orders(directory, mail.Sources(files=tuple(files)), MODERATOR)


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
    assert incoming.player == "alice"
    assert "is not the address registered for alice" in incoming.reasons[0]
    assert incoming.note is not None and (game_dir / "outbox" / incoming.note).exists()
    assert not (game_dir / "orders" / "alice.toml").exists()


def test_two_from_headers_are_not_the_player(game_dir: Path) -> None:
    two = [("From", "mallory@evil.example"), *headers("alice@example.org")]
    result = fetch_raw(game_dir, raw_message(two, ready_orders(game_dir, "alice")))
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert not (game_dir / "orders" / "alice.toml").exists()


def test_the_registered_address_alone_is_the_player_whatever_its_case(game_dir: Path) -> None:
    result = fetch_raw(
        game_dir,
        raw_message(headers("Alice <ALICE@Example.org>"), ready_orders(game_dir, "alice")),
    )
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED
    assert (game_dir / "orders" / "alice.toml").read_text() == ready_orders(game_dir, "alice")


def test_another_players_address_is_not_the_player(game_dir: Path) -> None:
    result = fetch_raw(
        game_dir, raw_message(headers("bob@example.org"), ready_orders(game_dir, "alice"))
    )
    [incoming] = result.incoming
    assert incoming.verdict is mail.Verdict.REJECTED and incoming.note is not None
    body = mail.parse_message((game_dir / "outbox" / incoming.note).read_bytes()).get_body()
    assert body is not None
    note = " ".join(body.get_content().split())
    assert "A message from bob@example.org carried orders for alice" in note
    assert "registered address is alice@example.org" in note


ORDERS = 'game = "g"\nturn = 0\nplayer = "alice"\nsecret = "x"\n\n[[place]]\nterritory = "Peru"\n'


@pytest.mark.parametrize("indent", [" ", "  ", "\t", "    "])
def test_indented_quoted_lines_are_not_orders(indent: str) -> None:
    quoted = "".join(f"{indent}> {line}\n" for line in ORDERS.replace("Peru", "Ural").splitlines())
    assert mail.orders_from_body(ORDERS + "\nOn Monday, pbem wrote:\n" + quoted) == ORDERS
    assert mail.orders_from_body("On Monday, pbem wrote:\n" + quoted + "\n" + ORDERS) == ORDERS
    assert mail.orders_from_body("Only a quote:\n" + quoted) is None


def test_indented_quoted_orders_in_a_message_are_not_taken(game_dir: Path) -> None:
    mine = ready_orders(game_dir, "alice")
    quoted = "".join(f"  > {line}\n" for line in mine.splitlines())
    body = "Here is what you sent me:\n\n" + quoted
    result = fetch_raw(game_dir, raw_message(headers("alice@example.org"), body))
    [incoming] = result.incoming
    assert incoming.verdict is mail.Verdict.REJECTED
    assert "no orders found" in incoming.reasons[0]
    assert not (game_dir / "orders" / "alice.toml").exists()


def test_an_attribution_line_is_left_out_only_before_a_quote() -> None:
    kept = ORDERS + 'name = "x"  # note:\n'
    assert mail.orders_from_body(kept) == kept
    assert mail.orders_from_body(ORDERS + "Bob wrote:\n\n> old\n") == ORDERS


def test_windows_and_old_mac_line_ends_and_nonbreaking_spaces_are_read() -> None:
    assert mail.orders_from_body(ORDERS.replace("\n", "\r\n")) == ORDERS
    assert mail.orders_from_body(ORDERS.replace("\n", "\r")) == ORDERS
    assert mail.orders_from_body(ORDERS.replace(" = ", "\xa0=\xa0")) == ORDERS


def test_a_message_without_a_date_is_rejected(game_dir: Path) -> None:
    no_date = [h for h in headers("alice@example.org") if h[0] != "Date"]
    result = fetch_raw(game_dir, raw_message(no_date, ready_orders(game_dir, "alice")))
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "no valid Date header" in result.incoming[0].reasons[0]


def test_a_reply_goes_to_the_reply_to_address(game_dir: Path) -> None:
    with_reply = [*headers("alice@example.org"), ("Reply-To", "alice.home@example.net")]
    result = fetch_raw(game_dir, raw_message(with_reply, ready_orders(game_dir, "alice")))
    reply = result.incoming[0].reply
    assert reply is not None
    sent = mail.parse_message((game_dir / "outbox" / reply).read_bytes())
    assert str(sent["To"]) == "alice.home@example.net"
    assert str(sent["In-Reply-To"]) == "<m0@test>"
    assert sent[mail.LOOP_HEADER] == GAME


def test_a_message_without_a_message_id_gets_one_from_its_bytes() -> None:
    msg = EmailMessage()
    msg["From"] = "alice@example.org"
    msg.set_content("hello")
    raw = msg.as_bytes()
    made = mail.message_id(msg, raw)
    assert made.startswith("<") and made.endswith("@pbem.invalid>")
    assert made == mail.message_id(msg, raw) != mail.message_id(msg, raw + b"x")
