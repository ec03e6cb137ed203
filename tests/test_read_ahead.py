"""Reading ahead (pbem.mail.ahead): the bodies of a big fetch's messages parsed in a second
process change nothing of what the fetch does, and a helper that dies, stalls, answers nonsense
or outlives its fetch never costs a message."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pbem.core.state import Options
from pbem.game import processor
from pbem.mail import ahead
from pbem.mail.fetch import fetch_entries
from pbem.mail.message import Letter, read_body, read_head
from pbem.mail.sources import Entry

FIXTURES = Path(__file__).parent / "fixtures" / "mail"
GAME = "spring-2027"
PLAYERS = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")]
NOW = datetime(2027, 3, 2, 12, 0, tzinfo=timezone.utc)


def corpus() -> list[Entry]:
    """Real clients' messages and machines' (tests/fixtures/mail), a message nested too deep,
    one of too many parts, one cut as too large, and an entry that could not be read."""
    entries = [
        Entry(path.name, raw=path.read_bytes())
        for folder in ("clients", "machine")
        for path in sorted((FIXTURES / folder).glob("*.eml"))
    ]
    deep = b"From: alice@example.org\r\nSubject: deep\r\n" + b"".join(
        b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (n, n)
        for n in range(200)
    )
    parts = b'From: bob@example.org\r\nContent-Type: multipart/mixed; boundary="x"\r\n\r\n' + (
        b"--x\r\n\r\nhi\r\n" * 3000
    )
    entries += [
        Entry("deep", raw=deep),
        Entry("parts", raw=parts),
        Entry("cut", raw=b"From: carol@example.org\r\nSubject: big\r\n\r\n...", cut=True),
        Entry("broken", error="cannot be read", key="broken"),
    ]
    return entries


def slowly(entries: list[Entry], after: int = ahead.START + 1) -> Iterator[Entry]:
    """The entries, with a pause after the first few: long enough for the helper to be ready
    (a real fetch reads on meanwhile; here there would be nothing left to read ahead)."""
    for n, entry in enumerate(entries):
        if n == after:
            time.sleep(2.0)
        yield entry


def alone(entry: Entry, wanted: bool = True) -> Letter | None:
    """What the fetch reads of an entry by itself."""
    if entry.raw is None:
        return None
    head = read_head(entry.raw, entry.cut)
    return read_body(head, entry.raw) if wanted and head.limit is None else head


def test_the_helper_reads_every_message_as_the_fetch_would() -> None:
    entries = corpus()
    seen: list[tuple[Entry, Letter | None]] = []
    with ahead.reading_ahead(slowly(entries), lambda head: True) as letters:
        seen.extend(letters)
    assert [e for e, _ in seen] == entries  # in the mailbox's order, each once
    by_helper = [letter for _, letter in seen if letter is not None and letter.whole]
    assert len(by_helper) > len(entries) // 2  # the helper did read them
    for entry, letter in seen:
        if letter is not None and letter.whole:
            assert letter == alone(entry)
        else:
            assert letter == alone(entry, wanted=False)


def test_a_message_read_before_is_never_parsed_by_the_helper() -> None:
    entries = corpus()
    with ahead.reading_ahead(slowly(entries), lambda head: False) as letters:
        seen = list(letters)
    assert not [letter for _, letter in seen if letter is not None and letter.whole]
    assert [letter for _, letter in seen] == [alone(e, wanted=False) for e in entries]


def test_a_few_messages_start_no_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(ahead._Helper, "_start", lambda self: started.append(self))
    entries = corpus()[: ahead.START]
    with ahead.reading_ahead(entries, lambda head: True) as letters:
        assert [e for e, _ in letters] == entries
    assert started == []


def test_an_imap_message_is_handled_before_the_next_is_downloaded() -> None:
    log: list[str] = []
    raws = [e for e in corpus() if e.raw is not None][:30]

    def source() -> Iterator[Entry]:
        for n, entry in enumerate(raws):
            if n == ahead.START + 1:
                time.sleep(2.0)
            log.append(f"download {n}")
            yield Entry(f"imap {n}", raw=entry.raw, uid=str(n + 1))

    with ahead.reading_ahead(source(), lambda head: True) as letters:
        for entry, letter in letters:
            assert letter == alone(Entry("", raw=entry.raw), wanted=False)
            log.append(f"handled {entry.uid and int(entry.uid) - 1}")
    assert log == [f"{what} {n}" for n in range(len(raws)) for what in ("download", "handled")]


def test_the_helper_refuses_to_unpickle_anything_but_letters() -> None:
    import io

    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        ahead._Letters(io.BytesIO(pickle.dumps(os.system))).load()


# -- a whole fetch, with and without the helper ------------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("ahead") / GAME
    processor.new_game(directory, PLAYERS, Options(), seed=bytes(range(32)), name=GAME)
    return directory


def folder(directory: Path) -> dict[str, bytes]:
    """Every file of a game directory, the mail ledger as its rows."""
    import sqlite3

    out: dict[str, bytes] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.name.startswith("ledger.sqlite") or path.name == ".lock":
            continue
        out[str(path.relative_to(directory))] = path.read_bytes()
    with sqlite3.connect(directory / "mail" / "ledger.sqlite") as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        for table in tables:
            rows = sorted(map(repr, db.execute(f"select * from {table}")))  # noqa: S608
            out[f"ledger:{table}"] = "\n".join(rows).encode()
    return out


def fetched(made: Path, where: Path, entries: Iterator[Entry] | list[Entry]) -> dict[str, bytes]:
    game = Path(shutil.copytree(made, where / GAME))
    result = fetch_entries(game, entries, "moderator@example.org", NOW)
    assert len(result.incoming) == len(corpus())
    return folder(game)


@pytest.fixture
def without(made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    with monkeypatch.context() as m:
        m.setattr(ahead, "ENABLED", False)
        return fetched(made, tmp_path / "without", corpus())


def test_a_fetch_with_the_helper_writes_what_it_writes_without(
    made: Path, tmp_path: Path, without: dict[str, bytes]
) -> None:
    used: list[int] = []
    real = ahead._Ahead.take_answers

    def counting(self: ahead._Ahead, timeout: float) -> bool:
        took = real(self, timeout)
        used.append(took)
        return took

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ahead._Ahead, "take_answers", counting)
        got = fetched(made, tmp_path / "with", slowly(corpus()))
    assert any(used)  # the helper answered
    assert got == without


@pytest.mark.parametrize("trouble", ["killed", "stalled", "nonsense"])
def test_a_helper_in_trouble_costs_no_message(
    trouble: str, made: Path, tmp_path: Path, without: dict[str, bytes]
) -> None:
    real_take = ahead._Ahead.take_answers
    real_start = ahead._Helper._start
    troubled: list[int] = []

    def take(self: ahead._Ahead, timeout: float) -> bool:
        took = real_take(self, timeout)
        process = self.helper.process
        if took and process is not None and not troubled and trouble != "nonsense":
            troubled.append(process.pid)
            os.kill(process.pid, signal.SIGKILL if trouble == "killed" else signal.SIGSTOP)
        return took

    def start(self: ahead._Helper) -> None:
        if trouble != "nonsense":
            real_start(self)
            return
        script = (
            "import struct,sys; o=sys.stdout.buffer; r=b'ready'; "
            "o.write(struct.pack('>Q',len(r))+r+struct.pack('>Q',5)+b'junk!'); o.flush(); "
            "sys.stdin.buffer.read()"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.process.stdin is not None
        os.set_blocking(self.process.stdin.fileno(), False)
        troubled.append(self.process.pid)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ahead._Ahead, "take_answers", take)
        m.setattr(ahead._Helper, "_start", start)
        m.setattr(ahead, "WAIT", 0.5)
        began = time.monotonic()
        got = fetched(made, tmp_path / trouble, slowly(corpus()))
    assert troubled, "the helper was never in trouble"
    assert got == without
    assert time.monotonic() - began < 20
    with pytest.raises(ProcessLookupError):  # stopped, and waited for
        os.kill(troubled[0], 0)


def test_the_helper_ends_with_a_fetch_that_is_killed(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from pbem.mail import ahead
        from pbem.mail.sources import Entry
        raw = Path({str(FIXTURES / "clients")!r}).glob("*.eml").__next__().read_bytes()
        def entries():
            for n in range(100000):
                time.sleep(0.01)
                yield Entry(str(n), raw=raw)
        with ahead.reading_ahead(entries(), lambda head: True) as letters:
            for entry, letter in letters:
                if letter is not None and letter.whole:
                    print("helper", flush=True)
        """
    )
    fetch = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    assert fetch.stdout is not None
    assert fetch.stdout.readline().strip() == "helper"
    children = Path(f"/proc/{fetch.pid}/task/{fetch.pid}/children").read_text().split()
    assert len(children) == 1
    fetch.kill()
    fetch.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{children[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    status = Path(f"/proc/{children[0]}/stat")
    assert not status.exists() or status.read_text().split()[2] == "Z", "the helper lives on"


def test_a_root_fetch_whose_helper_is_killed_writes_what_it_writes_without(
    made: Path, tmp_path: Path
) -> None:
    from pbem.mail.inbox import fetch
    from pbem.mail.mailboxes import Mailbox
    from pbem.mail.sources import Sources

    box = tmp_path / "Maildir"
    for sub in ("new", "cur", "tmp"):
        (box / sub).mkdir(parents=True)
    for n, entry in enumerate(e for e in corpus() if e.raw is not None and not e.cut):
        (box / "new" / f"{1_800_000_000 + n}.M{n}P1.test").write_bytes(entry.raw or b"")
    real_start = ahead._Helper._start
    killed: list[int] = []

    def start(self: ahead._Helper) -> None:  # ready before the first message is handed on
        real_start(self)
        assert self.process is not None
        self.ready = self._frame(20.0) == b"ready"

    def take(self: ahead._Ahead, timeout: float) -> bool:
        took = real_take(self, timeout)
        if took and self.helper.process is not None and len(killed) < 1 and self.count > 40:
            killed.append(self.helper.process.pid)
            os.kill(self.helper.process.pid, signal.SIGKILL)
        return took

    real_take = ahead._Ahead.take_answers
    results = {}
    for how in ("without", "killed"):
        root = tmp_path / how
        shutil.copytree(made, root / GAME)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(ahead, "ENABLED", how != "without")
            m.setattr(ahead._Helper, "_start", start)
            m.setattr(ahead._Ahead, "take_answers", take)
            fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
        results[how] = folder(root / GAME)
    assert killed
    assert results["killed"] == results["without"]
    assert any(name.startswith("orders/") for name in results["without"])


def test_the_limits_are_the_ones_the_documentation_gives() -> None:
    text = " ".join((Path(__file__).parent.parent / "docs" / "mail.md").read_text().split())
    assert "A fetch that has more than 8 messages to read" in text
    assert "at most 32 and 16 MiB at a time" in text
    assert "stalls for 30 seconds" in text
    assert (ahead.START, ahead.AHEAD, ahead.AHEAD_BYTES, ahead.WAIT) == (8, 32, 16 << 20, 30.0)


@pytest.mark.parametrize(("count", "starts"), [(8, False), (9, True)])
def test_the_helper_starts_past_eight_messages(
    count: int, starts: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[object] = []
    monkeypatch.setattr(ahead._Helper, "_start", lambda self: started.append(self))
    monkeypatch.setattr(ahead, "cores", lambda: 2)
    raw = next(e for e in corpus() if e.raw is not None).raw
    with ahead.reading_ahead([Entry(str(n), raw=raw) for n in range(count)], bool) as letters:
        assert len(list(letters)) == count
    assert bool(started) is starts


def test_one_core_starts_no_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    monkeypatch.setattr(ahead._Helper, "_start", lambda self: started.append(self))
    monkeypatch.setattr(ahead, "cores", lambda: 1)
    raw = next(e for e in corpus() if e.raw is not None).raw
    with ahead.reading_ahead([Entry(str(n), raw=raw) for n in range(40)], bool) as letters:
        assert len(list(letters)) == 40
    assert started == []


def test_at_most_16_mib_and_32_messages_are_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper that takes every message and answers none: the window then fills to its
    bound, whatever the machine's speed, and the fetch reads everything itself."""
    real = ahead._Helper.send
    sent: list[int] = []

    def send(self: ahead._Helper, *request: object) -> bool:
        if request[0] == "read":
            sent.append(len(request[2]))  # type: ignore[arg-type]
        return real(self, *request)

    monkeypatch.setattr(ahead._Helper, "send", send)
    silent = READY + "i = sys.stdin.buffer\nwhile i.read(65536): pass"
    monkeypatch.setattr(ahead._Helper, "_start", fake_helper(silent))
    monkeypatch.setattr(ahead, "WAIT", 0.5)
    small = next(e for e in corpus() if e.raw is not None).raw or b""
    big = small + b"\n" + b"x" * (3 << 20)  # ~3 MiB each
    for raw, most in ((big, 4), (small, 32)):
        sent.clear()
        entries = [Entry(str(n), raw=raw) for n in range(60)]
        with ahead.reading_ahead(slowly(entries), lambda head: True) as letters:
            got = [entry for entry, _ in letters]
        assert got == entries
        assert len(sent) == most  # 32 messages; 4 of 3 MiB (past 12 MiB, 4 more may not fit)
        assert sum(sent) <= ahead.AHEAD_BYTES


def fake_helper(script: str) -> object:
    """A `_Helper._start` that starts `script` (Python) instead of the helper."""

    def start(self: ahead._Helper) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.process.stdin is not None
        os.set_blocking(self.process.stdin.fileno(), False)
        started.append(self.process)
        helpers.append(self)

    started: list[subprocess.Popen[bytes]] = []
    helpers: list[ahead._Helper] = []
    start.started = started  # type: ignore[attr-defined]
    start.helpers = helpers  # type: ignore[attr-defined]
    return start


READY = (
    "import struct,sys,os,time; o=sys.stdout.buffer; "
    "o.write(struct.pack('>Q',5)+b'ready'); o.flush(); "
)


@pytest.mark.parametrize(
    "script",
    [
        "import sys; sys.exit(3)",  # dies before it is ready
        READY + "os.close(0); time.sleep(30)",  # stops reading its input
        READY + "time.sleep(30)",  # reads nothing, answers nothing: its input fills up
    ],
    ids=["dies-at-once", "closes-its-input", "never-reads"],
)
def test_a_helper_that_will_not_work_is_stopped_and_never_started_again(
    script: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = fake_helper(script)
    monkeypatch.setattr(ahead._Helper, "_start", start)
    monkeypatch.setattr(ahead, "WAIT", 0.5)
    big = (next(e for e in corpus() if e.raw is not None).raw or b"") + b"\n" + b"x" * 300_000
    entries = [Entry(str(n), raw=big) for n in range(40)]
    began = time.monotonic()
    with ahead.reading_ahead(slowly(entries), lambda head: True) as letters:
        got = list(letters)
        # stopped as soon as it failed, not only when the fetch ends
        assert [h.failed and h.process is None for h in start.helpers] == [True]  # type: ignore[attr-defined]
    assert time.monotonic() - began < 15
    assert [letter for _, letter in got] == [alone(e, wanted=False) for e in entries]
    started = start.started  # type: ignore[attr-defined]
    assert len(started) == 1  # a helper that failed is not started again
    assert started[0].poll() is not None  # and it was stopped and waited for


def test_the_helper_ends_with_its_block(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ahead._Helper._start
    started: list[subprocess.Popen[bytes]] = []

    def start(self: ahead._Helper) -> None:
        real(self)
        assert self.process is not None
        started.append(self.process)

    monkeypatch.setattr(ahead._Helper, "_start", start)
    entries = corpus()
    with ahead.reading_ahead(slowly(entries), lambda head: True) as letters:
        list(letters)
        assert started and started[0].poll() is None  # it runs while the fetch reads
    assert started[0].poll() == 0  # ended, and waited for, with the block
