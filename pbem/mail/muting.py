"""How many answers one address gets: the limit that ends a loop with an auto-responder that
carries none of the marks of machine mail (`machine.py`).

Such a responder answers each of pbem's answers, pbem answers each of its messages (a message
without orders is answered and passed to the moderator), and from cron the two would write to
each other every ten minutes for ever. So pbem counts its answers to each address three ways
and stops answering an address that has had its share:

- per fetch: `PER_FETCH` answers to one address in one fetch;
- per thread: `PER_THREAD` answers in one chain of replies: a message whose In-Reply-To or
  References names one of pbem's own answers is as deep in the chain as that answer, and the
  chain ends when it is `PER_THREAD` answers deep (a new message, not a reply, starts again);
- per day: `PER_DAY` answers to one address in 24 hours, counted by the run's `--now` time and
  recorded in the mail state (`mail/ledger.sqlite`), so that a run repeated or a fetch from
  cron counts them all.

A message that is not answered because of these limits is still read: its orders are taken and
played when valid. Only the answer is left out, and the moderator's summary says which address,
why, and until when."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime

from pbem.mail.message import Letter
from pbem.records.mailstate import MailState

PER_FETCH = 3
"""The most answers one address gets from one fetch."""
PER_THREAD = 5
"""The most answers in one chain of replies to pbem's answers."""
PER_DAY = 10
"""The most answers one address gets in 24 hours."""
DAY = timedelta(hours=24)
KEPT = timedelta(days=7)
"""How long an answer is remembered (for its thread and the day's count)."""
ANSWERED = "answered"
"""The section of the mail state (`seen`): pbem's answers by Message-ID, with the address,
time and depth."""


def _when(value: object) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


@dataclass
class Muting:
    """The answers of one fetch, counted against the limits and recorded in `seen`."""

    state: MailState
    now: datetime
    fetched: dict[str, int] = field(default_factory=dict)

    def _answers(self) -> dict[str, object]:
        answers = self.state.seen.get(ANSWERED)
        if not isinstance(answers, dict):
            answers = self.state.seen[ANSWERED] = {}
        return answers

    def depth(self, letter: Letter) -> int:
        """How many of pbem's answers deep `letter` is in its chain of replies (0: it answers
        none of them)."""
        answers = self._answers()
        depths = [
            record.get("depth", 1)
            for mid in (*letter.in_reply_to, *letter.references)
            if isinstance(record := answers.get(mid), dict)
        ]
        return max((d for d in depths if isinstance(d, int)), default=0)

    def _today(self, to: str) -> list[datetime]:
        """When `to` was answered in the 24 hours up to now, oldest first."""
        times = []
        for record in self._answers().values():
            if not isinstance(record, dict) or str(record.get("to", "")) != to:
                continue
            when = _when(record.get("at"))
            if when is not None and self.now - DAY < when <= self.now:
                times.append(when)
        return sorted(times)

    def muted(self, to: str, letter: Letter) -> str | None:
        """Why `to` gets no answer to `letter`, naming the address and until when; None when
        it is answered."""
        to = to.strip().lower()
        depth = self.depth(letter)
        if letter.no_auto_reply is not None and depth > 0:
            return (
                f"{to} muted for this thread: {letter.no_auto_reply}, and it answers one of "
                "pbem's answers; a new message from the address is answered"
            )
        if depth >= PER_THREAD:
            return (
                f"{to} muted for this thread: it answers pbem's answer {depth} deep in a chain "
                f"of replies (at most {PER_THREAD} answers a thread); a new message from the "
                "address is answered"
            )
        if self.fetched.get(to, 0) >= PER_FETCH:
            return (
                f"{to} muted until the next fetch: {PER_FETCH} answers already went to it in "
                "this one (at most that many a fetch)"
            )
        today = self._today(to)
        if len(today) >= PER_DAY:
            until = format_datetime(today[len(today) - PER_DAY] + DAY)
            return (
                f"{to} muted until {until}: {len(today)} answers went to it in the last 24 "
                f"hours (at most {PER_DAY} a day)"
            )
        return None

    def answered(self, to: str, message_id: str, letter: Letter) -> None:
        """Count an answer to `to` with `message_id`, written in reply to `letter`; answers
        older than `KEPT` are forgotten."""
        to = to.strip().lower()
        self.fetched[to] = self.fetched.get(to, 0) + 1
        for key in [k for k, r in self._answers().items() if not self._recent(r)]:
            self.state.drop("seen", ANSWERED, key)
        record = {"to": to, "at": self.now.isoformat(), "depth": self.depth(letter) + 1}
        self.state.put("seen", ANSWERED, message_id, record)  # committed with the message

    def _recent(self, record: object) -> bool:
        when = _when(record.get("at")) if isinstance(record, dict) else None
        return when is not None and when > self.now - KEPT
