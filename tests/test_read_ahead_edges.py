"""The reading ahead at its edges: the helper found from any checkout of pbem, nothing it sends
run as code, a deeply nested message, a fetch holding many files, the window's bounds, copies
of one message, an order file with a TOML time."""

from __future__ import annotations

import bisect
import io
import os
import pickle
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from test_read_ahead import folder, slowly

from pbem.core.state import Options
from pbem.game import processor
from pbem.mail import ahead
from pbem.mail.fetch import fetch_entries
from pbem.mail.found import Found, Where
from pbem.mail.message import read_body, read_head
from pbem.mail.sources import Entry

FIXTURES = Path(__file__).parent / "fixtures" / "mail"
GAME = "spring-2027"
PLAYERS = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")]
NOW = datetime(2027, 3, 2, 12, 0, tzinfo=timezone.utc)


def fillers(n: int = 20) -> list[Entry]:
    paths = sorted((FIXTURES / "clients").glob("*.eml"))[:n]
    return [Entry(p.name, raw=p.read_bytes()) for p in paths]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("ahead") / GAME
    processor.new_game(directory, PLAYERS, Options(), seed=bytes(range(32)), name=GAME)
    return directory


ROOT = str(Path(ahead.__file__).resolve().parent.parent.parent)


@pytest.fixture
def working_helper() -> None:
    """The helper as a fetch starts it (a check that it does start: the first tests)."""


# -- 0. the helper is started with the folder that holds pbem as its path -------------------------


def test_the_helper_starts_from_a_checkout_of_pbem() -> None:
    helper = ahead._Helper()
    helper._start()
    try:
        assert helper._frame(20.0) == b"ready", "the helper never said it was ready"
    finally:
        helper.stop()


def test_the_helpers_path_is_the_folder_that_holds_pbem() -> None:
    assert (Path(ahead._PACKAGE) / "pbem" / "__init__.py").exists(), ahead._PACKAGE


# -- 1. the fetch unpickles a letter's classes only, never a callable -----------------------------


def _sbu(text: str) -> bytes:
    data = text.encode()
    return b"\x8c" + bytes([len(data)]) + data


def _call(module: str, name: str, *args: str) -> bytes:
    """A protocol-4 pickle that calls module.name(*args) (STACK_GLOBAL, then REDUCE)."""
    out = b"\x80\x04" + _sbu(module) + _sbu(name) + b"\x93" + b"("
    out += b"".join(_sbu(a) for a in args)
    return out + b"tR."


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("pbem.mail.ahead", "os.mkdir"),  # a dotted name: any module a pbem module imported
        ("pbem.records.disk", "os.mkdir"),
    ],
)
def test_nothing_the_helper_sends_runs_code_in_the_fetch(
    module: str, name: str, tmp_path: Path
) -> None:
    target = tmp_path / "made-by-the-helper"
    data = _call(module, name, str(target))
    with pytest.raises(Exception):  # noqa: B017,PT011
        answer = ahead._Letters(io.BytesIO(data)).load()
        raise ValueError(f"loaded: {answer!r}")
    assert not target.exists(), "the helper's answer ran os.mkdir in the fetch"


def test_the_helper_cannot_call_pbem_functions_in_the_fetch(tmp_path: Path) -> None:
    target = tmp_path / "written-by-the-helper"
    # atomic_write(Path(target), "owned"): no dotted name, only pbem's own names
    data = b"\x80\x04" + _sbu("pbem.records.disk") + _sbu("atomic_write") + b"\x93"
    data += b"(" + _call("pbem.mail.ahead", "Path", str(target))[2:-1] + _sbu("owned") + b"tR."
    with pytest.raises(Exception):  # noqa: B017,PT011
        ahead._Letters(io.BytesIO(data)).load()
        raise ValueError("loaded")
    assert not target.exists(), "the helper's answer wrote a file through pbem.records.disk"


# -- 2. a deeply nested message has the same outcome with the helper ------------------------------


def deep(depth: int) -> bytes:
    """A stranger's message nested `depth` deep, with a delivery report as its last part."""
    out = [
        b"From: mallory@example.net\r\nTo: pbem@example.org\r\nMessage-ID: <deep%d@example.net>"
        b"\r\nSubject: x\r\nDate: Tue, 02 Mar 2027 11:00:00 +0000\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="top"\r\n\r\n--top\r\n' % depth
    ]
    out += [
        b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (n, n)
        for n in range(depth)
    ]
    out.append(b"Content-Type: text/plain\r\n\r\nhi\r\n")
    out += [b"--b%d--\r\n" % n for n in reversed(range(depth))]
    out.append(
        b'--top\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="r"'
        b"\r\n\r\n--r\r\nContent-Type: text/plain\r\n\r\nbounce\r\n--r--\r\n--top--\r\n"
    )
    return b"".join(out)


def _here_fails(depth: int) -> bool:
    raw = deep(depth)
    return read_body(read_head(raw), raw).machine is None  # the parser ran out of stack


