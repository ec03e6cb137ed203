"""A player's registration changed by the moderator: a new address for their mail, or the
language their reports come in.

`pbem config DIR player.ann.email=ann@example.org` writes the new address into game.toml and
records the change in the history, `history/addresses/NNNN-k.toml` (the k-th change while
resolution NNNN was pending): when, whose, the address before and after. Mail goes to the
address in game.toml whenever it is sent, so the next message goes to the new one; `pbem
audit` checks that game.toml's address of every player with a recorded change is the last one
recorded.

`pbem config DIR player.ann.language=it` sets the language of ann's reports, answers and
order files from the next one on (`player.ann.language=` gives her the game's again); it
changes nothing of the play, so only game.toml records it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import tomli_w

from pbem.errors import GameFileError, PbemError
from pbem.languages.i18n import LANGUAGE_NAMES, LANGUAGES, check_language
from pbem.records import clock
from pbem.records.disk import atomic_write, locked
from pbem.records.history import HISTORY, change_files
from pbem.records.opening import read_game
from pbem.records.store import Game, Registration, _load_toml, write_game
from pbem.records.undone import check_not_interrupted
from pbem.terminal import quoted

ADDRESSES = "addresses"
EMAIL = re.compile(r"^[^@\s<>,;\"]+@[^@\s<>,;\"]+$")
_SETTING = re.compile(r"^player\.([^.=]+)\.email=(.*)$", re.DOTALL)
_LANGUAGE = re.compile(r"^player\.([^.=]+)\.language=(.*)$", re.DOTALL)
SETTING_FORM = "player.NAME.email=ADDRESS"
LANGUAGE_FORM = "player.NAME.language=" + "|".join(LANGUAGES)


@dataclass(frozen=True)
class AddressChange:
    """The moderator changed a player's address while `resolution` was pending."""

    resolution: int
    number: int
    time: str
    player: str
    email: str
    previous: str

    def to_dict(self) -> dict[str, object]:
        return {
            "resolution": self.resolution,
            "number": self.number,
            "time": self.time,
            "player": self.player,
            "email": self.email,
            "previous": self.previous,
        }

    def describe(self) -> str:
        new = self.email or "no address"
        return f"{self.player}'s address is now {new} (was {self.previous or 'none'})"


@dataclass(frozen=True)
class LanguageChange:
    """The moderator set the language a player reads (None: the game's)."""

    player: str
    language: str | None
    previous: str | None

    def describe(self) -> str:
        def name(code: str | None) -> str:
            return f"{LANGUAGE_NAMES[code]} ({code})" if code else "the game's"

        return f"{self.player}'s language is now {name(self.language)} (was {name(self.previous)})"


def valid_address(email: str) -> bool:
    """Whether `email` looks like one mailbox's address (user@host, nothing around it)."""
    return bool(EMAIL.match(email))


def parse_setting(assignment: str) -> tuple[str, str] | None:
    """`player.ann.email=ann@example.org` into ("ann", "ann@example.org"); None for any other
    KEY=VALUE."""
    match = _SETTING.match(assignment.strip())
    if match is None:
        return None
    return match.group(1), match.group(2).strip()


def is_player_setting(assignment: str) -> bool:
    """Whether `assignment` sets something of a player (their address or language)."""
    text = assignment.strip()
    return _SETTING.match(text) is not None or _LANGUAGE.match(text) is not None


def addresses_folder(directory: Path) -> Path:
    return directory / HISTORY / ADDRESSES


def address_changes(directory: Path) -> list[AddressChange]:
    """Every recorded change of address, in the order made."""
    out = []
    for path in change_files(addresses_folder(directory)):
        data = _load_toml(path)
        try:
            out.append(
                AddressChange(
                    int(data["resolution"]),
                    int(data["number"]),
                    str(data["time"]),
                    str(data["player"]),
                    str(data["email"]),
                    str(data["previous"]),
                )
            )
        except (KeyError, ValueError, TypeError) as err:
            raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None
    return out


def change_address(directory: Path, player: str, email: str, now: datetime) -> AddressChange:
    """Give `player` the address `email` ("" for none: their reports are then not mailed),
    in game.toml and recorded in the history with the time."""
    if email and not valid_address(email):
        raise PbemError(
            f"'{quoted(email)}' is not an email address: write {SETTING_FORM} "
            "with ADDRESS like ann@example.org"
        )
    with locked(directory):
        check_not_interrupted(directory)
        game = read_game(directory)
        reg = _check(game, player, email)
        change = record_address(game, player, email, reg.email, now)
        write_game(_with_address(game, player, email))
        return change


