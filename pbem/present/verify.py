"""A player's own check of a resolution's dice, as the README's audit section explains.

Given the key a report reveals, the previous key (the one before it in the chain, or the
commitment for resolution 0) and the dice as rolled, check that SHA-256(key) is the previous
key and that every die is the next one of the key's public stream. Pure functions; the CLI
reads the values from its arguments, a report's text or its view file.

Reading those values into a record is `dice_record`'s; the names of it that `pbem verify`'s
callers reach here (the record read from a file, a roll written and read, the error) are named
here too, as part of what verifying is given.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pbem.core import dice, missions
from pbem.languages.i18n import _, n_
from pbem.present import view
from pbem.present.dice_record import (
    MAX_ORDER_FILES,
    DiceRecord,
    hex_text,
    in_chain,
    parse_hex_key,
    record_from_arguments,
)
from pbem.present.dice_record import Roll as Roll
from pbem.present.dice_record import VerifyError as VerifyError
from pbem.present.dice_record import format_roll as format_roll
from pbem.present.dice_record import parse_roll as parse_roll
from pbem.present.dice_record import read_record as read_record
from pbem.present.dice_record import record_from_view as record_from_view
from pbem.terminal import quoted


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: whether the key follows, and the first roll that differs."""

    record: DiceRecord
    key_follows: bool
    mismatch: int | None
    expected: Roll | None = None
    chain_end: bytes | None = None
    """The previous key hashed `resolution` times: the commitment, when the chain holds."""

    @property
    def chain_ok(self) -> bool | None:
        """Whether the chain leads back to the commitment; None when it could not be followed."""
        if self.chain_end is None or self.record.commitment is None:
            return None
        return self.chain_end == self.record.commitment

    @property
    def ok(self) -> bool:
        return (
            self.key_follows
            and self.mismatch is None
            and self.chain_ok is not False
            and self.dice_key_ok is not False
        )

    @property
    def dice_key_ok(self) -> bool | None:
        """Whether the dice key the report gives is the one its key and orders give (None: the
        dice come from the key alone, or the report gives none)."""
        record = self.record
        if record.orders is None or record.dice_key is None:
            return None
        return record.dice_key == record.stream_key

    def lines(self) -> list[str]:
        """What `pbem verify` prints, one finding a line."""
        record = self.record
        which = ""
        if record.resolution is not None:
            which = _("resolution %(resolution)s: ", resolution=record.resolution)
        if record.played is not None and record.resolution is not None:
            which = _(
                "%(played)s (resolution %(resolution)s): ",
                played=_played_name(record.played),
                resolution=record.resolution,
            )
        out = [
            which + _("key OK: SHA-256(key) = previous key")
            if self.key_follows
            else which
            + _(
                "key WRONG: SHA-256(key) is %(hash)s, not the previous key %(previous)s",
                hash=_sha(record.key),
                previous=record.previous.hex(),
            )
        ]
        if record.resolution is not None:  # from a report: follow the chain
            out.append(self._chain_line())
        out += self._orders_lines()
        count = len(record.rolls)
        if self.mismatch is None:
            out.append(
                _("no dice were rolled")
                if count == 0
                else n_(
                    "%(num)s roll, every die matches", "%(num)s rolls, every die matches", count
                )
            )
        else:
            given = format_roll(record.rolls[self.mismatch])
            expected = format_roll(self.expected) if self.expected else "?"
            out.append(
                _(
                    "roll %(number)s of %(count)s does NOT match: the report has %(given)s, the "
                    "key gives %(expected)s",
                    number=self.mismatch + 1,
                    count=count,
                    given=given,
                    expected=expected,
                )
            )
        return out

    def _orders_lines(self) -> list[str]:
        record = self.record
        if record.orders is None:
            return []
        files = len(record.orders)
        names = ", ".join(quoted(p) for p, _digest in record.orders if p)
        which = n_("%(num)s order file", "%(num)s order files", files) + (
            f" ({names})" if names else ""
        )
        if self.dice_key_ok is False:
            out = [
                _(
                    "dice key WRONG: the key and the digests of the %(files)s give %(key)s, not "
                    "the dice key the report gives",
                    files=which,
                    key=record.stream_key.hex(),
                )
            ]
        else:
            out = [
                _(
                    'dice key OK: HMAC-SHA256(key, "pbem/orders/" and the digest of the %(files)s)',
                    files=which,
                )
            ]
        if record.again is not None:
            out.append(
                _(
                    "played again after an undo with other orders: the salt from the card key "
                    "is checked when the game ends and the card key is revealed"
                )
            )
        return out

    def _chain_line(self) -> str:
        record = self.record
        if self.chain_ok is None or self.chain_end is None or record.commitment is None:
            return _("chain not followed: this report does not give the commitment")
        r = record.resolution or 0
        if self.chain_ok:
            return n_(
                "chain OK: the previous key hashed %(num)s time (the resolution number) gives "
                "the commitment %(commitment)s, the same in every report: this key was fixed "
                "before the first die of the game",
                "chain OK: the previous key hashed %(num)s times (the resolution number) gives "
                "the commitment %(commitment)s, the same in every report: this key was fixed "
                "before the first die of the game",
                r,
                commitment=record.commitment.hex(),
            )
        return n_(
            "chain BROKEN: the previous key hashed %(num)s time (the resolution number) gives "
            "%(end)s, not the commitment %(commitment)s: these keys are not the ones committed to",
            "chain BROKEN: the previous key hashed %(num)s times (the resolution number) gives "
            "%(end)s, not the commitment %(commitment)s: these keys are not the ones committed to",
            r,
            end=self.chain_end.hex(),
            commitment=record.commitment.hex(),
        )


