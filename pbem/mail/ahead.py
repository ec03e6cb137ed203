"""Reading the next messages while one is handled: in a fetch of many messages, they are
parsed in a second process, on another core.

Parsing a message (its headers, its MIME structure) is most of what reading it costs (the
standard library's parser, in Python), and nothing in it depends on the game: it is the same
work whichever process does it. So a fetch hands each message to a helper process, a few dozen
ahead of the one it is handling; the helper answers with its head, the fetch asks for the body
only of a message it wants (not read before, `wanted`), and the helper answers with the whole
letter. The answers come back in the order asked.

What the fetch sees is the same with or without the helper: each entry in the mailbox's order,
with its head, or its whole letter when the helper read it (`read_body` of a whole letter
returns it as it is; the fetch reads any other itself). The helper is only an aid:
- it is started only when a fetch has more than `START` messages to read, on a machine with
  more than one core, and the fetch reads messages itself until it says it is ready;
- when it dies, stalls past `WAIT`, or answers what it should not, it is stopped and the fetch
  reads the rest itself (a message is never lost or read twice because of it);
- an IMAP message is never read ahead: the next one is downloaded only once the one before is
  handled and marked seen, as `mailboxes` promises;
- it reads only what it is sent (its standard input), writes only letters (its standard
  output), holds no file, lock or connection of the fetch, and ends when its input closes,
  also when the fetch is killed.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pbem.mail.message import MAX_MESSAGE_BYTES, Letter, read_body, read_head
from pbem.mail.sources import Entry

START = 8
"""A fetch reads this many messages itself before it starts the helper: a fetch of a few
messages (a cron tick) never starts one."""
AHEAD = 32
"""The most messages handed to the helper and not yet handled (the one being handled too)."""
AHEAD_BYTES = 16 * 1024 * 1024
"""The most bytes of messages handed to the helper and not yet handled."""
WAIT = 30.0
"""The most seconds the fetch waits for the helper's next letter (or to hand it a message)."""
ENABLED = True
"""Whether a fetch may start the helper at all (tests turn it off to compare)."""

_FRAME = struct.Struct(">Q")
_READY = b"ready"
_PACKAGE = str(Path(__file__).resolve().parents[2])
"""The folder that holds this pbem: the helper imports the same one."""
DEEP = 64
"""A message declaring more MIME boundaries than this is read by the fetch itself: how deep
the standard library's parser may nest depends on how deep the stack already is, and the
helper's is not the fetch's (the same message must have the same outcome)."""


class HelperFailed(Exception):
    """The helper died, stalled or answered nonsense: the fetch reads the rest itself."""


