"""The mail-client corpus: replies, forwards and new messages as real mail programs write them
(tests/fixtures/mail/clients/, written by tests/make_mail_corpus.py), each with the outcome its
player expects from a fetch: accepted (with the orders the player wrote), rejected or a
question (with the phrases the answer must hold), a resend of the report, or no answer at all
for machine mail."""

from __future__ import annotations

import shutil
import sys
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
from conftest import flat

from pbem.core.state import Options
from pbem.game import processor
from pbem.mail.fetch import fetch_entries
from pbem.mail.outcomes import Verdict
from pbem.mail.sources import Entry
from pbem.records.opening import read_game

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CLIENTS = Path(__file__).parent / "fixtures" / "mail" / "clients"
CASES: list[dict[str, Any]] = tomllib.loads((CLIENTS / "cases.toml").read_text("utf-8"))["case"]
GAME = "spring-2027"
MODERATOR = "moderator@example.org"
PLAYERS = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")]
NOW = datetime(2027, 3, 2, 12, 0, tzinfo=timezone.utc)
EXPECTS = {"accepted", "rejected", "unanswered", "question", "resend"}
REQUIRED_CLIENTS = [
    "Gmail (web)",
    "Gmail (Android)",
    "Outlook 2016 (English)",
    "Outlook 2016 (German)",
    "Outlook 2016 (French)",
    "Outlook on the web",
    "Outlook for iOS",
    "Apple Mail",
    "iOS Mail",
    "iCloud Mail",
    "Thunderbird",
    "K-9 Mail",
    "FairEmail",
    "mutt",
    "Proton Mail",
    "Yahoo Mail",
    "Samsung Email",
    "The Bat!",
    "Alpine",
]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The game the corpus answers, made once (as test_mail.py makes it)."""
    directory = tmp_path_factory.mktemp("clients") / GAME
    processor.new_game(directory, PLAYERS, Options(), seed=bytes(range(32)), name=GAME)
    return directory


@pytest.fixture
def game(made: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(made, tmp_path / GAME))


def outbox(directory: Path) -> list[tuple[str, EmailMessage]]:
    folder = directory / "outbox"
    if not folder.is_dir():
        return []
    parser = BytesParser(policy=policy.default)
    out = []
    for path in sorted(folder.glob("*.eml")):
        msg = parser.parsebytes(path.read_bytes())
        assert isinstance(msg, EmailMessage)
        out.append((path.name, msg))
    return out


def to_player(msg: EmailMessage, player: str) -> bool:
    return str(msg.get("To", "")).strip().lower().endswith(f"{player}@example.org".lower())


def answer_text(msg: EmailMessage) -> str:
    body = msg.get_body(preferencelist=("plain",))
    text = body.get_content() if body is not None else ""
    return f"{msg.get('Subject', '')}\n{text}"


def template(directory: Path, player: str) -> dict[str, Any]:
    ready = directory / "reports" / "0000-deal" / f"{player}.orders.toml"
    return tomllib.loads(ready.read_text("utf-8"))


def the_answer(directory: Path, player: str) -> tuple[str, EmailMessage]:
    answers = [(n, m) for n, m in outbox(directory) if n.startswith("reply-")]
    mine = [(n, m) for n, m in answers if to_player(m, player)]
    assert len(mine) == 1, f"expected one answer to {player}, outbox has {[n for n, _ in answers]}"
    return mine[0]


def check_phrases(case: dict[str, Any], text: str) -> None:
    missing = [p for p in case.get("answer", []) if flat(p.lower()) not in flat(text.lower())]
    assert not missing, f"the answer lacks {missing}:\n{text}"


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_client_message(case: dict[str, Any], game: Path) -> None:
    raw = (CLIENTS / case["file"]).read_bytes()
    player = case["player"]
    result = fetch_entries(game, [Entry("corpus", raw=raw)], MODERATOR, NOW)
    assert len(result.incoming) == 1
    got = result.incoming[0]
    expect = case["expect"]
    described = got.describe()
    stored = game / "orders" / f"{player}.toml"

    if expect == "accepted":
        assert got.verdict is Verdict.ACCEPTED, described
        data = tomllib.loads(stored.read_text("utf-8"))
        assert data == case["orders"], f"stored orders differ:\n{stored.read_text('utf-8')}"
        if not case.get("untouched", False):
            assert data != template(game, player), "the untouched ready file was played"
        _, msg = the_answer(game, player)
        assert "accepted" in str(msg["Subject"]).lower(), msg["Subject"]
        check_phrases(case, answer_text(msg))
    elif expect in ("rejected", "question"):
        assert got.verdict is Verdict.REJECTED, described
        assert not stored.exists(), "orders were stored"
        _, msg = the_answer(game, player)
        check_phrases(case, answer_text(msg))
        if expect == "question":
            assert "passed to the moderator" in answer_text(msg).lower()
    elif expect == "unanswered":
        assert got.verdict is Verdict.UNANSWERED, described
        assert got.verdict.value == "not answered"
        replies = [n for n, _ in outbox(game) if n.startswith("reply-")]
        assert not replies, f"machine mail was answered: {replies}"
        assert not stored.exists()
    elif expect == "resend":
        assert not stored.exists(), "orders were stored"
        ready = (game / "reports" / "0000-deal" / f"{player}.orders.toml").read_text("utf-8")
        resent = [
            m
            for _, m in outbox(game)
            if to_player(m, player)
            and GAME in str(m.get("Subject", ""))
            and "resent" in str(m.get("Subject", "")).lower()
        ]
        assert resent, f"no report resent to {player}: {[n for n, _ in outbox(game)]}"
        files = {p.get_filename(): p.get_content() for p in resent[0].iter_attachments()}
        assert files.get(f"{player}.orders.toml") == ready, "the resent report lacks its ready file"
    else:  # pragma: no cover
        pytest.fail(f"unknown expect {expect!r}")


def test_corpus_is_complete(made: Path) -> None:
    """At least 80 cases, every message in the folder listed once, every client named, and
    the orders of every accepted case signed with its player's secret."""
    assert len(CASES) >= 80
    files = [c["file"] for c in CASES]
    assert len(files) == len(set(files)), "a message listed twice"
    on_disk = sorted(p.name for p in CLIENTS.glob("*.eml"))
    assert sorted(files) == on_disk
    clients = {c["client"] for c in CASES}
    assert not [c for c in REQUIRED_CLIENTS if c not in clients]
    game = read_game(made)
    for c in CASES:
        assert c["expect"] in EXPECTS, c["file"]
        assert c["what"] and c["client"]
        assert isinstance(c.get("answer", []), list)
        reg = game.registration(c["player"])
        assert reg is not None, c["file"]
        if c["expect"] == "accepted":
            assert c["orders"]["player"] == c["player"], c["file"]
            assert c["orders"]["secret"] == reg.secret, c["file"]
        else:
            assert "orders" not in c, c["file"]


def test_messages_are_dated_before_the_fetch() -> None:
    from email.utils import parsedate_to_datetime

    parser = BytesParser(policy=policy.compat32)
    for c in CASES:
        msg = parser.parsebytes((CLIENTS / c["file"]).read_bytes(), headersonly=True)
        when = parsedate_to_datetime(str(msg["Date"]))
        assert when < NOW, c["file"]
