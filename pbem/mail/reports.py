"""A player's report after a resolution as a message: the text report with its HTML page as an
alternative, the next order file and the view as attachments."""

from __future__ import annotations

import hashlib
import html
import io
import json
from collections.abc import Sequence
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from pbem.core.state import team_name
from pbem.errors import GameFileError
from pbem.files import FileProblem, files_in, read_regular, read_text
from pbem.kit import KIT_NAME
from pbem.languages import i18n
from pbem.mail.found import normal, toml_data
from pbem.mail.records import address, domain, outgoing, slug
from pbem.mail.told import speaking
from pbem.present import report
from pbem.records.history import REPORTS, played_in, read_history, report_dir
from pbem.records.store import Game
from pbem.records.undone import undo_records

ORDERS_SUFFIX = ".orders.toml"


def report_subject(view: dict[str, Any] | None, player: str, after: str) -> str:
    """`turn 13: your move`, `turn 13: ben's move` for the others, or what else the report is
    (game over, out of the game), in the language of the view's player; without a view,
    `report after turn 12` (`after`: what the report follows, "after turn 12",
    `pbem.languages.numbering.Played.after`)."""
    if view is None:
        return i18n.current()._("report %(after)s", after=after)
    code = view.get("language")
    lang = i18n.language(code if code in i18n.LANGUAGES else i18n.DEFAULT)
    if view.get("phase") == "over":
        team = view.get("winners")  # (a team game's)
        if isinstance(team, list):
            return lang._("game over: %(team)s won together", team=team_name(tuple(map(str, team))))
        return lang._("game over: %(winner)s won", winner=str(view.get("winner")))
    me: dict[str, Any] = next((p for p in view.get("players", []) if p.get("name") == player), {})
    if not me.get("alive", True):
        return lang._("report: you are out of the game")
    awaiting = view.get("awaiting", [])
    turn = str(view.get("turn"))
    if player in awaiting:
        return lang._("turn %(turn)s: your move", turn=turn)
    if len(awaiting) == 1:
        return lang._("turn %(turn)s: %(player)s's move", turn=turn, player=str(awaiting[0]))
    return lang._("turn %(turn)s: report", turn=turn)


def build_report(
    game: Game,
    resolution: int,
    player: str,
    sender: str,
    bcc: str | None = None,
    now: datetime | None = None,
    kit: bytes | None = None,
) -> EmailMessage | None:
    """One player's report after a resolution as a message; None without a report. `kit`,
    the player's kit (pbem-player.pyz), is attached when given."""
    folder = report_dir(game.path, resolution)
    text_path = folder / f"{player}.txt"
    reg = game.registration(player)
    if reg is None or not text_path.exists():
        return None
    text = _read(text_path)
    html_path = folder / f"{player}.html"
    page = (
        _read(html_path)
        if html_path.exists()
        else f"<!doctype html>\n<html><body><pre>{html.escape(text)}</pre></body></html>\n"
    )
    view_path = folder / f"{player}.view.json"
    view_bytes = _read_bytes(view_path) if view_path.exists() else None
    view = json.loads(view_bytes) if view_bytes else None
    orders_path = folder / f"{player}.orders.toml"
    orders = _read(orders_path) if orders_path.exists() else None
    state = game.state
    latest = resolution == state.resolution - 1
    if orders is None and latest and player in state.awaiting() and state.player(player).alive:
        orders = report.order_skeleton(state, player, reg.secret)

    msg = outgoing(
        sender,
        address(reg.email),
        f"[{game.name}] {report_subject(view, player, _played(game, resolution))}",
        game.name,
        "auto-generated",
        now or datetime.now().astimezone(),
    )
    if bcc:
        msg["Bcc"] = bcc
    msg["Reply-To"] = sender
    msg["Message-ID"] = (
        f"<pbem.{slug(game.name)}.r{resolution:04d}{remade(game, resolution)}.{player}"
        f"{reg.stint.replace('/', '.')}@{domain(sender)}>"
    )
    if kit is not None:
        with i18n.speaking(i18n.language(game.language_of(player))):
            note = kit_note(player)
        text = f"{text.rstrip()}\n\n{note}\n"
        page = page.replace("</body>", f"<p>{html.escape(note)}</p>\n</body>", 1)
    msg.set_content(text, cte="quoted-printable")
    msg.add_alternative(page, subtype="html", cte="quoted-printable")
    if orders is not None:
        msg.add_attachment(
            orders, subtype="plain", filename=f"{player}.orders.toml", cte="quoted-printable"
        )
    if view_bytes is not None:
        msg.add_attachment(
            view_bytes, maintype="application", subtype="json", filename=f"{player}.view.json"
        )
    if kit is not None:
        msg.add_attachment(kit, maintype="application", subtype="zip", filename=KIT_NAME)
    return msg