def cores() -> int:
    """How many cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (not on Linux)
        return os.cpu_count() or 1


@dataclass
class _Pending:
    entry: Entry
    head: Letter | None = None
    """Its head, or its whole letter once the helper read its body."""
    waiting: bool = False
    """Its head or its letter is still to come from the helper."""
    body: bool = False
    """The helper was asked for its body (its head has come)."""
    size: int = 0
    """The bytes handed to the helper."""


@dataclass
class _Helper:
    """The second process, seen from the fetch."""

    process: subprocess.Popen[bytes] | None = None
    ready: bool = False
    failed: bool = False
    read: int = 0
    """How many messages the fetch has read so far (the helper starts after START)."""
    buffer: bytearray = field(default_factory=bytearray)

    def usable(self) -> bool:
        """Whether a message can be handed on now: the helper started once enough were read,
        and said it is ready (never waited for: until then the fetch reads them)."""
        if self.failed or not ENABLED:
            return False
        self.read += 1
        if self.process is None:
            if self.read <= START or cores() < 2 or not sys.executable or os.name != "posix":
                return False
            self._start()
            return False
        if not self.ready:
            try:
                frame = self._frame(0.0)
            except HelperFailed:
                self.stop()
                return False
            self.ready = frame == _READY
            if frame is not None and not self.ready:
                self.stop()
        return self.ready

    def _start(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE, env.get("PYTHONPATH")) if p)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "from pbem.mail.ahead import main; main()", _PACKAGE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=_PACKAGE,
            )
        except OSError:
            self.failed = True
            return
        assert self.process.stdin is not None
        os.set_blocking(self.process.stdin.fileno(), False)

    def send(self, *request: object) -> bool:
        """Ask the helper something (`serve`); False when it failed (then stopped)."""
        if self.process is None or self.process.stdin is None:
            return False
        data = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self.process.stdin, _FRAME.pack(len(data)) + data, WAIT)
        except HelperFailed:
            self.stop()
            return False
        return True

    def answer(self, timeout: float) -> tuple[int, Letter] | None:
        """The helper's next answer (which message, its head or its whole letter), or None
        when none came within `timeout` seconds; HelperFailed when it has none to give (then
        stopped)."""
        try:
            frame = self._frame(timeout)
            if frame is None:
                return None
            answer = _Letters(io.BytesIO(frame)).load()
            if not (
                isinstance(answer, tuple)
                and len(answer) == 2
                and isinstance(answer[0], int)
                and isinstance(answer[1], Letter)
            ):
                raise HelperFailed("the helper answered something else")
        except HelperFailed:
            self.stop()
            raise
        except Exception as err:  # noqa: BLE001 (an answer that cannot be unpickled)
            self.stop()
            raise HelperFailed(str(err)) from None
        return answer[0], answer[1]

    def _frame(self, timeout: float) -> bytes | None:
        """The next frame of the helper's output, or None when none is whole within
        `timeout` seconds."""
        if self.process is None or self.process.stdout is None:
            raise HelperFailed("the helper is not running")
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= _FRAME.size:
                (size,) = _FRAME.unpack_from(self.buffer)
                if size > 4 * AHEAD_BYTES:
                    raise HelperFailed("the helper answered a frame too large")
                if len(self.buffer) >= _FRAME.size + size:
                    frame = bytes(self.buffer[_FRAME.size : _FRAME.size + size])
                    del self.buffer[: _FRAME.size + size]
                    return frame
            left = deadline - time.monotonic()
            if not _ready(fd, select.POLLIN, left):
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise HelperFailed("the helper ended")
            self.buffer += chunk

    def stop(self) -> None:
        """End the helper (its input closed, then killed if it lingers); the fetch goes on
        without it."""
        self.failed, self.ready = True, False
        process, self.process = self.process, None
        if process is None:
            return
        for pipe in (process.stdin, process.stdout):  # it ends, even while writing
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _ready(fd: int, event: int, timeout: float) -> bool:
    """Whether `fd` can be read (POLLIN) or written (POLLOUT, or its reader is gone) within
    `timeout` seconds: poll, which takes any descriptor, as select does not past 1023."""
    poller = select.poll()
    poller.register(fd, event)
    return bool(poller.poll(max(0, int(timeout * 1000))))


def _write_all(handle: IO[bytes], data: bytes, timeout: float) -> None:
    """Write `data` to the helper's input, never waiting longer than `timeout` seconds for
    it to take the next part."""
    fd = handle.fileno()
    view = memoryview(data)
    deadline = time.monotonic() + timeout
    while view:
        if not _ready(fd, select.POLLOUT, deadline - time.monotonic()):
            raise HelperFailed("the helper stopped reading")
        try:
            written = os.write(fd, view[: 1 << 16])
        except BlockingIOError:
            continue
        except OSError as err:  # (it ended: a broken pipe)
            raise HelperFailed(str(err)) from None
        view = view[written:]


class _Letters(pickle.Unpickler):
    """Unpickles what the helper sends: a letter and what it holds (the classes of `_LETTER`,
    plain data), nothing else: no function, no name with a dot."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _LETTER:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a letter's")


