"""`pbem run`: resolve every game of a root that is due, each in its own lock, in parallel.

A game is resolved in a worker process of its own when `jobs` > 1. Every game's outcome is
data (`GameRun`); one damaged or failing game never stops the others. Two runs at once never
resolve one game twice: the game's lock is held while it is read, checked and resolved, and a
game whose lock is taken is skipped.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path

from pbem.club.status import DUE, GameStatus, State, status_of, table, tick
from pbem.errors import LockedError, PbemError
from pbem.game import bots, processor
from pbem.records import rootindex
from pbem.records.mailbox_state import held_by_mailbox
from pbem.records.root import open_root

Progress = Callable[[Iterator["GameRun"], int], Iterator["GameRun"]]
"""Wraps the stream of results as they come, knowing how many there will be (a progress bar)."""


class Result(Enum):
    """What `pbem run` did with a game, in the order the summary lists them."""

    FAILED = "failed"
    HELD = "held"
    """Waits for the moderator (undone), or past its deadline with its mail perhaps unread
    (not played by the autopilot)."""
    RESOLVED = "resolved"
    WOULD_RESOLVE = "would resolve"
    SKIPPED = "skipped"
    WAITING = "waiting"
    OVER = "over"


@dataclass(frozen=True)
class GameRun:
    """One game's line in the summary."""

    name: str
    path: Path
    result: Result
    detail: str = ""


@dataclass(frozen=True)
class RunSummary:
    """Every game's outcome, and what was fetched and sent around the resolutions."""

    games: tuple[GameRun, ...]
    now: datetime
    notes: tuple[str, ...] = field(default=())
    mail_failed: bool = False

    @property
    def ok(self) -> bool:
        return not self.mail_failed and all(g.result is not Result.FAILED for g in self.games)

    def count(self, result: Result) -> int:
        return sum(1 for g in self.games if g.result is result)

    def lines(self) -> list[str]:
        order = list(Result)
        rows = sorted(self.games, key=lambda g: (order.index(g.result), g.name, str(g.path)))
        out = list(self.notes)
        out += table([[g.result.value, g.name, g.detail] for g in rows], ["RESULT", "GAME", ""])
        totals = ", ".join(f"{self.count(r)} {r.value}" for r in Result if self.count(r))
        when = self.now.isoformat(timespec="seconds")
        out.append(f"{len(self.games)} games at {when}: {totals or 'none'}")
        return out


def run_game(
    directory: Path, now: datetime, dry_run: bool = False, mailbox_down: str | None = None
) -> GameRun:
    """Resolve one game if it is due; never raises for anything that goes wrong with it.

    A game past its deadline with orders missing is not played by the autopilot while its
    mail may be unread: `mailbox_down` (this run's fetch failed), or a mailbox not read in
    full since the deadline (pbem.records.mailbox_state). A game whose awaited players all sent
    valid orders is resolved all the same."""
    try:
        status = status_of(directory, now)
        done = _left(status)
        if done is not None:
            return done
        unanswered = set(status.bots) - set(status.valid)  # a stopped run's, or stale ones
        if status.state not in DUE and not dry_run and unanswered and bots.catch_up(directory):
            status = status_of(directory, now)  # a stopped run's bots answered now
        if status.state not in DUE:
            return _waiting(status)
        if status.state is State.OVERDUE:
            held = mailbox_down or (
                held_by_mailbox(directory, status.name, status.deadline)
                if status.deadline is not None
                else None
            )
            if held is not None:
                return GameRun(
                    status.name, directory, Result.HELD, f"not played by the autopilot: {held}"
                )
        if dry_run:
            return GameRun(status.name, directory, Result.WOULD_RESOLVE, status.reason)
        return _resolve(status.name, directory, now)
    except Exception as err:  # one game's fault must never stop the others
        return GameRun(directory.name, directory, Result.FAILED, f"{type(err).__name__}: {err}")


def _left(status: GameStatus) -> GameRun | None:
    """What `pbem run` says of a game it leaves as it is (damaged, over, locked, held); None
    for a game it may have to work on."""
    directory = status.path
    if status.state is State.DAMAGED:
        return GameRun(status.name, directory, Result.FAILED, status.reason)
    if status.state is State.OVER:
        return GameRun(status.name, directory, Result.OVER, status.reason)
    if status.state is State.LOCKED:
        return GameRun(status.name, directory, Result.SKIPPED, "locked by another run")
    if status.state is State.HELD:
        return GameRun(status.name, directory, Result.HELD, status.reason)
    return None