def _read_bytes(path: Path) -> bytes:
    """A report file's bytes; one that is not a regular file (a FIFO) is refused unopened, and
    so is a symbolic link (its folder was checked for links by `report_dir`; this holds for a
    link made since)."""
    try:
        return read_regular(path, follow=False)
    except FileProblem as err:
        raise GameFileError(f"cannot read {path}: {err}") from None


def _read(path: Path) -> str:
    """A report file's text, line ends read as Python reads text."""
    return io.TextIOWrapper(io.BytesIO(_read_bytes(path)), encoding="utf-8").read()


def kit_note(player: str) -> str:
    """What the attached kit is, for the mail that carries it, in the language spoken."""
    return i18n._(
        "Attached: %(kit)s, the player's kit. To check your orders before you send them, run it "
        "with any Python 3.10 or newer, nothing to install: %(command)s",
        kit=KIT_NAME,
        command=f"python3 {KIT_NAME} check --view {player}.view.json {player}.orders.toml",
    )


def _played(game: Game, resolution: int) -> str:
    """What a report of a resolution follows, as players say it ("after turn 12"), from its
    history."""
    return played_in(game, resolution, read_history(game.path, resolution).turn).after()


def remade(game: Game, resolution: int, undone: Sequence[int] | None = None) -> str:
    """`.a2` for a resolution made again after its first was undone, `.a3` after a second
    undo..., "" for one made once: what tells the reports of each attempt apart (their
    Message-ID, their name in the outbox, their record in the mail state), so that the reports
    of a resolution made again are new messages and are sent. `undone`: the resolutions of
    the game's undo records, when the caller has them."""
    if undone is None:
        undone = [u.resolution for u in undo_records(game.path)]
    again = sum(1 for r in undone if r == resolution)
    return f".a{again + 1}" if again else ""


def ready_files(game: Game) -> dict[str, tuple[str, dict[str, Any] | None]]:
    """Every ready order file pbem has mailed in the game (each report's `NAME.orders.toml`,
    and the file each awaited player's report is given now when it has none), by its path in
    the game: its text without the line-end differences mail makes, and its data."""
    out: dict[str, tuple[str, dict[str, Any] | None]] = {}
    folder = game.path / REPORTS
    # every report folder, old ones too: a symbolic link anywhere in reports/ is refused
    # (GameFileError, which stops the fetch of this game), as the check of every command
    # refuses one in the newest folders
    for path in sorted(files_in(game.path, folder)):
        if path.parent.parent != folder or not path.name.endswith(ORDERS_SUFFIX):
            continue
        try:
            text = read_text(path, 65536, follow=False)
        except (FileProblem, UnicodeError):
            continue
        out[f"{path.parent.name}/{path.name}"] = (normal(text), toml_data(text))
    state = game.state
    for reg in game.registrations:
        if reg.name in state.awaiting() and state.player(reg.name).alive:
            text = report.order_skeleton(state, reg.name, reg.secret)
            out.setdefault(f"now/{reg.name}{ORDERS_SUFFIX}", (normal(text), toml_data(text)))
    return out


def latest_report(game: Game, player: str) -> int | None:
    """The resolution of the latest report the player has, or None."""
    for resolution in range(game.state.resolution - 1, -1, -1):
        if (report_dir(game.path, resolution) / f"{player}.txt").is_file():
            return resolution
    return None


def resent_report(
    game: Game,
    player: str,
    sender: str,
    now: datetime,
    key: str,
    resolution: int | None = None,
) -> tuple[str, EmailMessage] | None:
    """The player's report after `resolution` (default: their latest) as a new message (its
    own Message-ID, "resent" in its subject), named for the outbox after `key` (what asked
    for it); None without such a report."""
    if resolution is None:
        resolution = latest_report(game, player)
    if resolution is None:
        return None
    msg = build_report(game, resolution, player, sender, now=now)
    if msg is None:
        return None
    digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]
    lang = speaking(game, player)
    subject = str(msg["Subject"]).removeprefix(f"[{game.name}] ")
    del msg["Subject"]
    msg["Subject"] = f"[{game.name}] " + lang._("resent: %(subject)s", subject=subject)
    del msg["Message-ID"]
    msg["Message-ID"] = (
        f"<pbem.{slug(game.name)}.r{resolution:04d}.resent.{digest}.{player}@{domain(sender)}>"
    )
    return f"resend-{digest}.eml", msg