def test_a_deeply_nested_message_has_the_same_outcome_with_the_helper(
    made: Path, tmp_path: Path, working_helper: None
) -> None:
    depths = range(600, 1000, 2)
    assert _here_fails(depths[-1]), "the parser here reads even the deepest message"
    # the shallowest depth at which the parser here runs out of stack (deeper ones fail too)
    depth = depths[bisect.bisect_left(depths, True, key=_here_fails)]
    assert read_head(deep(depth)).limit is None  # within MAX_PARTS and MAX_MESSAGE_BYTES
    entries = fillers(20)
    entries.insert(15, Entry("deep", raw=deep(depth)))
    results = {}
    for how in ("without", "with"):
        game = Path(shutil.copytree(made, tmp_path / how / GAME))
        with pytest.MonkeyPatch.context() as m:
            m.setattr(ahead, "ENABLED", how == "with")
            fetch_entries(game, slowly(entries), "moderator@example.org", NOW)
        results[how] = folder(game)
    a, b = results["without"], results["with"]
    differ = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
    assert not differ, [(k, a.get(k, b"")[-300:], b.get(k, b"")[-300:]) for k in differ]


# -- 3. a pipe past descriptor 1023 is waited on with poll ----------------------------------------


def test_a_fetch_with_many_files_open_is_not_stopped_by_the_helper(working_helper: None) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    held = [os.dup(null) for _ in range(1100)]
    try:
        entries = fillers(20)
        with ahead.reading_ahead(slowly(entries), lambda head: True) as letters:
            seen = [e for e, _ in letters]
        assert seen == entries
    finally:
        for fd in (null, *held):
            os.close(fd)


# -- 4. the window: at most AHEAD messages and AHEAD_BYTES in flight ------------------------------


def _count_in_flight(monkeypatch: pytest.MonkeyPatch, entries: list[Entry]) -> tuple[int, int]:
    """The most messages, and bytes, handed to a helper that never answers and not yet
    handled."""
    sent: list[int] = []
    handled: list[int] = []
    worst = [0, 0]
    real_send = ahead._Helper.send

    def send(self: ahead._Helper, *request: object) -> bool:
        ok = real_send(self, *request)
        if ok and request[0] == "read":
            sent.append(len(request[2]))  # type: ignore[arg-type]
            n = len(sent) - len(handled)
            worst[0] = max(worst[0], n)
            worst[1] = max(worst[1], sum(sent[len(handled) :]) if n > 0 else 0)
        return ok

    def quiet(self: ahead._Helper, timeout: float) -> None:
        time.sleep(min(timeout, 0.05))
        return None

    monkeypatch.setattr(ahead._Helper, "send", send)
    monkeypatch.setattr(ahead._Helper, "answer", quiet)
    monkeypatch.setattr(ahead, "WAIT", 0.2)
    # the helper is ready before the first message is handed on
    real_start = ahead._Helper._start

    def start(self: ahead._Helper) -> None:
        real_start(self)
        self.ready = self._frame(20.0) == b"ready"

    monkeypatch.setattr(ahead._Helper, "_start", start)
    with ahead.reading_ahead(entries, lambda head: True) as letters:
        for n, _ in enumerate(letters):
            # only messages handed on count (the first START are read here)
            handled.append(n) if n >= ahead.START + 1 else None
    return worst[0], worst[1]


def test_at_most_ahead_messages_are_in_flight(
    monkeypatch: pytest.MonkeyPatch, working_helper: None
) -> None:
    entries = [fillers(1)[0]] * 60
    most, _ = _count_in_flight(monkeypatch, entries)
    assert most <= ahead.AHEAD


def test_at_most_ahead_bytes_are_in_flight(
    monkeypatch: pytest.MonkeyPatch, working_helper: None
) -> None:
    big = fillers(1)[0].raw + b"\r\n" + b"x" * (3 * 1024 * 1024)  # type: ignore[operator]
    entries = [Entry(str(n), raw=big) for n in range(20)]
    _, most = _count_in_flight(monkeypatch, entries)
    assert most <= ahead.AHEAD_BYTES


# -- 5. a copy of a message in the same fetch is not parsed again ---------------------------------


def test_a_copy_of_a_message_read_in_the_same_fetch_is_not_body_parsed_again(
    made: Path, tmp_path: Path, working_helper: None
) -> None:
    one = fillers(13)[12]
    entries = fillers(12) + [Entry(f"copy {n}", raw=one.raw) for n in range(10)]
    bodies: list[int] = []
    real_send = ahead._Helper.send

    def send(self: ahead._Helper, *request: object) -> bool:
        if request[0] == "body":
            bodies.append(request[1])  # type: ignore[arg-type]
        return real_send(self, *request)

    game = Path(shutil.copytree(made, tmp_path / GAME))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ahead._Helper, "send", send)
        fetch_entries(game, slowly(entries), "moderator@example.org", NOW)
    copies = [n for n in bodies if n >= 12]
    assert len(copies) <= 1, f"the helper parsed the body of {len(copies)} copies of one message"


# -- 6. an order file holding a TOML time is a letter the fetch takes -----------------------------


def test_an_order_file_with_a_toml_time_is_a_letter_the_fetch_takes() -> None:
    found = Found("game = 'x'\nat = 07:32:00\n", Where.TEXT)
    assert found.data() is not None
    data = pickle.dumps((3, found), protocol=pickle.HIGHEST_PROTOCOL)
    ahead._Letters(io.BytesIO(data)).load()  # UnpicklingError: datetime.time
