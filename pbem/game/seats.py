"""A seat handed to a substitute: the same armies, cards and mission, a new player with a
secret of their own.

`pbem substitute DIR dave --to carol=carol@example.org` gives dave's seat to carol. The seat
keeps its name (`dave`: the name the orders, the map and the history know it by); game.toml
records who holds it now (`holder = "carol"`), carol's address and language, and a new secret,
derived from the seed, the seat and how many players have held it, so that the secret dave
holds signs nothing from then on (orders signed with it are refused with "this seat has a new
player"). The change is recorded in the history, `history/seats/NNNN-k.toml` (the k-th change
while resolution NNNN was pending): when, which seat, the holders before and after, their
addresses, why, and the secret that signed the seat's orders until then, so that the audit
checks every resolution's orders with the secret in force then. The next resolution tells
everyone first (a `seat_taken` event), and the seat's count of turns missed in a row starts
again from none. The seat's latest report is made again for its new player, with their
secret, and mailed to them (pbem.mail.send) as their first.
"""

from __future__ import annotations

import hmac
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import tomli_w

from pbem.core.state import Phase, player_name, same_name, valid_player_name
from pbem.errors import GameFileError, PbemError
from pbem.records import clock
from pbem.records.clock import DEFAULT_SUBSTITUTE_WITHIN
from pbem.records.disk import atomic_write, locked, write_files
from pbem.records.history import change_files
from pbem.records.opening import read_game
from pbem.records.root import fold
from pbem.records.seat_changes import (
    SEATS,
    SeatChange,
    seat_changes,
    seats_folder,
    unfinished,
    unfinished_problem,
    unfinished_words,
)
from pbem.records.store import (
    PLAYER_NAME_RULE,
    Game,
    Registration,
    load_game,
    write_game,
)
from pbem.terminal import quoted

if TYPE_CHECKING:
    pass

# The events are imported where they are used: every command that reads a game asks this
# module whether a change of seat is half made, and checking orders loads no events.

WHY_LENGTH = 300
"""The longest reason the history keeps for a change of seat."""


def substitute(
    directory: Path,
    seat: str,
    holder: str,
    email: str,
    now: datetime,
    language: str | None = None,
    why: str = "",
) -> SeatChange:
    """Give `seat` to the new player `holder` (address `email`, their own `language`, or the
    game's): the history records the change (and the new address), the seat's latest report
    is made again for them, and game.toml, written last, takes their name, address and new
    secret. Until then every other command refuses the game; run again with the same new
    player, it completes the change."""
    from pbem.game.players import valid_address
    from pbem.languages.i18n import check_language
    from pbem.records.history import history_count
    from pbem.records.undone import check_not_interrupted, undo_records

    holder = player_name(holder)
    why = " ".join(why.split())
    if len(why) > WHY_LENGTH:
        raise PbemError(f"the reason is {len(why)} characters long: give at most {WHY_LENGTH}")
    if not valid_player_name(holder):
        raise PbemError(f"'{quoted(holder)}' cannot be a player's name: {PLAYER_NAME_RULE}")
    if not valid_address(email):
        raise PbemError(
            f"'{quoted(email)}' is not an email address: write --to NAME=ADDRESS, with ADDRESS "
            "like carol@example.org"
        )
    if language is not None:
        check_language(language, f"the language for {quoted(holder)}")
    with locked(directory):
        check_not_interrupted(directory)
        game = load_game(directory)
        done = unfinished(game)
        if done is not None:
            if done.seat != seat or done.holder != holder:
                raise PbemError(unfinished_words(done))
            _carry_out(game, done, now)
            return done
        game = read_game(directory)
        if history_count(directory) != game.state.resolution:
            raise GameFileError("a resolution was interrupted: run 'pbem resolve' to finish it")
        reg = _seat(game, seat)
        _check(game, reg, holder, email)
        returned = returned_to(game, reg.name) if game.state.player(reg.name).dropped else ()
        r = game.state.resolution
        before = [c for c in seat_changes(directory) if c.seat == reg.name]
        change = SeatChange(
            resolution=r,
            number=len(change_files(seats_folder(directory), r)) + 1,
            time=clock.iso(now),
            turn=game.state.turn,
            seat=reg.name,
            holder=holder,
            previous=reg.played_by,
            email=email,
            previous_email=reg.email,
            holders=len(before) + 1,
            previous_secret=reg.secret,
            why=why,
            language=language,
            attempt=sum(1 for u in undo_records(directory) if u.resolution == r),
            returned=returned,
        )
        path = seats_folder(directory) / f"{r:04d}-{change.number}.toml"
        atomic_write(path, tomli_w.dumps(change.to_dict()))
        _carry_out(game, change, now)
        return change


