"""The club's pages: `pbem publish ROOT OUT` (docs/publish.md). Reads every game of a folder of
games, renders the pages through pbem.present.site, and writes the whole site into OUT at once,
with the public record of every finished game to download.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import tomli_w

from pbem.core.state import Phase
from pbem.errors import AuditError, GameFileError, PbemError
from pbem.game.record import prepare_record, record_zip
from pbem.languages import i18n
from pbem.languages.i18n import _
from pbem.records.clock import iso
from pbem.records.disk import RECORD_FILE, replace_folder
from pbem.records.history import played_in
from pbem.records.opening import read_game
from pbem.records.replay import replayed
from pbem.records.root import find_games, game_name
from pbem.records.store import Game, _load_toml

SITE_FILE = "pbem-site.toml"
"""In the site's folder: what made it (so that publishing again may replace it)."""
SITE_FORMAT = 1


@dataclass(frozen=True)
class SiteSummary:
    """What `publish_site` wrote, and the games it could not show (with why)."""

    out: Path
    games: int
    records: int
    problems: tuple[str, ...] = field(default=())

    def lines(self) -> list[str]:
        """What `pbem publish` prints."""
        head = (
            f"Published the club's pages of {self.games} game{'s' * (self.games != 1)} in "
            f"{self.out} ({self.records} public record{'s' * (self.records != 1)} of finished "
            f"games); open {self.out / 'index.html'}"
        )
        return [head, *self.problems]


def folder_of(name: str) -> str:
    """The folder of a game's pages: its name where that is a plain file name, else its name
    made one (every other character a "-") with a few characters of its own after it."""
    plain = re.sub(r"[^A-Za-z0-9._-]", "-", name).strip(".") or "game"
    if plain == name:
        return name
    import hashlib

    return f"{plain}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def publish_site(
    root: Path, out: Path, now: datetime, language: str = i18n.DEFAULT, club: str | None = None
) -> SiteSummary:
    """Write the club's pages of every game in `root` into the folder `out` (replacing the
    pages an earlier run wrote there), in `language`. A game that cannot be read is left out
    and named in the summary; the others are shown."""
    from pbem.present.report import environment
    from pbem.present.site import game_entry, index_page

    if (root / RECORD_FILE).is_file():
        raise PbemError(
            f"{root} is the public record of a game: 'pbem audit {root}' checks it; publish a "
            "game or a folder of games"
        )
    games = find_games(root)
    if not games:
        raise PbemError(f"there is no game in {root}: no folder in it has a game.toml")
    where, home = out.resolve(), root.resolve()
    if where == home or where in home.parents:
        raise PbemError(
            f"{out} holds the games themselves: give the club's pages a folder of their own "
            "(for example beside the games)"
        )
    title = club or root.resolve().name
    env = environment(None, language)
    files: dict[str, str | bytes] = {}
    entries: list[dict[str, Any]] = []
    problems: list[str] = []
    records = 0
    taken: dict[str, Path] = {}  # the games' folders of the site, as names are compared
    with i18n.speaking(i18n.language(language)):
        for directory in games:
            try:
                game = read_game(directory)
                folder = folder_of(game.name)
                other = taken.setdefault(folder.casefold(), directory)
                if other != directory:
                    raise PbemError(
                        f"its pages would be those of the game in {other} (games/{folder}/ of "
                        "the site); give each game a name of its own"
                    )
                written, record = _game(env, title, game, folder, now, out, problems)
            except (PbemError, OSError) as err:
                problems.append(f"{game_name(directory)}: left out ({err})")
                continue
            except (ValueError, TypeError, KeyError, AttributeError, IndexError) as err:
                problems.append(
                    f"{game_name(directory)}: left out (its history does not replay: {err}; "
                    "run 'pbem audit' on it)"
                )
                continue
            records += record
            files.update(written)
            over = game.state.phase is Phase.OVER
            entry = game_entry(
                game.state, str(game.state.turn), f"games/{quote(folder)}/index.html"
            )
            entries.append({**entry, "over": over})
        hrefs = {e["name"]: e["href"] for e in entries}
        files["index.html"] = index_page(
            env, title, entries, _standings(root), _tournaments(root, hrefs, problems)
        )
    files[SITE_FILE] = tomli_w.dumps(
        {
            "format": SITE_FORMAT,
            "club": title,
            "published": iso(now),
            "language": language,
            "files": sorted(files),
        }
    )
    replace_folder(out, files, _site, "the club's pages")
    return SiteSummary(out, len(entries), records, tuple(problems))


def _game(
    env: Any,
    club: str,
    game: Game,
    folder: str,
    now: datetime,
    out: Path,
    problems: list[str],
) -> tuple[dict[str, str | bytes], int]:
    """A game's files of the site, by path inside it, and whether its record is among them."""
    from pbem.present.site import Turn, game_files

    files: dict[str, str | bytes] = {}
    record = None
    note = _(
        "The public record of the game, with the keys of its dice and cards, is published "
        "when the game is over."
    )
    if game.state.phase is Phase.OVER:
        try:
            record_files = prepare_record(game.path, now, out)[1]
        except AuditError as err:
            problems.append(f"{game.name}: its public record is not published ({err})")
            note = _("The public record of this game is not published: its audit did not pass.")
        except PbemError as err:  # (held by another run, a disk that refused)
            problems.append(f"{game.name}: its public record is not published yet ({err})")
            note = _(
                "The public record of this game is published with the next pages: it could not "
                "be written this time."
            )
        else:
            record = f"{folder}-record.zip"
            files[f"games/{folder}/{record}"] = record_zip(record_files, f"{folder}-record")
    turns = []
    before = None
    done = replayed(game)
    if len(done) != game.state.resolution:
        raise PbemError(
            f"history/{len(done):04d}.toml is missing: restore it from a backup ('pbem audit' "
            "says more)"
        )
    for history, state in done:
        played = played_in(game, history.resolution, history.turn)
        turns.append(
            Turn(
                history.resolution,
                history.turn,
                played.name(),
                history.events,
                before,
                state,
                played.after(),
            )
        )
        before = state
    for path, text in game_files(env, club, game.state, turns, record, note).items():
        files[f"games/{folder}/{path}"] = text
    return files, record is not None


def _standings(root: Path) -> Mapping[str, Any]:
    from pbem.club.standings import standings

    return standings(root).to_dict()


def _tournaments(root: Path, hrefs: Mapping[str, str], problems: list[str]) -> list[dict[str, Any]]:
    """The club's tournaments as the index shows them; one that cannot be read is left out
    and named."""
    from pbem.club.tournament_file import list_tournaments
    from pbem.club.tournament_results import tournament_table
    from pbem.present.site import tournament_section

    out = []
    for name in list_tournaments(root):
        try:
            out.append(tournament_section(tournament_table(root, name), hrefs))
        except (PbemError, OSError) as err:
            problems.append(f"tournament {name}: left out ({err})")
    return out


def _site(folder: Path) -> set[str] | None:
    """The files of the pages pbem wrote into `folder`, or None when it wrote none there."""
    try:
        data = _load_toml(folder / SITE_FILE)
    except GameFileError:
        return None
    files = data.get("files")
    if data.get("format") != SITE_FORMAT or not isinstance(files, list):
        return None
    return {SITE_FILE, *(str(f) for f in files)}
