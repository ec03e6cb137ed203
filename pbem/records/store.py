"""The game file: the game as stored, read in any format this pbem knows and checked, and
written (atomically, through pbem.records.disk). The history and a resolution's folders are in
pbem.records.history.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli as tomllib  # the compiled parser: a third of the time of the standard library's

from pbem.core import dice
from pbem.core.board import Board, board_from_text, board_names, board_of, load_board
from pbem.core.secrets import holder_secret
from pbem.core.state import NEUTRAL as NEUTRAL
from pbem.core.state import PLAYER_NAME_RULE as PLAYER_NAME_RULE
from pbem.core.state import (
    AutopilotRule,
    DiceRule,
    GameState,
    Phase,
    StopAt,
    TradedCards,
    state_from_dict,
    state_to_dict,
)
from pbem.core.state import player_name as player_name
from pbem.core.state import same_name as same_name
from pbem.core.state import valid_player_name as valid_player_name
from pbem.errors import BoardError, GameFileError, PbemError
from pbem.files import GAME_FILE_LIMIT, FileProblem, read_bounded, refuse_links
from pbem.languages.i18n import check_language
from pbem.records import settings
from pbem.records.clock import Schedule, iso, parse_instant
from pbem.records.disk import GAME_FILE, RECORD_FILE, atomic_write, not_a_game
from pbem.terminal import quoted

if TYPE_CHECKING:
    from pbem.core.engine import Randomness

# The engine is imported where it is used: checking orders reads a game without it.

FORMAT = 8
"""The game file format this pbem writes; it reads it and every older one (docs/game-file.md)."""
PLAYER_STATE_KEYS = (
    "name",
    "seat",
    "alive",
    "hand",
    "to_place",
    "missed",
    "dropped",
    "mission",
    "mission_fallback",
)
"""The keys of a game file's [[players]] that belong to the state (the rest: email, secret)."""
FILE_LIMIT = GAME_FILE_LIMIT
"""The largest game or history file read (a long resolution's history is ~100 KiB)."""


@dataclass(frozen=True)
class Registration:
    """A player as the moderator knows them: name, address and the secret that signs orders."""

    name: str
    email: str
    secret: str
    language: str | None = None
    """The language their reports, answers and order files are in; None: the game's."""
    holder: str | None = None
    """Who plays the seat now, when a substitute took it over (pbem.game.seats); None: its
    first player, whose name the seat keeps."""
    bot: str | None = None
    """The program that plays the seat (pbem.game.bots): "reference", or a command line;
    None: a person."""

    @property
    def played_by(self) -> str:
        """The name of the person playing the seat now."""
        return self.holder or self.name

    @property
    def stint(self) -> str:
        """What tells the seat's present player from its earlier ones in the keys of what was
        said to a seat (mail answers, reminders, message ids): "" for its first player,
        "/HOLDER" for a substitute."""
        return "" if self.holder is None else f"/{self.holder}"


WITHHELD = "withheld"
"""The secret of every player in a game's public record, which holds no secret: its order
files carry it in the place of the player's (docs/publish.md)."""


@dataclass(frozen=True)
class PublicKeys:
    """What a game's public record reveals in the place of the seed (docs/publish.md): the
    commitment k[0], the keys of every resolution (k[1] .. k[last + 1], checked against each
    other and the commitment by the audit) and the card key h."""

    commitment: bytes
    keys: tuple[bytes, ...]
    hidden: bytes

    @classmethod
    def from_last(cls, commitment: bytes, last: int, key: bytes, hidden: bytes) -> PublicKeys:
        """From the key of the last resolution `last`: each earlier key is its hash."""
        keys = [key]
        for _ in range(last):
            keys.append(dice.hash_back(keys[-1], 1))
        return cls(commitment, tuple(reversed(keys)), hidden)