def _carry_out(game: Game, change: SeatChange, now: datetime) -> None:
    """The rest of a recorded change, in an order that a rerun can complete: the new address
    in the history (once), the seat's report made again, then game.toml."""
    from pbem.game.players import address_changes, record_address

    theirs = [a for a in address_changes(game.path) if a.player == change.seat]
    last = theirs[-1] if theirs else None
    if change.email != change.previous_email and (
        last is None or (last.resolution, last.email) != (change.resolution, change.email)
    ):
        record_address(game, change.seat, change.email, change.previous_email, now)
    _remake_report(_with_holder(game, change), change)


def _seat(game: Game, seat: str) -> Registration:
    reg = game.registration(seat)
    if reg is None:
        names = ", ".join(r.name for r in game.registrations)
        raise PbemError(f"there is no seat '{quoted(seat)}' in this game: its seats are {names}")
    if game.state.phase is Phase.OVER:
        raise PbemError(f"game '{game.name}' is over: its seats are not played any more")
    player = game.state.player(reg.name)
    if player.dropped:
        return reg
    if not player.alive:
        raise PbemError(f"{reg.name} is out of the game: there is no seat left to hand over")
    return reg


def returned_to(game: Game, seat: str) -> tuple[str, ...]:
    """What a dropped seat comes back with, handed to a substitute: the territories it held
    when it was dropped that are still neutral (in board order). Refused past the game's
    `substitute_within` turns after the drop, and when nothing of the seat is left."""
    from pbem.core.events import Dropped
    from pbem.core.state import NEUTRAL
    from pbem.records.history import read_history
    from pbem.records.replay import state_after

    dropped = None
    for r in range(game.state.resolution - 1, 0, -1):
        if any(
            isinstance(e, Dropped) and e.player == seat for e in read_history(game.path, r).events
        ):
            dropped = r
            break
    if dropped is None:
        raise GameFileError(f"the history does not say when {seat} was dropped")
    before, after = state_after(game, dropped - 1), state_after(game, dropped)
    within = game.schedule.substitute_within if game.schedule else DEFAULT_SUBSTITUTE_WITHIN
    turns = game.state.turn - after.turn
    if within == 0 or turns > within:
        raise PbemError(
            f"{seat} left the game after missed turns {turns} turns ago: this game hands a "
            f"dropped seat to a new player within {within} turns of the drop (pbem new "
            "--substitute-within), and their armies stay neutral"
            if within
            else f"{seat} left the game after missed turns: this game hands no dropped seat to "
            "a new player (pbem new --substitute-within 0), and their armies stay neutral"
        )
    held = [
        t
        for t in game.state.territories
        if before.owner(t) == seat and after.owner(t) == NEUTRAL and game.state.owner(t) == NEUTRAL
    ]
    if not held:
        raise PbemError(
            f"{seat} left the game after missed turns, and every territory they held then has "
            "been taken since: there is no seat left to hand over"
        )
    return tuple(held)


