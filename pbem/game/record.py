"""A game's public record (docs/publish.md): its history without the players' secrets and
addresses, with the keys that check every die, card and mission, in a folder that anyone can
audit with pbem (`pbem audit RECORD`) or check with the player's kit (`verify` of its view).

Only a finished game has one: while a game runs, its keys of turns not yet played and its
card key are what keeps the dice and the cards unforeseeable. The record reveals those keys,
never the seed, from which every player's secret follows; and once it is out, the game can no
longer be undone (`published`), since its dice could then be foreseen by anyone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import tomli_w

from pbem.core.order_parsing import parse_orders
from pbem.core.state import Phase
from pbem.errors import GameFileError, PbemError
from pbem.files import link_named, link_sentence
from pbem.game.audit import final_view
from pbem.records import away, deadline_changes, seat_changes, undone
from pbem.records.clock import iso
from pbem.records.disk import RECORD_FILE, atomic_write, locked, replace_folder
from pbem.records.history import (
    HISTORY,
    HistoryRecord,
    history_count,
    history_path,
    history_text,
    read_history,
    read_history_file,
)
from pbem.records.opening import read_game
from pbem.records.published import PUBLISHED, VIEW_FILE
from pbem.records.store import (
    BOARD_FILE,
    RECORD_FORMAT,
    WITHHELD,
    Game,
    _load_toml,
    game_document,
    load_game,
)

KNOWN_BOTS = ("reference",)
"""The bots a record names; another bot is a command line of the moderator's machine."""


@dataclass(frozen=True)
class Published:
    """What `publish_record` wrote."""

    game: str
    out: Path
    resolutions: int
    files: int


def publish_record(directory: Path, out: Path, now: datetime) -> Published:
    """Write the public record of the finished game in `directory` to the folder `out`
    (replacing an earlier record of the same game there), after an audit of the game; the
    game is marked published. A running game is refused, saying why."""
    game, files = prepare_record(directory, now, out)
    replace_folder(
        out, files, lambda folder: _record_of(folder, game.name), f"the record of {game.name}"
    )
    return Published(game.name, out, game.state.resolution, len(files))


def prepare_record(directory: Path, now: datetime, where: Path) -> tuple[Game, dict[str, str]]:
    """The finished game in `directory` and its public record's files, by path inside it,
    once the game passed its audit; the game is marked published (to `where`) before the
    record leaves this function, so that it is never undone once its keys may be out."""
    from pbem.game.audit import audit_game

    with locked(directory):
        game = read_game(directory)
        if game.state.phase is not Phase.OVER:
            raise PbemError(
                f"{game.name} is still being played: its public record would reveal the keys of "
                "turns not yet played and the card key, so that anyone could foresee the dice "
                "and see every hand; it is published when the game is over (its page shows "
                "what every player sees meanwhile)"
            )
        audit_game(directory)
        files = record_files(game, now)
        if not (directory / PUBLISHED).is_file():  # (the first publication is the one kept)
            atomic_write(
                directory / PUBLISHED,
                tomli_w.dumps(
                    {
                        "published": iso(now),
                        "resolutions": game.state.resolution,
                        "record": str(where.resolve()),
                    }
                ),
            )
    return game, files


def record_zip(files: Mapping[str, str], folder: str) -> bytes:
    """The record's files as a zip archive of the folder `folder`, the same bytes for the
    same files (names in order, no times but the archive format's first day)."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(f"{folder}/{path}", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[path].encode("utf-8"))
    return buffer.getvalue()


def record_files(game: Game, now: datetime) -> dict[str, str]:
    """The files of the game's public record, by path inside it."""

    count = history_count(game.path)
    last = count - 1
    files: dict[str, str] = {RECORD_FILE: _record_document(game, now, last)}
    if (game.path / BOARD_FILE).is_file():
        files[BOARD_FILE] = (game.path / BOARD_FILE).read_text(encoding="utf-8")
    for r in range(count):
        files[f"{HISTORY}/{r:04d}.toml"] = history_text(_withheld(game, read_history(game.path, r)))
    for folder in (deadline_changes.changes_folder(game.path), away.vacations_folder(game.path)):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
            files[path.relative_to(game.path).as_posix()] = path.read_text(encoding="utf-8")
    for path in sorted(seat_changes.seats_folder(game.path).glob("*.toml")):
        change = seat_changes.SeatChange.from_dict(_load_toml(path))
        withheld = replace(change, email="", previous_email="", previous_secret=WITHHELD)
        files[path.relative_to(game.path).as_posix()] = tomli_w.dumps(withheld.to_dict())
    for u in undone.undo_records(game.path):
        folder = undone.undone_folder(game.path, u)
        kept = folder / history_path(game.path, u.resolution).name
        where = folder.relative_to(game.path).as_posix()
        files[f"{where}/{undone.RECORD}"] = (folder / undone.RECORD).read_text(encoding="utf-8")
        files[f"{where}/{kept.name}"] = history_text(_withheld(game, read_history_file(kept)))
    files[VIEW_FILE] = final_view(game, last)
    return files