_LETTER = {
    ("pbem.mail.message", "Letter"),
    ("pbem.mail.found", "Reading"),
    ("pbem.mail.found", "Found"),
    ("pbem.mail.found", "Where"),
    ("pbem.mail.found", "Fix"),
    ("pbem.errors", "Problem"),
    ("builtins", "frozenset"),
    ("builtins", "set"),
    ("datetime", "datetime"),
    ("datetime", "date"),
    ("datetime", "time"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
}
"""Every class a letter holds (an order file's TOML holds dates and times)."""


@contextlib.contextmanager
def reading_ahead(
    entries: Iterable[Entry], wanted: Callable[[Letter], bool]
) -> Iterator[Iterator[tuple[Entry, Letter | None]]]:
    """Each entry with its letter: its head (None for an entry that could not be read), or
    its whole letter when the helper read it. `wanted(head)`, asked once a message's head is
    read, before the ones before it are handled: whether its body may be needed (it was not
    read before): only those bodies are read ahead. The helper is stopped when the block
    ends."""
    helper = _Helper()
    try:
        yield _Ahead(helper, wanted).run(iter(entries))
    finally:
        helper.stop()


@dataclass
class _Ahead:
    """The messages read and not yet handled, in the mailbox's order."""

    helper: _Helper
    wanted: Callable[[Letter], bool]
    window: dict[int, _Pending] = field(default_factory=dict)
    count: int = 0
    asked: set[tuple[str, str]] = field(default_factory=set)
    """The messages (Message-ID, digest) whose body the helper was asked for: a copy of one
    in the same fetch is a duplicate, read before."""
    in_flight: int = 0
    """Bytes of the messages handed to the helper and not yet handled."""

    def run(self, entries: Iterator[Entry]) -> Iterator[tuple[Entry, Letter | None]]:
        for entry in entries:
            if entry.uid is not None:  # IMAP: handled before the next is downloaded
                yield from self.drain()
                yield entry, _head(entry)
                continue
            pending = _Pending(entry)
            if entry.raw is not None and self.helper.usable():
                pending.waiting = self.helper.send("read", self.count, entry.raw, entry.cut)
                pending.size = len(entry.raw) if pending.waiting else 0
                self.in_flight += pending.size
            if not pending.waiting:
                pending.head = _head(entry)
            self.window[self.count] = pending
            self.count += 1
            self.take_answers(0.0)
            while self.window and (
                not self.first.waiting
                or len(self.window) >= AHEAD  # (with the one handled next: AHEAD at most)
                or self.in_flight > AHEAD_BYTES - MAX_MESSAGE_BYTES  # (the next one fits)
            ):
                yield self.front()
        yield from self.drain()

    @property
    def first(self) -> _Pending:
        return next(iter(self.window.values()))

    def drain(self) -> Iterator[tuple[Entry, Letter | None]]:
        while self.window:
            yield self.front()

    def front(self) -> tuple[Entry, Letter | None]:
        """The first message, once the helper answered for it (read here when it cannot)."""
        while self.first.waiting and not self.helper.failed:
            if not self.take_answers(WAIT):
                self.helper.stop()  # it stalled
        number = next(iter(self.window))
        pending = self.window.pop(number)
        if pending.waiting:  # the helper failed
            pending.head = pending.head or _head(pending.entry)
        self.in_flight -= pending.size
        return pending.entry, pending.head

    def take_answers(self, timeout: float) -> bool:
        """Take the helper's answers that have come (waiting up to `timeout` seconds for the
        first); whether any came. A head is answered with a request for the body, when it
        is wanted, or else with leave to forget the message."""
        took = False
        while self.helper.ready:
            try:
                answer = self.helper.answer(timeout if not took else 0.0)
            except HelperFailed:
                break
            if answer is None:
                break
            took = True
            number, letter = answer
            pending = self.window.get(number)
            if pending is None or not pending.waiting:
                self.helper.stop()  # an answer for no message asked about
                break
            if pending.body or letter.whole:
                pending.head, pending.waiting = letter, False
            elif (
                letter.limit is None
                and (letter.message_id, letter.digest) not in self.asked
                and self.wanted(letter)
            ):
                pending.head, pending.body = letter, True
                self.asked.add((letter.message_id, letter.digest))
                self.helper.send("body", number)
            else:
                pending.head, pending.waiting = letter, False
                self.helper.send("drop", number)
        return took


def _head(entry: Entry) -> Letter | None:
    return read_head(entry.raw, entry.cut) if entry.raw is not None else None


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """The helper: answers the fetch's requests from `stdin` on `stdout`, in order, until
    `stdin` ends: ("read", n, bytes, cut) with message n's head (`read_head`), ("body", n)
    with its whole letter (`read_body`), ("drop", n) with nothing (the message is
    forgotten). Its input is read by a thread of its own, so that it never stops reading while
    the fetch is not reading its answers."""
    frames: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def reader() -> None:
        try:
            while len(size := stdin.read(_FRAME.size)) == _FRAME.size:
                frames.put(stdin.read(_FRAME.unpack(size)[0]))
        finally:
            frames.put(None)

    def tell(number: int, letter: Letter) -> None:
        out = pickle.dumps((number, letter), protocol=pickle.HIGHEST_PROTOCOL)
        stdout.write(_FRAME.pack(len(out)) + out)
        stdout.flush()

    threading.Thread(target=reader, daemon=True).start()
    stdout.write(_FRAME.pack(len(_READY)) + _READY)
    stdout.flush()
    kept: dict[int, tuple[Letter, bytes]] = {}
    while (data := frames.get()) is not None:
        request = pickle.loads(data)  # (from the fetch that started it)
        if request[0] == "read":
            _, number, raw, cut = request
            head = read_head(raw, cut)
            kept[number] = (head, raw)
            tell(number, head)
        elif request[0] == "body":
            head, raw = kept.pop(request[1])
            if raw.count(b"boundary") > DEEP:  # the fetch reads it itself
                tell(request[1], head)
                continue
            letter = read_body(head, raw)
            for found in letter.reading.found:
                found.data()  # (read here, kept with it)
            tell(request[1], letter)
        else:
            kept.pop(request[1], None)


def main() -> None:
    """The helper's process (started by `reading_ahead`, with the path of its pbem)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the fetch, which stops this
    if len(sys.argv) != 2 or sys.argv[1] != _PACKAGE:  # not the fetch's own pbem
        raise SystemExit(2)
    with contextlib.suppress(BrokenPipeError):
        serve(sys.stdin.buffer, sys.stdout.buffer)
