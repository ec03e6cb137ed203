"""A long fuzz run of `mail fetch`: hostile messages of many kinds against a real game.

Usage: python benchmarks/fuzz_mail.py [COUNT] [--seed N] [--keep DIR] [--batch N]
       (default 3000 messages; prints what it tried and what became of it)

Each message is fetched into a game as an .eml file. A run fails (exit code 1) if any message
raises an exception out of the fetch, or if pbem writes a message to any address but the
players' registered ones and the moderator's. With --keep, each failing message is saved there.
The kinds of message tried:

- bytes: random bytes;
- header: a valid order message with one header's value replaced by random bytes or text;
- flip: a valid order message with a few bytes changed at random;
- cut: a valid order message cut short at a random point;
- nested: MIME parts nested 0 to 3,000 deep;
- orders: a valid message whose orders are mangled (lines dropped, doubled, deep arrays,
  huge tables, control characters, other players' names);
- many: duplicated headers (several From, Message-ID, Date) and very long header values;
- client: a message of the mail-program corpus (tests/fixtures/mail/clients/) with its bytes
  flipped, cut, its charset or line ends changed, its quotes deepened or HTML tags strewn in.

Then (`--batch N`, default 2000) N messages of every kind, the corpus among them, are fetched
at once from one Maildir into a fresh game: each must be read exactly once (one outcome each,
none held), and a second fetch must find every one already read.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from pbem import mail
from pbem.core.state import Options
from pbem.game import processor
from pbem.mail.fetch import parse_time
from pbem.present import report
from pbem.records.opening import read_game

CLIENTS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mail" / "clients"

MODERATOR = "moderator@example.org"
PLAYERS = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")]
ALLOWED = {address for _, address in PLAYERS} | {MODERATOR}
NOW = parse_time("2027-03-02T12:00Z")
HEADERS = [
    *("From", "Message-ID", "Reply-To", "Date", "Subject", "References", "In-Reply-To"),
    *("Content-Type", "Content-Transfer-Encoding", "Content-Disposition", "MIME-Version"),
    *("Auto-Submitted", "Return-Path", "To"),
]


class Fuzzer:
    def __init__(self, rng: random.Random, directory: Path) -> None:
        self.rng = rng
        game = read_game(directory)
        self.orders = {
            r.name: report.order_skeleton(game.state, r.name, r.secret) for r in game.registrations
        }
        self.corpus = [path.read_bytes() for path in sorted(CLIENTS.glob("*.eml"))]

    def valid(self, orders: str | None = None) -> EmailMessage:
        name, address = self.rng.choice(PLAYERS)
        msg = EmailMessage()
        msg["From"] = address
        msg["To"] = MODERATOR
        msg["Subject"] = "my orders"
        msg["Date"] = format_datetime(NOW)
        msg["Message-ID"] = f"<{self.rng.getrandbits(64):x}@fuzz>"
        text = orders if orders is not None else self.orders[name]
        if self.rng.random() < 0.5:
            msg.set_content("here:\n\n" + text)
        else:
            msg.set_content("attached")
            msg.add_attachment(
                text.encode(), maintype="application", subtype="toml", filename="o.toml"
            )
        return msg

    def noise(self, size: int) -> bytes:
        if self.rng.random() < 0.5:
            return self.rng.randbytes(self.rng.randint(0, size))
        chars = [
            chr(self.rng.choice([self.rng.randint(0, 0x7F), self.rng.randint(0, 0x10FFFF)]))
            for _ in range(self.rng.randint(0, size))
        ]
        return "".join(c for c in chars if not 0xD800 <= ord(c) <= 0xDFFF).encode()

    def bytes_(self) -> bytes:
        return self.noise(4000)

    def header(self) -> bytes:
        raw = self.valid().as_bytes()
        name = self.rng.choice(HEADERS).encode()
        head, sep, body = raw.partition(b"\n\n")
        lines = [
            line for line in head.split(b"\n") if not line.lower().startswith(name.lower() + b":")
        ]
        lines.insert(self.rng.randint(0, len(lines)), name + b": " + self.noise(300))
        return b"\n".join(lines) + sep + body

    def flip(self) -> bytes:
        raw = bytearray(self.valid().as_bytes())
        for _ in range(self.rng.randint(1, 8)):
            raw[self.rng.randrange(len(raw))] = self.rng.randrange(256)
        return bytes(raw)

    def cut(self) -> bytes:
        raw = self.valid().as_bytes()
        return raw[: self.rng.randrange(len(raw))]

    def nested(self) -> bytes:
        depth = self.rng.choice([0, 1, 5, 19, 20, 21, 50, 200, 999, 1000, 3000])
        inner = b"Content-Type: text/plain\n\n" + self.orders["alice"].encode()
        for i in range(depth):
            b = f"b{i}".encode()
            inner = (
                (b"Content-Type: multipart/mixed; boundary=" + b + b"\n\n--" + b + b"\n" + inner)
                + b"\n--"
                + b
                + b"--\n"
            )
        head = f"From: alice@example.org\nDate: {format_datetime(NOW)}\nMIME-Version: 1.0\n"
        return head.encode() + inner

    def mangled_orders(self) -> bytes:
        lines = self.orders[self.rng.choice(PLAYERS)[0]].splitlines()
        for _ in range(self.rng.randint(1, 4)):
            choice = self.rng.randrange(6)
            at = self.rng.randrange(len(lines) + 1)
            if choice == 0 and lines:
                del lines[min(at, len(lines) - 1)]
            elif choice == 1:
                lines.insert(at, "x = " + "[" * 2000 + "]" * 2000)
            elif choice == 2:
                lines += ['[[attack]]\nfrom = "Peru"\nto = "Brazil"'] * self.rng.randint(1, 3000)
            elif choice == 3:
                lines.insert(at, 'territory = "\x1b[2J\u202e"')
            elif choice == 4:
                lines.insert(
                    at, 'player = "' + self.rng.choice(["bob", "zed", "", "neutral"]) + '"'
                )
            else:
                lines.insert(at, self.noise(80).decode("utf-8", "replace"))
        return self.valid("\n".join(lines) + "\n").as_bytes()

    def client(self) -> bytes:
        raw = self.rng.choice(self.corpus)
        raw = re.sub(
            rb"(?im)^Message-ID:\s*<", b"Message-ID: <%x." % self.rng.getrandbits(48), raw, count=1
        )
        head, sep, body = raw.partition(b"\n\n")
        change = self.rng.randrange(6)
        if change == 0 and body:
            out = bytearray(body)
            for _ in range(self.rng.randint(1, 12)):
                out[self.rng.randrange(len(out))] = self.rng.randrange(256)
            body = bytes(out)
        elif change == 1:
            body = body[: self.rng.randrange(len(body) + 1)]
        elif change == 2:
            charset = self.rng.choice(
                [b"x-unknown", b"utf-16", b"klingon", b"", b"utf-7", b"cp037"]
            )
            head = re.sub(rb"(?i)charset=\"?[A-Za-z0-9_-]+\"?", b"charset=" + charset, head)
            body = re.sub(rb"(?i)charset=\"?[A-Za-z0-9_-]+\"?", b"charset=" + charset, body)
        elif change == 3:
            body = body.replace(b"\n", self.rng.choice([b"\r\n", b"\r", b"\n\n", b"\n> "]))
        elif change == 4:
            body = body.replace(b"\n>", b"\n" + b">" * self.rng.randint(2, 400))
        else:
            tags = [b"<pre>", b"</pre>", b"<blockquote>", b"<br>", b"<div class=gmail_quote>",
                    b"</div>", b"<span style='white-space:pre-wrap'>", b"&nbsp;"]  # fmt: skip
            pieces = body.split(b" ")
            for _ in range(self.rng.randint(1, 50)):
                pieces.insert(self.rng.randrange(len(pieces) + 1), self.rng.choice(tags))
            body = b" ".join(pieces)
        return head + sep + body

    def many(self) -> bytes:
        raw = self.valid().as_bytes()
        extra = b"".join(
            self.rng.choice(
                [
                    b"From: mallory@evil.example\n",
                    b"Message-ID: <x@y>\n",
                    b"Date: Mon, 01 Mar 2099 12:00:00 +0000\n",
                    b"Subject: " + b"A" * self.rng.randint(1000, 100_000) + b"\n",
                ]
            )
            for _ in range(self.rng.randint(1, 20))
        )
        return extra + raw


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=20270301)
    parser.add_argument("--keep", type=Path, help="save each failing message in this folder")
    parser.add_argument("--batch", type=int, default=2000, help="messages fetched at once")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="fuzz-mail-"))
    template = work / "template"
    # the game the mail-program corpus answers (tests/test_mail_clients.py makes it so)
    processor.new_game(template, PLAYERS, Options(), seed=bytes(range(32)), name="spring-2027")
    fuzzer = Fuzzer(rng, template)
    kinds: dict[str, Callable[[], bytes]] = {
        "bytes": fuzzer.bytes_,
        "header": fuzzer.header,
        "flip": fuzzer.flip,
        "cut": fuzzer.cut,
        "nested": fuzzer.nested,
        "orders": fuzzer.mangled_orders,
        "many": fuzzer.many,
        "client": fuzzer.client,
    }
    tried: Counter[str] = Counter()
    verdicts: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    failures: list[str] = []
    game = work / "game"
    eml = work / "message.eml"
    start = time.perf_counter()
    for n in range(args.count):
        if n % 100 == 0:  # a fresh game now and then, so its records stay small
            shutil.rmtree(game, ignore_errors=True)
            shutil.copytree(template, game)
        kind = rng.choice(list(kinds))
        raw = kinds[kind]()
        eml.write_bytes(raw)
        tried[kind] += 1
        try:
            result = mail.fetch_orders(game, mail.Sources(files=(eml,)), MODERATOR, NOW)
        except Exception:  # noqa: BLE001 (a fuzz run reports every failure)
            failures.append(f"{kind} #{n}: {traceback.format_exc(limit=3)}")
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"{n:06d}-{kind}.eml").write_bytes(raw)
            continue
        for incoming in result.incoming:
            verdicts[(kind, incoming.verdict.value)] += 1
            if incoming.reasons:
                reasons[incoming.reasons[0][:70]] += 1
        outbox = game / "outbox"
        for path in outbox.glob("*.eml") if outbox.is_dir() else []:
            to = mail.read_letter(path.read_bytes())
            if to.sender != MODERATOR:
                failures.append(f"{kind} #{n}: {path.name} is not from the moderator")
            for line in path.read_bytes().split(b"\n"):
                if line.startswith(b"To: ") and line[4:].strip().decode() not in ALLOWED:
                    failures.append(f"{kind} #{n}: {path.name} is addressed to {line[4:]!r}")
            path.unlink()
    seconds = time.perf_counter() - start

    python = sys.version.split()[0]
    print(f"{args.count} messages fetched in {seconds:.1f} s (seed {args.seed}, Python {python})")
    print("\nkind      tried  what became of them")
    for kind in kinds:
        outcome = ", ".join(f"{c} {v}" for (k, v), c in sorted(verdicts.items()) if k == kind)
        print(f"{kind:<9} {tried[kind]:>5}  {outcome}")
    print("\nmost frequent reasons:")
    for reason, count in reasons.most_common(12):
        print(f"  {count:>5}  {mail.printable(reason)}")
    if args.batch:
        failures += batch(work, template, fuzzer, kinds, args.batch)
    shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"\n{len(failures)} FAILURES:")
        for failure in failures[:20]:
            print(failure)
        return 1
    print("\nno exception, no message to anyone but the players and the moderator")
    return 0


def batch(
    work: Path, template: Path, fuzzer: Fuzzer, kinds: dict[str, Callable[[], bytes]], n: int
) -> list[str]:
    """Fetch n messages at once from one Maildir: each read once, and once only."""
    game = work / "batch"
    shutil.copytree(template, game)
    box = work / "Maildir"
    for sub in ("new", "cur", "tmp"):
        (box / sub).mkdir(parents=True)
    names = list(kinds)
    for i in range(n):
        raw = fuzzer.client() if i % 3 else kinds[names[i % len(names)]]()
        (box / "new" / f"{1_800_000_000 + i}.M{i}P1.fuzz").write_bytes(raw)
    sources = mail.Sources(maildir=box)
    failures: list[str] = []
    start = time.perf_counter()
    try:
        first = mail.fetch_orders(game, sources, MODERATOR, NOW)
        again = mail.fetch_orders(game, sources, MODERATOR, NOW)
    except Exception:  # noqa: BLE001 (a fuzz run reports every failure)
        return [f"batch of {n}: {traceback.format_exc(limit=3)}"]
    seconds = time.perf_counter() - start
    verdicts = Counter(i.verdict.value for i in first.incoming)
    print(f"\nbatch: {n} messages fetched at once in {seconds:.1f} s (twice): {dict(verdicts)}")
    if len(first.incoming) != n or verdicts.get("held"):
        failures.append(f"batch: {len(first.incoming)} outcomes for {n} messages, {verdicts}")
    unread = [i for i in again.incoming if i.verdict is not mail.Verdict.DUPLICATE]
    if unread or any(i.reply for i in again.incoming):
        failures.append(f"batch: {len(unread)} messages read a second time")
    else:
        print("batch: every message read once; the second fetch found every one already read")
    return failures


if __name__ == "__main__":
    sys.exit(main())