def _waiting(status: GameStatus) -> GameRun:
    awaited = [p for p in status.awaited if p not in status.valid]
    detail = "; ".join(x for x in (f"awaiting {', '.join(awaited)}", status.reason) if x)
    return GameRun(status.name, status.path, Result.WAITING, detail)


def _idle(status: GameStatus | None, dry_run: bool) -> GameRun | None:
    """What `pbem run` says of a game its tick found nothing to do in (as `run_game` would
    say it); None for a game to be run alone: due, with bots to answer, or not read."""
    if status is None:
        return None
    done = _left(status)
    if done is not None or status.state in DUE:
        return done
    if set(status.bots) - set(status.valid) and not dry_run:
        return None
    return _waiting(status)


def _resolve(name: str, directory: Path, now: datetime) -> GameRun:
    try:
        outcome = processor.resolve_game(directory, now=now)
    except LockedError:
        return GameRun(name, directory, Result.SKIPPED, "locked by another run")
    except processor.NotReady as err:  # another run resolved it in the meantime
        return GameRun(name, directory, Result.WAITING, str(err).splitlines()[-1])
    except PbemError as err:
        return GameRun(name, directory, Result.FAILED, str(err))
    state = outcome.state
    after = (
        f"over: {state.won_by} won"
        if state.winner
        else f"turn {state.turn} awaits {', '.join(state.awaiting())}"
    )
    done = "completed" if outcome.recovered else "resolved"
    return GameRun(
        name, directory, Result.RESOLVED, f"{done} {processor.played(outcome).words()}; {after}"
    )


def _run_one(task: tuple[Path, datetime, bool, str | None]) -> GameRun:
    return run_game(*task)


def resolve_due(
    games: Sequence[Path],
    now: datetime,
    jobs: int = 1,
    dry_run: bool = False,
    progress: Progress | None = None,
    mailbox_down: str | None = None,
) -> list[GameRun]:
    """Run every game, in `jobs` processes; `progress` wraps the stream of results;
    `mailbox_down`: why this run could not read the mail (no game is played by the autopilot)."""
    tasks = [(g, now, dry_run, mailbox_down) for g in games]

    def show(results: Iterator[GameRun]) -> list[GameRun]:
        return list(progress(results, len(tasks)) if progress else results)

    if jobs <= 1 or len(tasks) <= 1:
        return show(_run_one(t) for t in tasks)
    if not dry_run:  # the workers are forked with the reports' templates loaded
        from pbem.present import report

        report.preload()
    with multiprocessing.get_context("fork").Pool(min(jobs, len(tasks))) as pool:
        return show(pool.imap_unordered(_run_one, tasks, chunksize=1))


@dataclass(frozen=True)
class MailRun:
    """The mail around a run: fetch before resolving, send after, with these settings."""

    fetch: bool = False
    send: bool = False
    flags: Mapping[str, str | None] = field(default_factory=dict)
    ask_imap: Callable[[str, str], str] | None = None
    ask_smtp: Callable[[str, str], str] | None = None
    kit: bool = False
    """The player's kit goes with each first report sent."""


