"""What each reader may see of a game: one pure function, used by every way out.

Reports, `show --json`, the view file sent with each report and the player's own order checker
all go through `game_view`, so a hand, a secret or the deck cannot leak by another road.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pbem.core import fog, rules
from pbem.core.board import Board, board_of
from pbem.core.state import (
    NEUTRAL,
    GameState,
    Holding,
    Options,
    Phase,
    Player,
    team_of,
    valid_player_name,
)
from pbem.errors import BoardError, PbemError
from pbem.files import VIEW_FILE_LIMIT, FileProblem, read_bounded
from pbem.languages.i18n import LANGUAGES
from pbem.present.missions import view_missions
from pbem.present.secret_check import SecretHash, secret_hash_from_view
from pbem.terminal import quoted


def game_view(
    state: GameState, player: str | None = None, commitment: str = "", deadline: str | None = None
) -> dict[str, Any]:
    """A view (docs/views.md): the moderator's (player None: every hand) or one player's.

    `deadline`: when the pending turn is due (ISO 8601 with offset), in games with deadlines.
    In a game with missions a player's entry carries their mission only where the reader may
    see it (`missions.may_see`). A player's view holds their own hand, and in a team game with
    `team_cards` their team-mates' hands; a team game's that is over names the team that won
    (`winners`). Under fog a player's view holds `null` for what they may not know
    (docs/fog.md)."""
    visible = view_missions(state, player)
    sight = fog.sight_of(state, player)
    shown_hands = {p.name for p in state.players} if player is None else {player}
    if player is not None and state.options.team_cards:
        shown_hands.update(state.mates(player))
    players = []
    for p in state.players:
        entry: dict[str, Any] = {
            "name": p.name,
            "seat": p.seat,
            "alive": p.alive,
            "territories": len(state.owned(p.name)),
            "armies": state.total_armies(p.name),
            "cards": len(p.hand),
            "reinforcements": (
                p.to_place
                if state.phase in (Phase.DRAFT, Phase.SETUP)
                else rules.reinforcement(state, p.name).total
            )
            if p.alive
            else 0,
        }
        if p.missed:
            entry["missed"] = p.missed
        if p.dropped:
            entry["dropped"] = True
        if p.name in shown_hands:
            entry["hand"] = list(p.hand)
        if p.name in visible:
            entry["mission"] = visible[p.name]
        if sight is not None and not sight.knows_player(p.name):
            _fogged_player(entry, sight)
        players.append(entry)
    view: dict[str, Any] = {
        "game": state.game,
        "turn": state.turn,
        "resolution": state.resolution,
        "phase": state.phase.value,
        "mode": "sequential",
        "awaiting": list(state.awaiting()),
        "winner": state.winner,
        "commitment": commitment,
        "sets_traded": state.sets_traded,
        "next_set_value": rules.set_value(state.sets_traded),  # (flat spoils: by the set)
        "board": state.board.name,
        **({"board_file": state.board.text} if state.board.text else {}),
        "options": state.options.to_dict(),
        "piles": card_piles(state),
        "players": players,
        "territories": {
            t: {
                "owner": h.owner if sight is None or sight.owner_known(t) else None,
                "armies": h.armies if sight is None or sight.armies_known(t) else None,
            }
            for t, h in state.territories.items()
        },
    }
    if sight is not None and not sight.owners:  # (heavy fog: the piles would count the hands)
        view["piles"] = {**view["piles"], "draw_pile": None, "discards": None}
    if state.options.teams and state.winner is not None:
        view["winners"] = list(state.team(state.winner))
    if deadline is not None and state.phase is not Phase.OVER:
        view["deadline"] = deadline
    if player is not None:
        view["player"] = player
    if state.has_neutral():
        view["neutral"] = {
            "territories": len(state.owned(NEUTRAL)),
            "armies": state.total_armies(NEUTRAL),
        }
        if sight is not None:
            _fogged_player(view["neutral"], sight)
    return view


def _fogged_player(entry: dict[str, Any], sight: fog.Sight) -> None:
    """What fog hides of another side's entry (docs/fog.md): their armies; in heavy fog also
    their territories, cards and reinforcements (null: not known to the reader)."""
    entry["armies"] = None
    if not sight.owners:
        for key in ("territories", "cards", "reinforcements"):
            if key in entry:
                entry[key] = None


def card_piles(state: GameState) -> dict[str, Any]:
    """What everyone sees of the cards beside the board: where traded cards go, how many cards
    the draw pile holds (not which), and the discard pile face up, in the order traded."""
    return {
        "traded_cards": state.options.traded_cards.value,
        "draw_pile": len(state.deck),
        "discards": list(state.discards),
    }


class ViewError(PbemError):
    """A view file (or report) that cannot be what pbem wrote: unreadable, not JSON, crafted."""


ARMIES_LIMIT = 1_000_000
"""The most armies a territory of a view may hold, and the largest count taken from one."""
COUNT_LIMIT = 1_000_000
"""The largest turn, resolution or sets-traded number a view may give."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a view file holds")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a number a view file holds")
    return value