def _record_document(game: Game, now: datetime, last: int) -> str:
    doc = game_document(game)
    doc.pop("seed")
    doc.pop("mail", None)
    for player in doc["players"]:
        player.pop("email", None)
        player["secret"] = WITHHELD
        if player.get("bot") not in (None, *KNOWN_BOTS):
            del player["bot"]
    keys = game.randomness(last)
    doc["record"] = {
        "format": RECORD_FORMAT,
        "published": iso(now),
        "resolutions": last + 1,
        "last_key": keys.public.hex(),
        "hidden_key": keys.hidden.hex(),
    }
    return tomli_w.dumps(doc)


def _withheld(game: Game, record: HistoryRecord) -> HistoryRecord:
    """A history record with each order file written back with the secret withheld (what the
    player wrote besides the orders, their comments, is not part of the record either)."""
    board = game.state.board
    orders = tuple(
        replace(o, text=replace(parse_orders(o.text, board), secret=WITHHELD).to_toml())
        for o in record.orders
    )
    return replace(record, orders=orders)


def _record_of(folder: Path, name: str) -> set[str] | None:
    """The files of the public record of the game `name` in `folder` (they are the record's
    own: record.toml, view.json, board.toml and what is under history/), or None when
    `folder` holds no record of that game."""
    try:
        data: Any = _load_toml(folder / RECORD_FILE)
    except GameFileError:
        return None
    if not (isinstance(data, dict) and data.get("game") == name and "record" in data):
        return None
    from pbem.records.disk import files_in

    return {
        path
        for path in files_in(folder)
        if path in (RECORD_FILE, VIEW_FILE, BOARD_FILE) or path.startswith(f"{HISTORY}/")
    }


def check_against_report(directory: Path, view_file: Path) -> str:
    """A player's report (its view file) of the game in `directory`, a game or its public
    record, checked against what the history holds for the same resolution: the game, the
    commitment, the key, every roll, the order files' digests and, where the report shows the
    whole board, every territory's owner and armies. Raises AuditError naming what differs;
    says what agreed."""
    from pbem.core.events import DiceKeyed
    from pbem.errors import AuditError
    from pbem.present.view import ViewError, load_json
    from pbem.records.replay import replayed

    game = load_game(directory, record=True)
    where = view_file.name
    link = link_named(directory, view_file)  # a report of an older folder of the game's own
    if link is not None:
        raise GameFileError(link_sentence(link))
    try:
        view = load_json(view_file)
        dice = view["dice"]
        r = int(dice["resolution"])
    except (ViewError, KeyError, TypeError, ValueError) as err:
        raise AuditError(f"{where} is not the view file of a report ({err})") from None
    if view.get("game") != game.name:
        raise AuditError(f"{where} is a report of another game ({view.get('game')!r})")
    if dice.get("commitment") != game.commitment:
        raise AuditError(
            f"{where}: its commitment is not the record's: the record's keys are not the ones "
            "this game's dice came from"
        )
    count = history_count(directory)
    if not 0 <= r < count:
        raise AuditError(f"{where} is a report of resolution {r}; the history ends at {count - 1}")
    history = read_history(directory, r)
    differ = []
    if "key" in dice and dice["key"] != history.key:
        differ.append("the key")
    rolls = [
        {"from": x["from"], "to": x["to"], "attacker": x["attacker"], "defender": x["defender"]}
        for x in history.rolls()
    ]
    if "rolls" in dice and dice["rolls"] != rolls:
        differ.append("the rolls")
    keyed = next((e for e in history.events if isinstance(e, DiceKeyed)), None)
    if "orders" in dice:
        told = [o.get("digest") for o in dice["orders"] if isinstance(o, dict)]
        if keyed is None or list(keyed.digests) != told:
            differ.append("the order files' digests")
    board = view.get("territories")
    shown = isinstance(board, dict) and all(
        isinstance(t, dict) and t.get("owner") is not None and t.get("armies") is not None
        for t in board.values()
    )
    if shown and not differ:  # (a history that differs already need not be replayed)
        assert isinstance(board, dict)
        state = replayed(game, r + 1)[r][1]
        if any(
            [board[t]["owner"], board[t]["armies"]] != [h.owner, h.armies]
            for t, h in state.territories.items()
            if t in board
        ) or set(board) != set(state.territories):
            differ.append("the board")
    if differ:
        raise AuditError(
            f"{where}: the history differs from this report in {', '.join(differ)} of "
            f"resolution {r}: it is not the game this report was sent from"
        )
    agreed = ["the commitment", "the key" if "key" in dice else "", f"{len(rolls)} rolls"]
    if "orders" in dice:
        agreed.append("the order files' digests")
    if shown:
        agreed.append("the board")
    said = ", ".join(a for a in agreed if a)
    return f"{where}: resolution {r} ({dice.get('played', '?')}) agrees with it: {said}"


def check_commitment(directory: Path, commitment: str) -> str:
    """The commitment of the game in `directory` (a game or its record) against the one a
    player's first report announced; AuditError when they differ."""
    from pbem.errors import AuditError

    found = load_game(directory, record=True).commitment
    if commitment.strip().lower() != found:
        raise AuditError(
            f"the game's commitment is {found}, not {commitment.strip()[:64]}: its keys are not "
            "the ones that report announced"
        )
    return f"commitment OK: {found}, the one the first report announced"