def _check(game: Game, reg: Registration, holder: str, email: str) -> None:
    """Refuse a new player whose name or address another seat has, or who has it already."""
    if same_name(holder, reg.played_by) or fold(holder) == fold(reg.played_by):
        raise PbemError(f"{holder} plays the seat {reg.name} already: nothing to change")
    for other in game.registrations:
        if other.name == reg.name:
            continue
        if any(same_name(holder, n) or fold(holder) == fold(n) for n in names(other)):
            raise PbemError(
                f"{holder} is the name of a player of this game ({other.name}'s seat): "
                "give the new player a name of their own"
            )
        if other.email and other.email.lower() == email.lower():
            raise PbemError(
                f"{email} is {other.played_by}'s address: each player needs one of their own"
            )


def names(reg: Registration) -> set[str]:
    """The names a seat is known by: its own, and its holder's."""
    return {reg.name, reg.played_by}


def _with_holder(game: Game, change: SeatChange) -> Game:
    secret = game.holder_secret(change.seat, change.holders, change.holder)
    registrations = tuple(
        replace(  # a person takes the seat over: no bot plays it any more
            r,
            holder=change.holder,
            email=change.email,
            secret=secret,
            language=change.language,
            bot=None,
        )
        if r.name == change.seat
        else r
        for r in game.registrations
    )
    return replace(game, registrations=registrations)


def _remake_report(game: Game, change: SeatChange) -> None:
    """Make the seat's latest report again from the history for its new player (with their
    secret), then write game.toml with them; the other players' reports stay as they are.
    Rendered before anything is written: a broken template changes nothing. A dropped seat's
    report shows it as the next resolution will first make it: back in the game with the
    territories it is given (game.toml keeps the state until then, as every resolution's
    history does)."""
    from pbem.core.engine import seat_taken
    from pbem.core.order_parsing import parse_orders
    from pbem.present import report  # Jinja2 and the reports: only when rendering
    from pbem.records.history import drafted, history_count, read_history, report_dir
    from pbem.records.undone import undone_told

    r = history_count(game.path) - 1
    record = read_history(game.path, r)
    orders = [parse_orders(o.text, game.state.board) for o in record.orders]
    now = clock.parse_instant(record.time, "time") if record.time else None
    undone = undone_told(game.path, drafted(game)) if r else ()
    from pbem.records.away import upcoming

    away = upcoming(game.path, game, now)
    seat, events, shown = change.seat, record.events, game
    if change.returned:
        events = (*record.events, change.event)
        shown = replace(game, state=seat_taken(game.state, change.event))
    from pbem.records.press import of_resolution, press_records

    told = of_resolution(press_records(game.path), r)
    files = report.render_reports(
        shown, r, events, orders=orders, now=now, undone=undone, away=away, press=told
    )
    mine = {name: text for name, text in files.items() if name.split(".")[0] == seat}
    folder = report_dir(game.path, r)
    if folder.is_dir():
        write_files(folder, mine)
    from pbem.records.deadline_changes import pending_deadline  # the new player is not away

    write_game(replace(game, deadline=pending_deadline(game.path, game, game.state.resolution)))


def seat_problem(game: Game) -> str | None:
    """Whether game.toml's seats are the ones the history's changes give (for the audit)."""
    half = unfinished_problem(game)
    if half is not None:
        return half
    last: dict[str, SeatChange] = {}
    for change in seat_changes(game.path):
        reg = game.registration(change.seat)
        if reg is None:
            return (
                f"history/{SEATS}/ records a change of the seat '{quoted(change.seat)}', "
                "which is not in the game"
            )
        if change.previous != (last[change.seat].holder if change.seat in last else change.seat):
            return (
                f"history/{SEATS}/ says {change.holder} took the seat {change.seat} from "
                f"{change.previous}, who did not hold it then"
            )
        last[change.seat] = change
    for seat, change in last.items():
        reg = game.registration(seat)
        assert reg is not None
        secret = game.holder_secret(seat, change.holders, change.holder)
        if reg.holder != change.holder or not hmac.compare_digest(reg.secret, secret):
            return (
                f"the seat {seat}: game file played by {reg.played_by}, history by "
                f"{change.holder} (the last change recorded in history/{SEATS}/), or its "
                "secret is not the one the seed gives"
            )
    return None