def read_text(path: Path) -> str:
    """A view file's or report's text, read safely: bounded in size, never blocking on a FIFO."""
    try:
        return read_bounded(path, VIEW_FILE_LIMIT).decode("utf-8-sig")
    except FileProblem as err:
        raise ViewError(f"cannot read {path}: {err}") from None
    except UnicodeDecodeError:
        raise ViewError(
            f"{path} is not a text file in UTF-8: give the file as it was sent"
        ) from None


def parse_json(text: str, source: Path) -> Any:
    """JSON as pbem writes it: no NaN or Infinity, and nesting too deep to parse refused."""
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise ViewError(f"{source} is not a view file: its JSON nests too deeply") from None
    except ValueError as err:
        raise ViewError(f"{source} is not a view file ({quoted(str(err), 200)})") from None


def load_json(path: Path) -> Any:
    """A view file's JSON, read and parsed safely (see read_text and parse_json)."""
    return parse_json(read_text(path), path)


def read_view(path: Path) -> GameState:
    """The state a view file shows, for checking its player's orders (`check --view`)."""
    return read_view_with_secret(path)[0]


def read_view_with_secret(path: Path) -> tuple[GameState, SecretHash | None]:
    """The state a view file shows and the hash of its player's secret, if it carries one."""
    view = load_json(path)
    state = _state_of(view, path)
    return state, secret_hash_from_view(view)


def _state_of(view: Any, path: Path) -> GameState:
    if not isinstance(view, dict):
        raise ViewError(f"{path} is not a view file from a report: it is not a JSON object")
    try:
        own = view.get("board_file")
        if own is not None and not isinstance(own, str):
            raise ViewError("'board_file' is not the text of a board")
        name = _text(view.get("board", "classic"), "board")
        return state_from_view(view, board_of(name, own, "its board_file"))
    except (ViewError, BoardError) as err:
        raise ViewError(f"{path} is not a view file from a report: {err}") from None


def view_language(path: Path) -> str:
    """The language of the player a view file is for (en when it names none or one unknown)."""
    view = load_json(path)
    code = view.get("language") if isinstance(view, dict) else None
    return code if isinstance(code, str) and code in LANGUAGES else "en"


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ViewError(f"'{what}' is not text")
    return value