def run_root(
    path: Path,
    now: datetime,
    jobs: int = 1,
    dry_run: bool = False,
    progress: Progress | None = None,
    mail: MailRun | None = None,
    then: Callable[[Path, datetime], Sequence[str]] | None = None,
    shard: tuple[int, int] | None = None,
) -> RunSummary:
    """Fetch the mail (when asked), resolve every game of a root that is due now, send what
    was written (when asked); a summary of what happened to each game. `then` is what the
    club does once the games are resolved and before the mail goes (the next round of a
    tournament, whose new games' first reports then go in the same run); what it says is
    among the notes.

    With `shard` (K, N), only the games of shard K of N are looked at (and their mail sent);
    only shard 1 fetches the mail, and moves the tournaments on (docs/batch.md)."""
    if jobs < 1:
        raise PbemError("--jobs must be 1 or more")
    games = rootindex.walk(path)
    if not games:
        raise PbemError(f"there is no game in {path}: no folder in it has a game.toml")
    notes: list[str] = []
    mail_failed = False
    mail = mail or MailRun()
    if (mail.fetch or mail.send) and dry_run:
        notes.append("dry run: no mail fetched or sent")
    down: str | None = None
    first = shard is None or shard[0] == 1
    if mail.fetch and not dry_run and not first:
        notes.append(f"fetch: left to shard 1 of {shard[1] if shard else 1}")
    if mail.fetch and not dry_run and first:
        read, down = _fetch(path, mail, now, notes)
        mail_failed |= not read
    looked = tick(
        path, now, shard, careful=True, keep=not dry_run
    )  # after the fetch: it brings orders
    root = looked.root
    names = {p: n for n, p in root.games}
    found: dict[Path, GameRun | None] = {}
    for game, status in looked.games:
        reason = root.duplicate_reason(game)
        found[game] = (
            GameRun(names[game], game, Result.FAILED, reason) if reason else _idle(status, dry_run)
        )
    named = [p for p in found if root.duplicate_reason(p) is None]
    todo = [g for g, run in found.items() if run is None]
    found.update((r.path, r) for r in resolve_due(todo, now, jobs, dry_run, progress, down))
    runs = [r for r in found.values() if r is not None]
    if then is not None and not dry_run and first:
        said = list(then(path, now))
        notes.extend(said)
        if said:  # (new games may have been made)
            games = rootindex.walk(path)
            root = open_root(path, [g.path for g in games])
            named = [
                g.path
                for g in games
                if root.duplicate_reason(g.path) is None and rootindex.in_shard(g.key, shard)
            ]
    if mail.send and not dry_run:
        mine = set(named)
        sending = [g for g in games if g.path in mine]
        names = {p: n for n, p in root.games}
        sent = _send(path, sending, names, mail, now, notes, first, shard, todo)
        mail_failed |= not sent
    return RunSummary(tuple(runs), now, tuple(notes), mail_failed)


def _fetch(path: Path, mail: MailRun, now: datetime, notes: list[str]) -> tuple[bool, str | None]:
    """Fetch the root's mail: whether everything went (the reasons in `notes`), and, when the
    mailbox could not be read at all or not to the end (the server dropped the connection,
    stalled), why (no game is then played by the autopilot; the games whose orders all came
    in are resolved). A game
    that could not take its messages is held by the record the fetch leaves
    (pbem.records.mailbox_state); the rest go on."""
    from pbem.mail import inbox

    try:
        box = inbox.mailbox(path, mail.flags, (), mail.ask_imap)
        result = inbox.fetch(path, box, mail.flags, now)
    except LockedError:  # another run is reading this mailbox: it takes the mail, not a fault
        notes.append(
            "fetch: another run is reading this mailbox; this run leaves the mail to it and "
            "plays no one by the autopilot"
        )
        return True, "another run is reading the mailbox"
    except PbemError as err:
        notes.append(
            f"fetch failed: {err}; no game is played by the autopilot in this run (the "
            "orders may be waiting in the mailbox)"
        )
        return False, f"this run could not read the mailbox ({err})"
    notes.extend(result.lines())
    if result.broken is not None:  # what was read is handled; the rest may hold orders
        return False, f"this run could not read the mailbox to the end ({result.broken})"
    return not isinstance(result, inbox.RootFetch) or result.ok, None


def _send(
    path: Path,
    games: Sequence[rootindex.Found],
    names: Mapping[Path, str],
    mail: MailRun,
    now: datetime,
    notes: list[str],
    answers: bool,
    shard: tuple[int, int] | None,
    resolved: Sequence[Path],
) -> bool:
    """Queue the reminders due now in every game (its `remind` setting) and send every game's
    mail, and the root's (with `answers`: shard 1 alone sends them); False when anything could
    not go. Only the games that may have anything to send are opened: those whose files
    changed since they were last found with nothing to send, those a reminder falls due in,
    and those `resolved` in this run (pbem.mail.due); the rest are told as they were."""
    from pbem.mail import due

    done = due.send_due(
        path,
        games,
        now,
        mail.flags,
        mail.ask_smtp,
        kit=mail.kit,
        answers=answers,
        shard=shard,
        names=names,
        opened=resolved,
    )
    notes.extend(done.reminders)
    notes.extend(done.sent.lines())
    if done.failed is not None:
        notes.append(f"send failed: {done.failed}")
        return False
    return done.sent.ok