@dataclass(frozen=True)
class Game:
    """A game as stored: the state plus what only the moderator holds (seed, secrets)."""

    path: Path
    state: GameState
    seed: bytes
    registrations: tuple[Registration, ...]
    chain_length: int = dice.DEFAULT_CHAIN_LENGTH
    schedule: Schedule | None = None
    deadline: datetime | None = None
    language: str | None = None
    """The players' language unless one has their own; None: English."""
    mail: tuple[tuple[str, str | int], ...] = ()
    """The game's own mail settings (the game file's [mail] table), as set; see settings."""
    public: PublicKeys | None = None
    """Set for a game's public record (pbem.game.record), which has no seed: its keys."""

    @property
    def name(self) -> str:
        return self.state.game

    def language_of(self, player: str) -> str:
        """The language `player` reads: their own, else the game's, else English."""
        reg = self.registration(player)
        return (reg.language if reg else None) or self.language or "en"

    def registration(self, name: str) -> Registration | None:
        return next((r for r in self.registrations if r.name == name), None)

    @property
    def commitment(self) -> str:
        if self.public is not None:
            return self.public.commitment.hex()
        return dice.commitment(self.seed, self.chain_length).hex()

    @property
    def hidden_key(self) -> bytes:
        """The card key h (revealed when the game is over)."""
        return self.public.hidden if self.public is not None else dice.hidden_key(self.seed)

    @property
    def hidden_commitment(self) -> str:
        """SHA-256(h), in every report from the first."""
        return hashlib.sha256(self.hidden_key).hexdigest()

    def previous_key(self, resolution: int) -> bytes:
        """k[r], the key revealed before resolution r's own (the commitment k[0] for r = 0)."""
        return self.key(resolution - 1) if resolution > 0 else bytes.fromhex(self.commitment)

    def key(self, resolution: int) -> bytes:
        if self.public is not None:
            if not 0 <= resolution < len(self.public.keys):
                raise GameFileError(
                    f"this game's public record ends at resolution {len(self.public.keys) - 1}"
                    f": it holds no key for resolution {resolution}"
                )
            return self.public.keys[resolution]
        if resolution + 1 > self.chain_length:
            raise GameFileError(
                f"this game's key chain of {self.chain_length} keys is used up at resolution "
                f"{resolution}: no more dice can be rolled that players can check"
            )
        return dice.resolution_key(self.seed, resolution, self.chain_length)

    def randomness(self, resolution: int, first: bytes | None = None) -> Randomness:
        """What resolution `resolution` draws from; `first`: the digest of the orders its first
        resolution resolved, when that was undone and it is played again (pbem.game.undo)."""
        from pbem.core.engine import Randomness

        return Randomness(self.key(resolution), self.hidden_key, first)

    def holder_secret(self, seat: str, holders: int, holder: str) -> str:
        """The secret of a seat's substitute (pbem.core.secrets.holder_secret); in a public
        record, which holds no secret, the one every order file there carries."""
        if self.public is not None:
            return WITHHELD
        return holder_secret(self.seed, seat, holders, holder)


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_bounded(path, FILE_LIMIT).decode("utf-8"))
    except FileProblem as err:
        if not path.exists():
            raise GameFileError(f"{path} does not exist") from None
        raise GameFileError(f"cannot read {path}: {err}") from None
    except UnicodeDecodeError as err:
        raise GameFileError(f"cannot read {path}: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise GameFileError(f"{path} is damaged: {err}") from None
    except RecursionError:
        raise GameFileError(f"{path} is damaged: it nests tables too deeply") from None


def load_game(directory: Path, *, record: bool = False) -> Game:
    """Load a game directory; raises GameFileError if it is not one or is damaged.

    The game file is not checked against the history here: the commands open a game through
    pbem.records.opening.read_game, which does. A symbolic link in the game's folders is refused
    before anything is read (pbem.files.refuse_links). `record`: a game's public record
    (RECORD_FILE in the place of the game file) is read too, as a game without a seed; only the
    commands that read alone ask."""
    path = directory / GAME_FILE
    public = None
    if not path.exists() and (directory / RECORD_FILE).is_file():
        if not record:
            raise GameFileError(not_a_game(directory))
        path = directory / RECORD_FILE
    if not path.exists():
        raise GameFileError(f"{directory} is not a game directory: it has no {GAME_FILE}")
    refuse_links(directory)
    data = upgrade_game_document(_load_toml(path), path)
    mail = settings.from_table(data.get("mail", {}), f"{path} [mail]")
    try:
        if path.name == RECORD_FILE:
            public = _public_keys(data)
        board = _board(directory, data)
        state_data = dict(data["state"])
        state_data.update(game=data["game"], board=data["board"], options=data["options"])
        state_data["players"] = [
            {k: p[k] for k in PLAYER_STATE_KEYS if k in p} for p in data["players"]
        ]
        state = state_from_dict(state_data, board)
        registrations = tuple(
            Registration(
                str(p["name"]),
                str(p.get("email", "")),
                str(p["secret"]),
                _language(p.get("language"), f"the language of player {p['name']}"),
                _holder(p.get("holder"), p["name"]),
                _bot(p.get("bot"), p["name"]),
            )
            for p in data["players"]
        )
        game = Game(
            path=directory,
            state=state,
            seed=b"" if public is not None else bytes.fromhex(str(data["seed"])),
            registrations=registrations,
            chain_length=int(data.get("chain_length", dice.DEFAULT_CHAIN_LENGTH)),
            language=_language(data.get("language"), "the game's language"),
            **_read_deadlines(data.get("deadlines")),
            mail=mail,
            public=public,
        )
    except GameFileError as err:  # a sentence already
        raise GameFileError(f"{path} is damaged: {err}") from None
    except (KeyError, ValueError, TypeError, IndexError, AttributeError, PbemError) as err:
        raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None
    problem = inconsistency(game)
    if problem:
        raise GameFileError(f"{path} is damaged: {problem}; restore it from a backup")
    return game


RECORD_FORMAT = 1


def _public_keys(data: Mapping[str, Any]) -> PublicKeys:
    """The keys a public record reveals, its card key checked against its commitment."""
    table = data.get("record")
    if not isinstance(table, dict):
        raise GameFileError("it has no [record] table")
    if table.get("format") != RECORD_FORMAT:
        raise GameFileError(
            f"its record format {table.get('format')!r} is not {RECORD_FORMAT}, the one this pbem "
            "reads: upgrade pbem"
        )
    hidden = bytes.fromhex(str(table["hidden_key"]))
    if hashlib.sha256(hidden).hexdigest() != str(data["hidden_commitment"]):
        raise GameFileError(
            "its card key is not the one the game committed to (SHA-256 of hidden_key is not "
            "hidden_commitment)"
        )
    last = int(table["resolutions"]) - 1
    if not 0 <= last < int(data.get("chain_length", dice.DEFAULT_CHAIN_LENGTH)):
        raise GameFileError(f"it counts {last + 1} resolutions, beyond its key chain")
    key = bytes.fromhex(str(table["last_key"]))
    return PublicKeys.from_last(bytes.fromhex(str(data["commitment"])), last, key, hidden)


BOARD_FILE = "board.toml"
"""A game's own board (`pbem new --board FILE`), kept in its directory; its SHA-256 is in the
game file (`board_digest`), so that a board changed since the game began is caught."""
BOARD_FILE_LIMIT = 256 * 1024


def read_board(path: Path) -> Board:
    """A board of a club's own from its file (`pbem new --board FILE`), checked."""
    try:
        text = read_bounded(path, BOARD_FILE_LIMIT).decode("utf-8")
    except FileProblem as err:
        raise PbemError(f"cannot read the board {path}: {err}") from None
    except UnicodeDecodeError:
        raise PbemError(f"the board {path} is not UTF-8 text") from None
    board = board_from_text(text, str(path))
    if board.name in board_names():
        raise BoardError(
            f"{path} names its board '{board.name}', as pbem's own board: give it a name of its own"
        )
    return board


def _board(directory: Path, data: Mapping[str, Any]) -> Board:
    """The game's board: its own copy (checked against the digest the game file keeps), or
    the board pbem ships under its name."""
    name, digest = str(data["board"]), data.get("board_digest")
    if digest is None:
        return load_board(name)
    path = directory / BOARD_FILE
    try:
        text = read_bounded(path, BOARD_FILE_LIMIT).decode("utf-8")
    except (FileProblem, UnicodeDecodeError) as err:
        raise GameFileError(
            f"the game's own board {path} cannot be read ({err}): restore it from a backup"
        ) from None
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != str(digest):
        raise GameFileError(
            f"{path} is not the board this game began with (its SHA-256 is not the game "
            "file's board_digest): restore it from a backup"
        )
    return board_of(name, text, str(path))


def _read_deadlines(table: Any) -> dict[str, Any]:
    """The game file's optional [deadlines] table: the schedule and the pending deadline."""
    if table is None:
        return {}
    deadline = table.get("deadline")
    return {
        "schedule": Schedule.from_dict(table),
        "deadline": parse_instant(str(deadline), "deadline") if deadline else None,
    }


def _format_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 recorded no deck rule: its games put traded cards back into the deck."""
    options = data.get("options")
    if isinstance(options, dict):
        options = {**options, "traded_cards": TradedCards.DECK.value}
    return {**data, "format": 2, "options": options}


def _format_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """Format 2 had no secret missions: its games record `missions = false`."""
    options = data.get("options")
    if isinstance(options, dict):
        options = {**options, "missions": False}
    return {**data, "format": 3, "options": options}


def _format_3_to_4(data: dict[str, Any]) -> dict[str, Any]:
    """Format 3 recorded no stop_at rule: its games treat stop_at as a threshold."""
    options = data.get("options")
    if isinstance(options, dict):
        options = {**options, "stop_at": StopAt.THRESHOLD.value}
    return {**data, "format": 4, "options": options}


def _format_4_to_5(data: dict[str, Any]) -> dict[str, Any]:
    """Format 4 named report folders by resolution alone (`reports/0014/`); from format 5 on
    they also name the turn (`reports/0014-turn-13/`). The game file itself does not change:
    the folders already written keep their names, and every command finds both."""
    return {**data, "format": 5}


def _format_5_to_6(data: dict[str, Any]) -> dict[str, Any]:
    """Format 5 and older games rolled every die from the resolution's key alone: their games
    record `dice = "key"` and go on by that rule."""
    options = data.get("options")
    if isinstance(options, dict):
        options = {**options, "dice": DiceRule.KEY.value}
    return {**data, "format": 6, "options": options}


def _format_6_to_7(data: dict[str, Any]) -> dict[str, Any]:
    """Format 6 and older games placed a setup turn's autopilot armies next to the largest
    enemy stack: their games record `autopilot = "front"` and go on by that rule."""
    options = data.get("options")
    if isinstance(options, dict):
        options = {**options, "autopilot": AutopilotRule.FRONT.value}
    return {**data, "format": 7, "options": options}


def _format_7_to_8(data: dict[str, Any]) -> dict[str, Any]:
    """From format 8 on a seat may have a `holder` (a substitute who took it over, with a
    secret of their own: pbem.game.seats); every seat of an older game is played by its first
    player, and nothing changes."""
    return {**data, "format": 8}


MIGRATIONS = {
    1: _format_1_to_2,
    2: _format_2_to_3,
    3: _format_3_to_4,
    4: _format_4_to_5,
    5: _format_5_to_6,
    6: _format_6_to_7,
    7: _format_7_to_8,
}
"""For each older format, the step that turns its data into the next format's."""


def upgrade_game_document(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The game file's data in today's format: an older format is migrated step by step (in
    memory; the file is rewritten in today's format when the game next moves on), a newer one
    refused."""
    version = data.get("format")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise GameFileError(
            f"{path} is damaged: 'format' must be the number of its game file format "
            f"(1 to {FORMAT}), not {version!r}"
        )
    if version > FORMAT:
        raise GameFileError(
            f"{path} is in game file format {version}, but this pbem reads formats 1 to "
            f"{FORMAT} only: upgrade pbem to go on with this game"
        )
    for step in range(version, FORMAT):
        data = MIGRATIONS[step](data)
    options = data.get("options")
    known = [r.value for r in TradedCards]
    if not isinstance(options, dict) or options.get("traded_cards") not in known:
        where = options.get("traded_cards") if isinstance(options, dict) else None
        raise GameFileError(
            f"{path} is damaged: its [options] do not say where traded cards go"
            + (f" ('{where}' is not a rule)" if where is not None else "")
            + '; write traded_cards = "aside" (beside the board) or "deck" (back into the deck)'
        )
    if not isinstance(options.get("missions"), bool):
        raise GameFileError(
            f"{path} is damaged: its [options] do not say whether the game plays secret "
            "missions; write missions = false (classic Risk) or missions = true"
        )
    _rule_named(options, "stop_at", StopAt, path, "what stop_at means", _STOP_AT_WAYS)
    _rule_named(options, "dice", DiceRule, path, "where the dice come from", _DICE_WAYS)
    _rule_named(
        options, "autopilot", AutopilotRule, path, "how the autopilot places a setup's armies",
        _AUTOPILOT_WAYS,
    )  # fmt: skip
    return data


_STOP_AT_WAYS = (
    'write stop_at = "promise" (fewer dice, never below it) or "threshold" (the last roll may '
    "go below it)"
)
_AUTOPILOT_WAYS = (
    'write autopilot = "borders" (over every border the player holds, every game made from '
    'format 7 on) or "front" (next to the largest enemy stack, the games made before)'
)
_DICE_WAYS = (
    'write dice = "orders" (the key and the orders, every game made from format 6 on) or "key" '
    "(the key alone, the games made before)"
)


def _rule_named(
    options: dict[str, Any], key: str, rule: type[enum.Enum], path: Path, what: str, ways: str
) -> None:
    """Refuse [options] whose `key` does not name one of `rule`'s values, saying what to write."""
    where = options.get(key)
    if where not in [r.value for r in rule]:
        raise GameFileError(
            f"{path} is damaged: its [options] do not say {what}"
            + (f" ('{quoted(str(where))}' is not a rule)" if where is not None else "")
            + f"; {ways}"
        )


MAX_CHAIN_LENGTH = dice.MAX_CHAIN_LENGTH


def inconsistency(game: Game) -> str | None:
    """What makes a loaded game impossible (so no command works from it), or None."""
    state = game.state
    names = [p.name for p in state.players]
    different = len({n.casefold() for n in names})
    if not 2 <= len(names) <= 6 or different != len(names):
        return f"it lists {len(names)} players, {different} of them different (case aside)"
    for name in names:
        if not valid_player_name(name):
            return f"the player name '{quoted(name)}' breaks the naming rule ({PLAYER_NAME_RULE})"
    if not 0 <= state.current < len(names):
        return f"the current seat {state.current} is not one of the {len(names)} seats"
    if [p.seat for p in state.players] != list(range(len(names))):
        return "the players' seats are not 0, 1, 2, ... in order"
    if {r.name for r in game.registrations} != set(names):
        return "the registered players and the players of the state differ"
    if game.public is None and len(game.seed) != 32:
        return "the seed is not 32 bytes"
    if not 1 <= game.chain_length <= MAX_CHAIN_LENGTH:
        return f"chain_length {game.chain_length} is outside 1..{MAX_CHAIN_LENGTH}"
    if not 1 <= state.resolution <= game.chain_length:
        return f"resolution {state.resolution} is outside 1..{game.chain_length}"
    owners = set(names) | {NEUTRAL}
    drafting = state.phase is Phase.DRAFT
    for territory, holding in state.territories.items():
        if holding.owner not in owners:
            return f"{territory} is held by '{holding.owner}', who is not in the game"
        if drafting and (holding.owner, holding.armies) != (NEUTRAL, 0):
            return f"{territory} is claimed before the draft"
        if holding.armies < 1 and not drafting:
            return f"{territory} holds {holding.armies} armies"
    problem = card_inconsistency(state) or mission_inconsistency(state)
    if problem:
        return problem
    for p in state.players:
        holds = any(h.owner == p.name for h in state.territories.values())
        if p.alive and not holds and not drafting:
            return f"{p.name} is in the game but holds no territory"
        if holds and not p.alive:
            return f"{p.name} is out of the game but holds territories"
    return None


def mission_inconsistency(state: GameState) -> str | None:
    """Why the missions of a state cannot be (one per seat in a game with missions, each a card
    of the game's deck, none in a game without), or None."""
    dealt = [p.mission for p in state.players if p.mission is not None]
    if not state.options.missions:
        return "missions are dealt, but the game plays without them" if dealt else None
    from pbem.core import missions  # only for a game with missions

    cards = missions.deck([p.name for p in state.players])
    if len(dealt) != len(state.players) or len(set(dealt)) != len(dealt):
        return "in a game with missions every player holds one mission card of their own"
    unknown = [m for m in dealt if m not in cards]
    if unknown:
        return f"'{unknown[0]}' is not a mission card of this game"
    return None


def card_inconsistency(state: GameState) -> str | None:
    """Why the cards of a state are not the board's deck, each card exactly once in the draw
    pile, the discard pile or a hand; or None."""
    cards = state.board.cards()
    held = [c for p in state.players for c in p.hand] + list(state.deck) + list(state.discards)
    if any(not isinstance(c, str) for c in held) or sorted(held) != sorted(cards):
        return "the cards in the hands, the draw pile and the discard pile are not the board's deck"
    if state.discards and not state.options.sets_aside:
        return (
            f"{len(state.discards)} cards are set aside, but in this game traded cards go back "
            "into the deck"
        )
    return None


def _holder(value: object, seat: object) -> str | None:
    """The optional `holder` of a game file's seat: a player's name (absent: None)."""
    if value is None:
        return None
    if not isinstance(value, str) or not valid_player_name(value):
        raise GameFileError(
            f"the holder of the seat {seat!r} must be a player's name ({PLAYER_NAME_RULE}), "
            f"not {value!r}"
        )
    return value


def _bot(value: object, seat: object) -> str | None:
    """The optional `bot` of a game file's seat: the program that plays it (absent: None)."""
    if value is None:
        return None
    import shlex

    problem = not isinstance(value, str) or value != value.strip() or not value
    if not problem:
        assert isinstance(value, str)
        try:
            problem = len(value) > 1000 or not value.isprintable() or not shlex.split(value)
        except ValueError:
            problem = True
    if problem:
        raise GameFileError(
            f"the bot of the seat {seat!r} must be a bot's name or a command line, not {value!r}"
        )
    assert isinstance(value, str)
    return value


def _language(value: object, where: str) -> str | None:
    """An optional language key of the game file, checked (absent: None)."""
    return None if value is None else check_language(str(value), where)


def game_document(game: Game) -> dict[str, Any]:
    """The game file's content as data: settings, players with secrets, the state."""
    state = state_to_dict(game.state)
    players = []
    for p in state.pop("players"):
        reg = game.registration(p["name"])
        assert reg is not None
        entry = {"name": reg.name, "email": reg.email, "secret": reg.secret}
        if reg.language is not None:
            entry["language"] = reg.language
        if reg.holder is not None:
            entry["holder"] = reg.holder
        if reg.bot is not None:
            entry["bot"] = reg.bot
        players.append({**entry, **p})
    del state["options"]  # the game file spells out every option, the deck rule included
    doc: dict[str, Any] = {
        "format": FORMAT,
        "game": state.pop("game"),
        "board": state.pop("board"),
        **(
            {"board_digest": hashlib.sha256(game.state.board.text.encode("utf-8")).hexdigest()}
            if game.state.board.text
            else {}
        ),
        "seed": game.seed.hex(),
        "chain_length": game.chain_length,
        "commitment": game.commitment,
        "hidden_commitment": dice.hidden_commitment(game.seed).hex(),
        "options": {
            **game.state.options.to_dict(),
            "missions": game.state.options.missions,
            "dice": game.state.options.dice.value,
            "autopilot": game.state.options.autopilot.value,
        },
    }
    if game.language is not None:
        doc["language"] = game.language
    if game.schedule is not None:
        doc["deadlines"] = game.schedule.to_dict()
        if game.deadline is not None:
            doc["deadlines"]["deadline"] = iso(game.deadline, game.schedule.zone)
    if game.mail:
        doc["mail"] = dict(game.mail)
    doc.update(players=players, state=state)
    return doc


def write_game(game: Game) -> None:
    import tomli_w  # the writer only when writing

    atomic_write(game.path / GAME_FILE, tomli_w.dumps(game_document(game)))