def _count(value: object, what: str, low: int = 0, high: int = COUNT_LIMIT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ViewError(f"'{what}' is not a whole number from {low} to {high}")
    return value


def _field(data: object, key: str, what: str) -> Any:
    if not isinstance(data, dict):
        raise ViewError(f"'{what}' is not a JSON object")
    if key not in data:
        raise ViewError(f"'{what}' has no '{key}'")
    return data[key]


def _discards(view: Mapping[str, Any], cards: set[str]) -> tuple[str, ...]:
    piles = view.get("piles") or {}
    if not isinstance(piles, dict):
        raise ViewError("'piles' is not a JSON object")
    discards = tuple(_items(piles.get("discards") or [], "discards", len(cards)))
    if not all(isinstance(c, str) and c in cards for c in discards):
        raise ViewError("the discard pile holds something that is not a card of the board")
    return discards


def _items(value: object, what: str, most: int) -> list[Any]:
    if not isinstance(value, list) or len(value) > most:
        raise ViewError(f"'{what}' is not a list of at most {most}")
    return value


def state_from_view(view: Mapping[str, Any], board: Board) -> GameState:
    """A state good enough to check the viewing player's orders: other hands and the draw
    pile, which the view does not show, are left empty. Every value is checked (type and range),
    so a crafted view gives ViewError, never a state the rules cannot work with."""
    cards = set(board.cards())
    try:
        phase = Phase(_text(_field(view, "phase", "view"), "phase"))
    except ValueError:
        raise ViewError("'phase' is not draft, setup, play or over") from None
    options = _field(view, "options", "view") if "options" in view else {}
    if not isinstance(options, dict) or not all(
        isinstance(v, (str, bool, int)) or k == "teams" for k, v in options.items()
    ):
        raise ViewError("'options' is not an object of texts, numbers and true/false")
    try:
        rules_options = Options.from_dict(options)
    except ValueError as err:
        raise ViewError(f"'options' are not pbem's ({quoted(str(err))})") from None
    # Under fog, what the reader may not know is null (docs/fog.md): an owner not known is
    # UNKNOWN, armies not known 0, and so are the counts of another side.
    fogged = rules_options.fogged and phase is not Phase.OVER
    players: list[Player] = []
    for i, p in enumerate(_items(_field(view, "players", "view"), "players", 6)):
        name = _text(_field(p, "name", "players"), "players' name")
        if not valid_player_name(name):
            raise ViewError(f"'{quoted(name)}' is not a player name")
        hand = tuple(_items(p.get("hand", []), f"{name}'s hand", len(cards)))
        if not all(isinstance(c, str) and c in cards for c in hand):
            raise ViewError(f"{name}'s hand holds something that is not a card of the board")
        alive, dropped = _field(p, "alive", name), p.get("dropped", False)
        if not isinstance(alive, bool) or not isinstance(dropped, bool):
            raise ViewError(f"{name}'s 'alive' or 'dropped' is not true or false")
        players.append(
            Player(
                name=name,
                seat=_count(_field(p, "seat", name), f"{name}'s seat", i, i),
                alive=alive,
                hand=hand,
                to_place=_count(_field(p, "reinforcements", name), f"{name}'s reinforcements")
                if phase in (Phase.DRAFT, Phase.SETUP)
                and not (fogged and p.get("reinforcements", 0) is None)
                else 0,
                missed=_count(p.get("missed", 0), f"{name}'s missed turns"),
                dropped=dropped,
            )
        )
    names = [p.name for p in players]
    if len(players) < 2 or len(set(names)) != len(names):
        raise ViewError("'players' are not 2 to 6 different players")
    owners = {*names, NEUTRAL}
    territories: dict[str, Holding] = {}
    given = _field(view, "territories", "view")
    for t in board.names:
        entry = _field(given, t, "territories")
        if fogged and _field(entry, "owner", t) is None:
            owner = fog.UNKNOWN
        else:
            owner = _text(_field(entry, "owner", t), f"{t}'s owner")
            if owner not in owners:
                raise ViewError(f"{t} is held by '{quoted(owner)}', who is not a player")
        if fogged and _field(entry, "armies", t) is None:
            territories[t] = Holding(owner, 0)
            continue
        least = 0 if phase is Phase.DRAFT else 1  # the draft's unclaimed land holds no army
        territories[t] = Holding(owner, _count(_field(entry, "armies", t), t, least, ARMIES_LIMIT))
    reader = view.get("player")
    known = set(team_of(rules_options.teams, str(reader))) if fogged else set(names)
    for p in players:
        if p.name not in known and fog.UNKNOWN in {h.owner for h in territories.values()}:
            continue  # (they may hold land the reader does not see)
        if phase is not Phase.DRAFT and p.alive != any(
            h.owner == p.name for h in territories.values()
        ):
            raise ViewError(
                f"{p.name} is {'in' if p.alive else 'out of'} the game but holds "
                f"{'no' if p.alive else 'some'} territory"
            )
    awaiting = _items(_field(view, "awaiting", "view"), "awaiting", 6)
    winner = view.get("winner")
    if winner is not None and winner not in names:
        raise ViewError("'winner' is not one of the players")
    seated = sorted(p.name for p in players)
    if rules_options.teams and sorted(n for t in rules_options.teams for n in t) != seated:
        raise ViewError("'options' name teams that are not the game's players")
    return GameState(
        game=_text(_field(view, "game", "view"), "game"),
        board=board,
        options=rules_options,
        players=tuple(players),
        territories=territories,
        deck=(),
        discards=_discards(view, cards),
        phase=phase,
        turn=_count(_field(view, "turn", "view"), "turn"),
        resolution=_count(_field(view, "resolution", "view"), "resolution"),
        current=next((i for i, n in enumerate(names) if n in awaiting), 0),
        sets_traded=_count(_field(view, "sets_traded", "view"), "sets_traded"),
        winner=winner,
    )