def _played_name(label: str) -> str:
    """What a view file's dice section says the resolution played ("turn 13", "the deal": in
    English, as `Played.label` writes it), in the language spoken."""
    found = re.fullmatch(r"turn (\d+)", label)
    if found:
        return _("turn %(turn)s", turn=int(found.group(1)))
    named = {"the deal": _("the deal"), "the draft": _("the draft")}
    named["the setup turn"] = _("the setup turn")
    return named.get(label, label)


def _mission_told(card: str) -> str:
    """A mission card ("continents:Europe,Australia,+1") as the reader reads it; a card that
    is not one stays as written, quoted."""
    from pbem.present.missions import goal

    try:
        return goal(missions.Mission.parse(card), own=False)
    except (ValueError, KeyError, IndexError):
        return quoted(card)


def _sha(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()


def verify(record: DiceRecord) -> Verdict:
    """Check the key against the previous key, and every die against the key's stream."""
    follows = dice.key_follows(record.key, record.previous)
    index = dice.check_rolls(record.stream_key, record.rolls)
    expected: Roll | None = None
    if index is not None:
        stream = dice.Stream.public(record.stream_key)
        for attacker, defender in record.rolls[: index + 1]:  # the last is the one that differs
            expected = (stream.dice(len(attacker)), stream.dice(len(defender)))
    end = None
    if record.commitment is not None and record.resolution is not None:
        end = dice.hash_back(record.previous, record.resolution)
    return Verdict(record, follows, index, expected, end)


class ArgumentsError(VerifyError):
    """The command was given neither a report nor both keys, or both."""


@dataclass(frozen=True)
class Given:
    """What a `verify` command was given: a report (and the player's own order file), or the
    keys, the rolls and, for dice that follow the orders, the order files' digests and salt."""

    key: str | None = None
    previous_key: str | None = None
    rolls: Sequence[str] = ()
    report: Path | None = None
    orders: Path | None = None
    digests: Sequence[str] = ()
    again: str | None = None
    previous: Path | None = None
    """In a game with fog: the view file of the report before `report`."""


def choose_record(given: Given) -> DiceRecord:
    """The record a `verify` command was given: from --report, or from KEY PREVIOUS_KEY."""
    if given.report is not None:
        if given.key or given.previous_key or given.rolls or given.digests or given.again:
            raise ArgumentsError("give either --report or KEY PREVIOUS_KEY --dice ...")
        return read_record(given.report)
    if given.orders is not None:
        raise ArgumentsError("--orders checks your order file against a report: give --report")
    if given.again and not given.digests:
        raise ArgumentsError("--again goes with the order files' --digest")
    if len(given.digests) > MAX_ORDER_FILES:
        raise ArgumentsError(f"a resolution has at most {MAX_ORDER_FILES} order files")
    if given.key and given.previous_key:
        record = record_from_arguments(given.key, given.previous_key, given.rolls)
        if not given.digests:
            return record
        return replace(
            record,
            orders=tuple(("", parse_hex_key(d, "order file digest")) for d in given.digests),
            again=parse_hex_key(given.again, "salt") if given.again else None,
        )
    raise ArgumentsError("give KEY and PREVIOUS_KEY (with --dice), or --report FILE")


@dataclass(frozen=True)
class MissionDeal:
    """The secret missions a final view file reveals, and what the card key deals."""

    hidden_key: bytes
    hidden_commitment: bytes | None
    seats: tuple[str, ...]
    revealed: tuple[str, ...]

    @property
    def dealt(self) -> tuple[str, ...]:
        return missions.deal(self.seats, self.hidden_key)

    @property
    def key_ok(self) -> bool:
        return self.hidden_commitment is None or dice.key_follows(
            self.hidden_key, self.hidden_commitment
        )

    @property
    def ok(self) -> bool:
        return self.key_ok and self.dealt == self.revealed

    def lines(self) -> list[str]:
        """What `pbem verify` prints about the missions."""
        out = []
        if self.hidden_commitment is None:
            out.append(_("card key: no card commitment in this file to check it against"))
        elif self.key_ok:
            out.append(_("card key OK: SHA-256(card key) = card commitment"))
        else:
            out.append(_("card key WRONG: SHA-256(card key) is not the card commitment"))
        for name, shown, dealt in zip(self.seats, self.revealed, self.dealt, strict=True):
            if shown == dealt:
                out.append(
                    _(
                        "mission of %(player)s OK: %(mission)s",
                        player=quoted(name),
                        mission=_mission_told(shown),
                    )
                )
            else:
                out.append(
                    _(
                        "mission of %(player)s does NOT match: revealed %(shown)s, dealt %(dealt)s",
                        player=quoted(name),
                        shown=_mission_told(shown),
                        dealt=_mission_told(dealt),
                    )
                )
        return out


def mission_deal(data: Mapping[str, Any]) -> MissionDeal | None:
    """The mission deal to check in a view file: None unless the game is over and played
    with missions (before the end neither the missions nor the card key are shown)."""
    section = data.get("dice")
    players = data.get("players")
    if not isinstance(section, Mapping) or "hidden_key" not in section:
        return None
    if not isinstance(players, list) or not any(
        isinstance(p, Mapping) and "mission" in p for p in players
    ):
        return None
    if not missions.MIN_PLAYERS <= len(players) <= missions.MAX_PLAYERS:
        raise VerifyError("the view file's missions are not those of 3 to 6 players")
    try:
        seated = sorted(players, key=lambda p: int(p["seat"]))
        commitment = section.get("hidden_commitment")
        return MissionDeal(
            parse_hex_key(str(section["hidden_key"]), "card key"),
            parse_hex_key(str(commitment), "card commitment") if commitment else None,
            tuple(str(p["name"]) for p in seated),
            tuple(str(p["mission"]["card"]) for p in seated),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise VerifyError(f"the view file's missions are incomplete ({err!r})") from None


def read_mission_deal(path: Path) -> MissionDeal | None:
    """The mission deal of a saved view file (None for a report's text, or before the end)."""
    text = view.read_text(path)
    if not text.lstrip().startswith("{"):
        return None
    data = view.parse_json(text, path)
    return mission_deal(data) if isinstance(data, Mapping) else None


def verify_lines(given: Given) -> tuple[list[str], bool]:
    """What `pbem verify` prints and whether everything checks out: the key, the chain, the
    dice, the player's own order file among those the dice come from and, in a final view,
    the mission deal; in the language of the view file given (its player's), else the one
    spoken. ArgumentsError for arguments that do not go together."""
    from pbem.languages.i18n import current, language, speaking

    code = current().code
    if given.report is not None and given.report.suffix == ".json":
        code = view.view_language(given.report)
    with speaking(language(code)):
        return _verify_lines(given)


def _verify_lines(given: Given) -> tuple[list[str], bool]:
    if given.report is not None and given.report.suffix == ".json":
        from pbem.present import fog_verify

        data = view.parse_json(view.read_text(given.report), given.report)
        if isinstance(data, Mapping) and fog_verify.is_fogged(data):
            return _fog_verify_lines(given, data)
    if given.previous is not None:
        raise ArgumentsError("--previous goes with the --report of a game with fog")
    record = choose_record(given)
    verdict = verify(record)
    lines = verdict.lines()
    report = given.report
    own = None
    if given.orders is not None and report is not None:
        own = own_order_file(record, given.orders, report)
        lines.append(own[0])
    deal = read_mission_deal(report) if report is not None else None
    if deal is not None:
        lines += deal.lines()
    return lines, verdict.ok and (deal is None or deal.ok) and (own is None or own[1])


def _fog_verify_lines(given: Given, data: Mapping[str, Any]) -> tuple[list[str], bool]:
    """`pbem verify --report` of a fog game's view file: its battles, with the report before
    it (`--previous`) whose commitment they must lead to, and the player's own order file."""
    from pbem.present import fog_verify

    assert given.report is not None
    if given.key or given.previous_key or given.rolls or given.digests or given.again:
        raise ArgumentsError("give either --report or KEY PREVIOUS_KEY --dice ...")
    lines, ok = fog_verify.fog_lines(data)
    section = data["dice"]
    if "key" in section and "previous_key" in section:  # (the fog lifted: the chain, as without)
        resolution = section.get("resolution")
        if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution < 0:
            raise VerifyError("the view file's dice section gives no resolution number")
        record = DiceRecord(
            parse_hex_key(hex_text(section["key"]), "key"),
            parse_hex_key(hex_text(section["previous_key"]), "previous key"),
            (),
            in_chain(resolution),
            parse_hex_key(data["commitment"], "commitment")
            if isinstance(data.get("commitment"), str)
            else None,
        )
        verdict = verify(record)
        lines[:0] = verdict.lines()[:2]  # the key and the chain, not the one stream of rolls
        ok = ok and verdict.key_follows and verdict.chain_ok is not False
        deal = read_mission_deal(given.report)
        if deal is not None:
            lines += deal.lines()
            ok = ok and deal.ok
    if given.previous is not None:
        before = view.parse_json(view.read_text(given.previous), given.previous)
        line, same = fog_verify.previous_line(data, before)
        lines.append(line)
        ok = ok and same
    if given.orders is not None:
        files = data["dice"].get("orders")
        listed = (
            tuple(
                (str(f["player"]), parse_hex_key(hex_text(f["digest"]), "order file digest"))
                for f in files
            )
            if isinstance(files, list)
            else None
        )
        record = DiceRecord(b"", b"", (), orders=listed)
        line, own = own_order_file(record, given.orders, given.report)
        lines.append(line)
        ok = ok and own
    return lines, ok


def own_order_file(record: DiceRecord, path: Path, report: Path) -> tuple[str, bool]:
    """Whether the order file a player sent is, digest for digest, one of those the report
    says the dice come from: the line that says so, and the verdict."""
    from pbem.core.board import board_of
    from pbem.core.order_parsing import between_cuts, parse_orders
    from pbem.errors import BoardError, OrderError

    if record.orders is None:
        return _("order file: this resolution's dice come from its key alone, not the orders"), True
    text = view.read_text(path)
    board, own = "classic", None
    if report.suffix == ".json":
        data = view.parse_json(view.read_text(report), report)
        if isinstance(data, Mapping) and isinstance(data.get("board"), str):
            board = data["board"]
            own = data.get("board_file") if isinstance(data.get("board_file"), str) else None
    try:
        orders = parse_orders(between_cuts(text), board_of(board, own, f"{report} board_file"))
    except (OrderError, ValueError, BoardError) as err:
        hint = (
            "; a text report does not say its board, so the classic one is taken: for a game "
            "on another board, give its view file (NAME.view.json) as the report"
            if report.suffix != ".json"
            else ""
        )
        raise VerifyError(f"{path} cannot be read as an order file: {err}{hint}") from None
    digest = dice.order_file_digest(orders.canonical())
    listed = dict(record.orders).get(orders.player)
    who = quoted(orders.player)
    if listed is None:
        return (
            _(
                "order file of %(player)s is NOT among those this resolution's dice come from",
                player=who,
            ),
            False,
        )
    if listed != digest:
        return (
            _(
                "order file of %(player)s does NOT match: its digest is %(digest)s, the report "
                "gives %(listed)s (other orders than these were played)",
                player=who,
                digest=digest.hex(),
                listed=listed.hex(),
            )
        ), False
    return _("order file of %(player)s OK: the dice come from these orders", player=who), True