def record_address(
    game: Game, player: str, email: str, previous: str, now: datetime
) -> AddressChange:
    """Record in the history that `player`'s address becomes `email` (a change of address, or
    a substitute's: pbem.game.seats); game.toml is the caller's to write."""
    r = game.state.resolution
    number = len(change_files(addresses_folder(game.path), r)) + 1
    change = AddressChange(r, number, clock.iso(now), player, email, previous)
    path = addresses_folder(game.path) / f"{r:04d}-{number}.toml"
    atomic_write(path, tomli_w.dumps(change.to_dict()))
    return change


def configure(
    directory: Path, assignments: Sequence[str], now: datetime
) -> list[AddressChange | LanguageChange]:
    """Apply `pbem config` settings (player.NAME.email=ADDRESS, each recorded in the history;
    player.NAME.language=CODE); every one is checked before any is applied."""
    wanted: list[tuple[str, str]] = []
    languages: list[tuple[str, str | None]] = []
    for assignment in assignments:
        language = _LANGUAGE.match(assignment.strip())
        if language is not None:
            code = language.group(2).strip() or None
            if code is not None:
                check_language(code, f"the language for {quoted(language.group(1))}")
            languages.append((language.group(1), code))
            continue
        parsed = parse_setting(assignment)
        if parsed is None:
            raise PbemError(
                f"'{quoted(assignment)}' is not a setting pbem config knows: write {SETTING_FORM} "
                f"or {LANGUAGE_FORM}"
            )
        player, email = parsed
        if email and not valid_address(email):
            raise PbemError(
                f"'{quoted(email)}' is not an email address (for {quoted(player)}): write "
                f"{SETTING_FORM} with ADDRESS like ann@example.org"
            )
        wanted.append(parsed)
    if not wanted and not languages:
        raise PbemError(f"give a setting to change: {SETTING_FORM} or {LANGUAGE_FORM}")
    game = read_game(directory)
    for player, email in wanted:  # every change checked, in turn, before any is made
        _check(game, player, email)
        game = _with_address(game, player, email)
    for player, _code in languages:
        _registration(game, player)
    changes: list[AddressChange | LanguageChange] = [
        change_address(directory, player, email, now) for player, email in wanted
    ]
    return changes + [set_language(directory, player, code) for player, code in languages]


def set_language(directory: Path, player: str, language: str | None) -> LanguageChange:
    """Give `player` their own language (None: the game's) in game.toml, for every report,
    answer and order file from now on."""
    if language is not None:
        check_language(language, f"the language for {quoted(player)}")
    with locked(directory):
        check_not_interrupted(directory)
        game = read_game(directory)
        reg = _registration(game, player)
        registrations = tuple(
            replace(r, language=language) if r.name == player else r for r in game.registrations
        )
        write_game(replace(game, registrations=registrations))
        return LanguageChange(player, language, reg.language)


def _registration(game: Game, player: str) -> Registration:
    reg = game.registration(player)
    if reg is None:
        names = ", ".join(r.name for r in game.registrations)
        raise PbemError(f"there is no player '{quoted(player)}' in this game: it has {names}")
    return reg


def _check(game: Game, player: str, email: str) -> Registration:
    """The player's registration, if `email` can become their address."""
    reg = _registration(game, player)
    taken = next(
        (
            r.name
            for r in game.registrations
            if email and r.name != player and r.email.lower() == email.lower()
        ),
        None,
    )
    if taken is not None:
        raise PbemError(f"{email} is {taken}'s address: each player needs one of their own")
    if reg.email == email:
        raise PbemError(f"{player}'s address is {email or 'none'} already: nothing to change")
    return reg


def _with_address(game: Game, player: str, email: str) -> Game:
    registrations = tuple(
        replace(r, email=email) if r.name == player else r for r in game.registrations
    )
    return replace(game, registrations=registrations)


def address_problem(game: Game) -> str | None:
    """Whether game.toml's addresses are the last ones the history recorded (for the audit)."""
    last: dict[str, str] = {}
    for change in address_changes(game.path):  # a substitute's address is recorded there too
        last[change.player] = change.email
    for player, email in last.items():
        reg = game.registration(player)
        if reg is None:
            return (
                f"history/{ADDRESSES}/ records an address for '{quoted(player)}', who does not play"
            )
        if reg.email != email:
            return (
                f"{player}'s address: game file {reg.email or 'none'}, history "
                f"{email or 'none'} (the last change recorded in history/{ADDRESSES}/)"
            )
    return None
