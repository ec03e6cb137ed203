"""Reports: what each player is sent after a resolution, rendered from their view.

One Jinja2 environment per game directory (the game's own `templates/` before the built-in
ones), with StrictUndefined so a typo in a template fails loudly, and autoescaping for HTML.
Templates only format: this module hands them ready values (the story told from the events,
the board by continent, the map's shapes, the hand's sets, the dice check), all computed from
the player's view of the state, so that nothing secret can reach a template by another road.
"""

from __future__ import annotations

import functools
import json
import textwrap
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.core import dice, rules
from pbem.core.board import Board
from pbem.core.events import (
    AttackStopped,
    Conquered,
    Dealt,
    Drafted,
    DrewCard,
    DrewNoCard,
    Dropped,
    Eliminated,
    Event,
    Fortified,
    MissedTurn,
    Placed,
    Reinforced,
    Reshuffled,
    Rolled,
    RolledForFirst,
    SeatsDecided,
    Skipped,
    Traded,
    Won,
)
from pbem.core.orders import Attack, Orders
from pbem.core.state import NEUTRAL, GameState, Phase, TradedCards
from pbem.errors import PbemError
from pbem.game import clock
from pbem.game.store import Game
from pbem.present import missions as mission_view
from pbem.present.bytecode import template_cache
from pbem.present.view import game_view
from pbem.terminal import printable, quoted

if TYPE_CHECKING:  # Jinja2 is loaded when a report is rendered, not by every command
    import jinja2


class TemplateProblem(PbemError):
    """A report template that cannot be rendered: its name, line and what is wrong."""


MODERATOR = "_moderator"

PALETTE: tuple[tuple[str, str], ...] = (
    ("#3a6fb7", "#ffffff"),  # blue
    ("#cf4655", "#ffffff"),  # red
    ("#2f8a57", "#ffffff"),  # green
    ("#f0a52a", "#1c1c1c"),  # amber
    ("#7d52a8", "#ffffff"),  # purple
    ("#25a5a5", "#1c1c1c"),  # teal
)
"""Player colours by seat: (fill, text on it). Chosen to stay apart for most colour vision."""
NEUTRAL_COLOUR = ("#a7a7a7", "#1c1c1c")
CONTINENT_TINTS = ("#efe3c6", "#f2d6cc", "#d9e4f2", "#eedcc0", "#dcead5", "#ead9ee")
"""Pale backgrounds for the continents on the map, in board order (repeated if more)."""

TERRITORY_RADIUS = 17
CONTINENT_PADDING = 31
LABEL_WIDTH = 13
"""Territory names longer than this go on two lines on the map."""


def builtin_templates() -> Path:
    """The templates that ship with pbem (inside the wheel, or beside the package in a checkout)."""
    packaged = resources.files("pbem") / "templates"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "templates"


def environment(game_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment for a game: its own templates/ folder first, then the built-in.

    Sandboxed (Jinja2's immutable sandbox): a game's own template can format what it is given
    but reach nothing else (no attribute that leads to Python's internals, no method that
    changes a value). Every value a template prints
    goes through `printable`, so a control character a player wrote is shown escaped."""
    own = game_dir / "templates" if game_dir is not None else None
    return _environment(own if own is not None and own.is_dir() else None)


def _printable_value(value: Any, markup: type[str]) -> Any:
    if isinstance(value, markup):  # markup: markupsafe.Markup, passed in by _environment
        return markup(printable(str(value), lines=True))
    if isinstance(value, str):
        return printable(value, lines=True)
    return value


@functools.lru_cache(maxsize=32)
def _environment(own: Path | None) -> jinja2.Environment:
    import jinja2
    import markupsafe
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    loaders: list[jinja2.BaseLoader] = []
    if own is not None:
        loaders.append(jinja2.FileSystemLoader(str(own)))
    loaders.append(jinja2.FileSystemLoader(str(builtin_templates())))
    return ImmutableSandboxedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        finalize=functools.partial(_printable_value, markup=markupsafe.Markup),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(
            ["html", "htm", "xml", "svg", "html.j2", "htm.j2", "xml.j2", "svg.j2"]
        ),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=template_cache(),
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _listing(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _dice(values: Iterable[int]) -> str:
    return " ".join(map(str, values))


def narrate(event: Event, viewer: str | None) -> str:
    """One event as a sentence for `viewer` (None: the moderator, who sees every card)."""
    told = mission_view.narrate(event, viewer)
    if told is not None:
        return told
    if isinstance(event, RolledForFirst):
        return f"{event.player} rolled {event.die} for first player."
    if isinstance(event, SeatsDecided):
        return "Order of play: " + ", ".join(event.order) + "."
    if isinstance(event, Dealt):
        return f"{event.player} was dealt {len(event.territories)} territories, one army each."
    if isinstance(event, Reinforced):
        total = event.from_territories + event.from_continents
        parts = f"{event.from_territories} for {event.territories} territories"
        if event.continents:
            parts += f", {event.from_continents} for holding {_listing(event.continents)}"
        return f"Turn {event.turn}: {event.player} receives {total} armies ({parts})."
    if isinstance(event, Traded):
        how = " (forced, after an elimination)" if event.forced else ""
        return (
            f"{event.player} traded {', '.join(event.cards)} for {event.value} armies "
            f"(set {event.set_number} of the game){how}."
        )
    if isinstance(event, Placed):
        if event.why == "card":
            return f"{event.player} placed 2 on {event.territory} for its card."
        if event.why == "elimination":
            return (
                f"{event.player} placed {event.armies} on {event.territory} from the forced trade."
            )
        return f"{event.player} placed {event.armies} on {event.territory}."
    if isinstance(event, Rolled):
        return (
            f"{event.source} → {event.target}: {_dice(event.attacker)} against "
            f"{_dice(event.defender)}; {event.player} loses {event.attacker_losses}, "
            f"{event.defender_name} loses {event.defender_losses}."
        )
    if isinstance(event, Conquered):
        note = f" ({event.note})" if event.note else ""
        return (
            f"{event.player} took {event.target} from {event.loser}, "
            f"moving in {event.moved} from {event.source}{note}."
        )
    if isinstance(event, AttackStopped):
        return f"{event.player} stopped attacking {event.target}: {event.reason}."
    if isinstance(event, Eliminated):
        return (
            f"{event.player} is out of the game, eliminated by {event.by}, who takes "
            f"{_plural(event.cards_taken, 'card')}."
        )
    if isinstance(event, DrewCard):
        if viewer is None or viewer == event.player:
            return f"{event.player} drew a card: {event.card}."
        return f"{event.player} drew a card."
    if isinstance(event, Reshuffled):
        return (
            f"The draw pile was empty when {event.player} was to draw: the "
            f"{_plural(event.cards, 'traded card')} set aside were shuffled into a new draw pile."
        )
    if isinstance(event, DrewNoCard):
        return f"{event.player} draws no card: {event.reason}."
    if isinstance(event, Fortified):
        note = f" ({event.note})" if event.note else ""
        return f"{event.player} moved {event.armies} from {event.source} to {event.target}{note}."
    if isinstance(event, Skipped):
        return f"{event.player}'s order to {event.order} was skipped: {event.reason}."
    if isinstance(event, MissedTurn):
        return f"No orders from {event.player} by the deadline{_in_a_row(event.missed)}."
    if isinstance(event, Dropped):
        armies = f"{event.armies} {'army' if event.armies == 1 else 'armies'}"
        where = f"{event.territories} {'territory' if event.territories == 1 else 'territories'}"
        cards = (
            f"their {_plural(event.cards, 'card')} {'goes' if event.cards == 1 else 'go'} where "
            "traded cards go, "
            if event.cards
            else ""
        )
        return (
            f"{event.player} missed {_plural(event.missed, 'turn')} in a row and leaves the game: "
            f"their {armies} on {where} stay as neutral armies that only defend, {cards}"
            "and their seat is skipped."
        )
    if isinstance(event, Won):
        return f"{event.player} has won the game!"
    return str(event)


def _in_a_row(missed: int) -> str:
    return f" ({missed} turns missed in a row)" if missed > 1 else ""


# --- The story: events told as a reader follows them ---------------------------------------


@dataclass(frozen=True)
class RollLine:
    """One roll of a battle, ready to print: dice as rolled, who lost what, armies left."""

    attacker: str
    defender: str
    losses: str
    source_left: int
    target_left: int


@dataclass(frozen=True)
class StoryItem:
    """One paragraph of the story: a sentence, and for a battle its rolls and its outcome."""

    kind: str
    text: str
    rolls: tuple[RollLine, ...] = ()
    result: str = ""


def armies_before(state: GameState, events: Sequence[Event]) -> dict[str, int]:
    """The armies on each territory before `events`, worked back from the state after them."""
    armies = {t: h.armies for t, h in state.territories.items()}
    for e in reversed(events):
        if isinstance(e, Placed):
            armies[e.territory] = armies.get(e.territory, 0) - e.armies
        elif isinstance(e, Rolled):
            armies[e.source] = armies.get(e.source, 0) + e.attacker_losses
            armies[e.target] = armies.get(e.target, 0) + e.defender_losses
        elif isinstance(e, Conquered):
            armies[e.source] = armies.get(e.source, 0) + e.moved
            armies[e.target] = 0
        elif isinstance(e, Fortified):
            armies[e.source] = armies.get(e.source, 0) + e.armies
            armies[e.target] = armies.get(e.target, 0) - e.armies
    return armies


def _move(armies: dict[str, int], event: Event) -> None:
    """Apply an event's army changes (forward), as `armies_before` undoes them."""
    if isinstance(event, Placed):
        armies[event.territory] = armies.get(event.territory, 0) + event.armies
    elif isinstance(event, Rolled):
        armies[event.source] = armies.get(event.source, 0) - event.attacker_losses
        armies[event.target] = armies.get(event.target, 0) - event.defender_losses
    elif isinstance(event, Conquered):
        armies[event.source] = armies.get(event.source, 0) - event.moved
        armies[event.target] = event.moved
    elif isinstance(event, Fortified):
        armies[event.source] = armies.get(event.source, 0) - event.armies
        armies[event.target] = armies.get(event.target, 0) + event.armies


_KINDS: dict[type[Event], str] = {
    Reinforced: "turn",
    Traded: "trade",
    Placed: "place",
    Dealt: "setup",
    Dropped: "dropped",
    SeatsDecided: "setup",
    RolledForFirst: "setup",
    Eliminated: "eliminated",
    DrewCard: "card",
    Reshuffled: "card",
    DrewNoCard: "card",
    Fortified: "fortify",
    Skipped: "skipped",
    Won: "won",
    Conquered: "battle",
    AttackStopped: "battle",
}


def _losses(roll: Rolled) -> str:
    if roll.attacker_losses and roll.defender_losses:
        return f"each loses {roll.attacker_losses}"
    if roll.attacker_losses:
        return f"{roll.player} loses {roll.attacker_losses}"
    return f"{roll.defender_name} loses {roll.defender_losses}"


def _battle(
    events: Sequence[Event], start: int, armies: dict[str, int], dice: int | None = None
) -> tuple[StoryItem, int]:
    """The rolls of one attack from `start`, with the conquest or stop that ends it; `dice` is
    what its order asked for, to say why the first roll has fewer."""
    first = events[start]
    assert isinstance(first, Rolled)
    heading = (
        f"{first.player} attacked {first.target} ({first.defender_name}) from {first.source}: "
        f"{armies.get(first.source, 0)} armies against {armies.get(first.target, 0)}."
    )
    note = rules.attack_dice_note(armies.get(first.source, 0), dice)
    if note:
        heading += f" {note[0].upper()}{note[1:]}."
    rolls: list[RollLine] = []
    i = start
    while i < len(events):
        e = events[i]
        if not (
            isinstance(e, Rolled)
            and (e.player, e.source, e.target) == (first.player, first.source, first.target)
        ):
            break
        _move(armies, e)
        rolls.append(
            RollLine(
                _dice(e.attacker),
                _dice(e.defender),
                _losses(e),
                armies.get(e.source, 0),
                armies.get(e.target, 0),
            )
        )
        i += 1
    result = ""
    end = events[i] if i < len(events) else None
    if isinstance(end, Conquered) and (end.source, end.target) == (first.source, first.target):
        _move(armies, end)
        note = f"; {end.note}" if end.note else ""
        left = armies.get(end.source, 0)
        result = (
            f"{end.player} took {end.target}, moving in {end.moved} "
            f"({left} {'stays' if left == 1 else 'stay'} in {end.source}{note})."
        )
        i += 1
    elif isinstance(end, AttackStopped) and (end.source, end.target) == (
        first.source,
        first.target,
    ):
        result = (
            f"{end.player} stopped: {end.reason}; {end.target} holds "
            f"with {armies.get(end.target, 0)}."
        )
        i += 1
    return StoryItem("battle", heading, tuple(rolls), result), i


def _placements(group: Sequence[Placed]) -> str:
    first = group[0]
    spots = _listing([f"{p.armies} on {p.territory}" for p in group])
    total = sum(p.armies for p in group)
    if first.why == "autopilot":
        return f"autopilot placed {spots if len(group) == 1 else f'{total} armies: {spots}'}"
    if first.why == "setup":
        return f"{first.player} placed {total} setup armies: {spots}."
    if first.why == "random":
        return f"{first.player}'s other {total} armies were placed at random: {spots}."
    if first.why == "elimination":
        return f"{first.player} placed {total} from the forced trade: {spots}."
    if first.why == "card":
        return f"{first.player} placed 2 on {_listing([p.territory for p in group])} for its card."
    if len(group) == 1:
        return f"{first.player} placed {first.armies} on {first.territory}."
    return f"{first.player} placed {total} armies: {spots}."


def _first_player_rolls(group: Sequence[RolledForFirst]) -> str:
    rounds: list[list[RolledForFirst]] = [[]]
    for roll in group:
        if any(r.player == roll.player for r in rounds[-1]):
            rounds.append([])
        rounds[-1].append(roll)
    told = [", ".join(f"{r.player} {r.die}" for r in one) for one in rounds]
    return "Dice for the first player: " + "; a tie, so again: ".join(told) + "."


def dice_asked(events: Sequence[Event], attacks: Sequence[Attack]) -> dict[int, int | None]:
    """For each battle (the index of its first roll), the dice its attack order asked for.

    The engine carries out the attacks in order, each either skipped or fought, so the orders
    pair with the events in turn."""
    left = list(attacks)
    asked: dict[int, int | None] = {}
    previous: Event | None = None
    for i, e in enumerate(events):
        if isinstance(e, Skipped):
            match = next((a for a in left if a.describe() == e.order), None)
            if match is not None:
                left.remove(match)
        elif isinstance(e, Rolled) and not (
            isinstance(previous, Rolled)
            and (previous.source, previous.target) == (e.source, e.target)
        ):
            match = next((a for a in left if (a.source, a.target) == (e.source, e.target)), None)
            if match is not None:
                left.remove(match)
                asked[i] = match.dice
        previous = e
    return asked


def tell(
    events: Sequence[Event],
    viewer: str | None,
    armies: Mapping[str, int],
    orders: Sequence[Orders] = (),
) -> list[StoryItem]:
    """The events as a story for `viewer`: placements grouped, each battle with its rolls.

    `armies` are the armies on each territory before the events (see `armies_before`);
    `orders`, those the events resolved, let a battle say why it rolls fewer dice than asked."""
    counts = dict(armies)
    autopilot = {e.player for e in events if isinstance(e, MissedTurn)}
    asked = dice_asked(events, [a for o in orders for a in o.attack])
    items: list[StoryItem] = []
    i = 0
    while i < len(events):
        e = events[i]
        if mission_view.hidden_from(e, viewer):
            i += 1
            continue
        if isinstance(e, Drafted):
            text, i = mission_view.draft_round(events, i)
            items.append(StoryItem("setup", text))
            continue
        if isinstance(e, Rolled):
            item, i = _battle(events, i, counts, asked.get(i))
            items.append(item)
            continue
        if isinstance(e, Placed) and e.why == "card" and e.player in autopilot:
            _move(counts, e)
            items.append(StoryItem("place", f"2 placed on {e.territory} for {e.player}'s card."))
            i += 1
            continue
        if isinstance(e, Placed):
            group = [e]
            while (
                i + len(group) < len(events)
                and isinstance(following := events[i + len(group)], Placed)
                and (following.player, following.why) == (e.player, e.why)
            ):
                group.append(following)
            for p in group:
                _move(counts, p)
            items.append(StoryItem("place", _placements(group)))
            i += len(group)
            continue
        if isinstance(e, MissedTurn):
            sentence = narrate(e, viewer)
            group = list(_autopilot_placements(events, i + 1, e.player))
            for p in group:
                _move(counts, p)
            if group:
                sentence = f"{sentence[:-1]}: {_placements(group)}."
            items.append(StoryItem("missed", sentence))
            i += 1 + len(group)
            continue
        if isinstance(e, Traded) and e.player in autopilot and not e.forced:
            items.append(
                StoryItem(
                    "trade",
                    f"The autopilot traded {', '.join(e.cards)} for {e.player}, who held 5 or "
                    f"more cards, for {e.value} armies (set {e.set_number} of the game).",
                )
            )
            i += 1
            continue
        if isinstance(e, RolledForFirst):
            rolls = [e]
            while i + len(rolls) < len(events) and isinstance(
                following_roll := events[i + len(rolls)], RolledForFirst
            ):
                rolls.append(following_roll)
            items.append(StoryItem("setup", _first_player_rolls(rolls)))
            i += len(rolls)
            continue
        _move(counts, e)
        kind = _KINDS.get(type(e)) or mission_view.KINDS.get(type(e), "other")
        items.append(StoryItem(kind, narrate(e, viewer)))
        i += 1
    return items


def _autopilot_placements(events: Sequence[Event], start: int, player: str) -> Iterable[Placed]:
    """The autopilot's placements for `player` that follow `start`."""
    for e in events[start:]:
        if not (isinstance(e, Placed) and e.why == "autopilot" and e.player == player):
            return
        yield e


# --- The order skeleton --------------------------------------------------------------------


def next_turn_of(state: GameState, player: str) -> int | None:
    """The number of `player`'s next turn (None when they will not play again)."""
    if state.phase in (Phase.DRAFT, Phase.SETUP):
        return state.turn
    if state.phase is not Phase.PLAY or not state.player(player).alive:
        return None
    seat, turn = state.current, state.turn
    for _ in range(len(state.players)):
        if state.players[seat].name == player:
            return turn
        seat = rules.next_seat(state, seat)
        turn += 1
    return None


def _players_before(state: GameState, player: str) -> list[str]:
    """Who plays before `player`'s next turn, in order (the current player first)."""
    out: list[str] = []
    seat = state.current
    for _ in range(len(state.players)):
        name = state.players[seat].name
        if name == player:
            return out
        out.append(name)
        seat = rules.next_seat(state, seat)
    return out


def order_skeleton(state: GameState, player: str, secret: str) -> str:
    """A ready order file for the player's next turn, with commented examples.

    Valid as it is when that turn is the pending one; uncommenting the attack example keeps
    it valid (the header is on lines 1-4 and the placement follows, so errors point there)."""
    turn = next_turn_of(state, player)
    lines = [
        f'game = "{state.game}"',
        f"turn = {state.turn if turn is None else turn}",
        f'player = "{player}"',
        f'secret = "{secret}"',
    ]
    if state.phase is Phase.DRAFT:
        return "\n".join(lines + mission_view.draft_skeleton(state)) + "\n"
    me = state.player(player)
    if state.phase is Phase.PLAY and len(me.hand) >= rules.FORCED_TRADE_HAND:
        lines.append('trade = "best"            # you hold 5 or more cards: a trade is required')
    elif state.phase is Phase.PLAY and rules.sets_in(state.board, me.hand):
        lines.append('# trade = "best"          # you can trade a set')
    owned = state.owned(player)
    borders = [t for t in owned if any(state.owner(n) != player for n in state.board.neighbours(t))]
    strongest = max(borders or owned, key=lambda t: (state.armies(t), t), default=None)
    lines += [
        "",
        "[[place]]",
        f'territory = "{strongest}"',
        'armies = "rest"           # every army the other [[place]] tables leave',
    ]
    other = next((t for t in borders or owned if t != strongest), None)
    if other is not None:
        lines += [
            "",
            "# [[place]]               # more [[place]] tables split your armies",
            f'# territory = "{other}"',
            "# armies = 3",
        ]
    if state.phase is Phase.PLAY and strongest is not None:
        enemy = min(
            (n for n in state.board.neighbours(strongest) if state.owner(n) != player),
            key=lambda n: (state.armies(n), n),
            default=None,
        )
        if enemy:
            lines += [
                "",
                "# [[attack]]",
                f'# from = "{strongest}"',
                f'# to = "{enemy}"',
                "# stop_at = 3             # optional: stop when down to 3 armies",
                '# move = "all"            # optional: "all", "min" or a number',
            ]
        inner = [t for t in owned if t not in borders and state.armies(t) > 1]
        friend = next((n for t in inner for n in state.board.neighbours(t) if n in borders), None)
        if inner and friend:
            source = next(t for t in inner if friend in state.board.neighbours(t))
            lines += [
                "",
                "# [fortify]",
                f'# from = "{source}"',
                f'# to = "{friend}"',
                '# armies = "all"',
            ]
        elif len(borders) > 1:
            target = next((n for n in state.board.neighbours(strongest) if n in borders), None)
            if target:
                lines += [
                    "",
                    "# [fortify]",
                    f'# from = "{strongest}"',
                    f'# to = "{target}"',
                    "# armies = 2",
                ]
    return "\n".join(lines) + "\n"


# --- The map -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapTerritory:
    """A territory's circle on the map, its army count and its name."""

    name: str
    x: int
    y: int
    r: int
    fill: str
    ink: str
    owner: str
    armies: int
    mine: bool
    taken: bool
    label: tuple[str, ...]
    label_y: int


@dataclass(frozen=True)
class MapLine:
    x1: float
    y1: float
    x2: float
    y2: float
    kind: str  # "border" (inside a continent), "sea" (between continents) or "wrap"


@dataclass(frozen=True)
class MapContinent:
    name: str
    points: str
    tint: str
    padding: int
    label: str
    label_x: float
    label_y: float


@dataclass(frozen=True)
class MapText:
    text: str
    x: float
    y: float
    anchor: str


def _hull(points: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The convex hull, counter-clockwise (Andrew's monotone chain)."""
    pts = sorted(set(points))
    if len(pts) <= 2:
        return pts

    def cross(o: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> int:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[int, int]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[int, int]] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def _label_lines(name: str) -> tuple[str, ...]:
    if len(name) <= LABEL_WIDTH or " " not in name:
        return (name,)
    words = name.split(" ")
    best = min(
        range(1, len(words)),
        key=lambda k: abs(len(" ".join(words[:k])) - len(" ".join(words[k:]))),
    )
    return (" ".join(words[:best]), " ".join(words[best:]))


@functools.lru_cache(maxsize=256)
def _label_place(board: Board, continent: str, length: int) -> tuple[float, float]:
    """Where a continent's name goes: just above its territories, else below, left or right,
    the first side clear of every territory, every name and the other continents."""
    points = [board.territories[t].position for t in board.continents[continent].territories]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    half = length * 3.8  # half the width of the label at 13px, roughly
    pad = CONTINENT_PADDING
    candidates = [
        (cx, min(ys) - pad + 2),
        (cx, max(ys) + pad + 26),
        (min(xs) - pad - half, cy),
        (max(xs) + pad + half, cy),
    ]
    names = [
        (t.position[0], t.position[1] + TERRITORY_RADIUS + 14) for t in board.territories.values()
    ]
    others = [t.position for t in board.territories.values() if t.continent != continent]

    def distance(spot: tuple[float, float], other: tuple[float, float]) -> float:
        dx = max(abs(other[0] - spot[0]) - half, 0.0)
        dy = other[1] - spot[1] + 4
        return float((dx * dx + dy * dy) ** 0.5)

    def clearance(spot: tuple[float, float]) -> float:
        x, y = spot
        if not (half <= x <= board.width - half and 14 <= y <= board.height - 4):
            return -1.0
        near = min(distance(spot, o) for o in names + list(points))
        return min(near, min((distance(spot, o) - 25 for o in others), default=near))

    return next((c for c in candidates if clearance(c) >= 20), max(candidates, key=clearance))


def player_colours(state: GameState) -> dict[str, tuple[str, str]]:
    """Each player's (fill, ink) by seat, and the neutral's grey."""
    out = {p.name: PALETTE[p.seat % len(PALETTE)] for p in state.players}
    out[NEUTRAL] = NEUTRAL_COLOUR
    return out


def _wrap_lines(board: Board, a: str, b: str) -> list[MapLine]:
    """A border across the map's edge: one short line from each end out of its side."""
    (xl, yl), (xr, yr) = sorted((board.territories[a].position, board.territories[b].position))
    shifted = xr - board.width
    t = xl / (xl - shifted) if xl != shifted else 0.0
    y = yl + (yr - yl) * t
    return [
        MapLine(xl, yl, 0, round(y, 1), "wrap"),
        MapLine(xr, yr, board.width, round(y, 1), "wrap"),
    ]


def map_shapes(state: GameState, viewer: str | None, taken: Iterable[str] = ()) -> dict[str, Any]:
    """Everything the SVG map draws, as ready values: continents, borders, territories."""
    board = state.board
    colours = player_colours(state)
    taken_set = set(taken)
    wrapped = {frozenset(pair) for pair in board.wraps}
    lines: list[MapLine] = []
    for a, b in board.borders():
        if frozenset((a, b)) in wrapped:
            lines += _wrap_lines(board, a, b)
            continue
        (x1, y1), (x2, y2) = board.territories[a].position, board.territories[b].position
        same = board.territories[a].continent == board.territories[b].continent
        lines.append(MapLine(x1, y1, x2, y2, "border" if same else "sea"))
    continents: list[MapContinent] = []
    for i, c in enumerate(board.continents.values()):
        points = [board.territories[t].position for t in c.territories]
        label = f"{c.name} +{c.bonus}"
        x, y = _label_place(board, c.name, len(label))
        continents.append(
            MapContinent(
                c.name,
                " ".join(f"{px},{py}" for px, py in _hull(points)),
                CONTINENT_TINTS[i % len(CONTINENT_TINTS)],
                2 * CONTINENT_PADDING,
                label,
                x,
                y,
            )
        )
    territories = []
    for name, t in board.territories.items():
        owner = state.owner(name)
        fill, ink = colours.get(owner, NEUTRAL_COLOUR)
        x, y = t.position
        territories.append(
            MapTerritory(
                name=name,
                x=x,
                y=y,
                r=TERRITORY_RADIUS,
                fill=fill,
                ink=ink,
                owner=owner,
                armies=state.armies(name),
                mine=viewer is not None and owner == viewer,
                taken=name in taken_set,
                label=_label_lines(name),
                label_y=y + TERRITORY_RADIUS + 11,
            )
        )
    edge_labels = []
    for pair in sorted(wrapped, key=sorted):
        a, b = sorted(pair, key=lambda n: board.territories[n].position)
        edge = [ln for ln in _wrap_lines(board, a, b)]
        edge_labels += [
            MapText(f"← {b}", 4, edge[0].y2 - 22, "start"),
            MapText(f"{a} →", board.width - 4, edge[1].y2 - 22, "end"),
        ]
    return {
        "width": board.width,
        "height": board.height,
        "continents": continents,
        "lines": lines,
        "edge_labels": edge_labels,
        "territories": territories,
    }


# --- The context every template gets ---------------------------------------------------------


def _card_kind(state: GameState, card: str) -> str:
    kind = state.board.card_kind(card)
    return kind.value if kind is not None else "wild"


def _roll_lines(rolls: Sequence[str], width: int = 66) -> list[str]:
    return textwrap.wrap("; ".join(rolls), width=width, break_on_hyphens=False) if rolls else []


def dice_section(game: Game, resolution: int, events: Sequence[Event]) -> dict[str, Any]:
    """The dice check of a resolution: its key (revealed now), the previous key, the rolls.

    Public information once the resolution is done; it goes into the report and its view file,
    and `pbem verify` reads it back."""
    section: dict[str, Any] = {
        "resolution": resolution,
        "key": game.key(resolution).hex(),
        "previous_key": dice.chain_key(game.seed, resolution, game.chain_length).hex(),
        "commitment": game.commitment,
        "rolls": [
            {
                "from": e.source,
                "to": e.target,
                "attacker": list(e.attacker),
                "defender": list(e.defender),
            }
            for e in events
            if isinstance(e, Rolled)
        ],
    }
    first = [{"player": e.player, "die": e.die} for e in events if isinstance(e, RolledForFirst)]
    if first:
        section["first_player"] = first
    if game.state.phase is Phase.OVER:
        section["hidden_key"] = dice.hidden_key(game.seed).hex()
        section["hidden_commitment"] = dice.hidden_commitment(game.seed).hex()
    return section


def _check_command(key: str) -> str:
    return (
        "python3 -c \"import hashlib; print(hashlib.sha256(bytes.fromhex('"
        + key
        + "')).hexdigest())\""
    )


def deadline_iso(game: Game) -> str | None:
    """The pending turn's deadline as the views carry it (ISO 8601, in the game's zone)."""
    if game.deadline is None or game.schedule is None:
        return None
    return clock.iso(game.deadline, game.schedule.zone)


def deadline_text(game: Game, now: datetime | None) -> str | None:
    """`Tue 2 Dec 2026, 20:00 CET, in 47 hours` (counted from `now`, the resolution's time)."""
    if game.deadline is None or game.schedule is None or game.state.phase is Phase.OVER:
        return None
    return clock.describe(game.deadline, game.schedule.zone, now)


def report_context(
    game: Game,
    resolution: int,
    events: Sequence[Event],
    player: str | None,
    rejected: Sequence[str] = (),
    orders: Sequence[Orders] = (),
    now: datetime | None = None,
    undone: Sequence[str] = (),
) -> dict[str, Any]:
    """Everything a report shows, as ready values (player None: the moderator's overview).

    `orders` are those the resolution carried out (for notes on what they asked); `now` is
    when the resolution was made (the deadline is told relative to it); `undone` the notes of
    the resolutions the moderator took back."""
    state = game.state
    view = game_view(state, player, game.commitment, deadline_iso(game))
    colours = player_colours(state)
    section = dice_section(game, resolution, events)
    continents = []
    for c in state.board.continents.values():
        holders = {state.owner(t) for t in c.territories}
        holder = holders.pop() if len(holders) == 1 and state.phase is not Phase.DRAFT else None
        continents.append(
            {
                "name": c.name,
                "bonus": c.bonus,
                "holder": holder,
                "holder_colour": colours[holder][0] if holder else None,
                "mine": holder is not None and holder == player,
                "territories": [
                    {
                        "name": t,
                        "owner": mission_view.owner_shown(state, t),
                        "armies": state.armies(t),
                        "mine": player is not None and state.owner(t) == player,
                        "colour": colours.get(state.owner(t), NEUTRAL_COLOUR)[0],
                    }
                    for t in c.territories
                ],
            }
        )
    players = []
    for p in view["players"]:
        players.append(
            {
                **p,
                "colour": colours[p["name"]][0],
                "continents": list(state.continents_held(p["name"])),
                "me": p["name"] == player,
                "next": state.phase is Phase.PLAY and p["name"] in state.awaiting(),
            }
        )
    rolls = [f"{_dice(r['attacker'])}/{_dice(r['defender'])}" for r in section["rolls"]]
    first = [f"{r['player']} {r['die']}" for r in section.get("first_player", [])]
    context: dict[str, Any] = {
        "view": view,
        "game": state.game,
        "player": player,
        "neutral": NEUTRAL,
        "neutral_colour": NEUTRAL_COLOUR[0],
        "story": tell(events, player, armies_before(state, events), orders),
        "piles": piles_context(view["piles"]),
        "continents": continents,
        "players": players,
        "resolution": resolution,
        "dice": section,
        "key": section["key"],
        "previous_key": section["previous_key"],
        "commitment": game.commitment,
        "check_command": _check_command(section["key"]),
        "roll_count": len(rolls),
        "roll_lines": _roll_lines(rolls),
        "first_player_dice": ", ".join(first),
        "hidden_key": section.get("hidden_key"),
        "hidden_commitment": dice.hidden_commitment(game.seed).hex(),
        "next_player": state.current_player.name if state.phase is Phase.PLAY else None,
        "awaiting": list(state.awaiting()),
        "rejected": list(rejected),
        "deadline": deadline_text(game, now),
        "undone": list(undone),
        "map": map_shapes(state, player, (e.target for e in events if isinstance(e, Conquered))),
        **mission_view.report_missions(state, player),
    }
    if player is not None:
        context.update(_player_context(game, player))
    return context


def piles_context(piles: Mapping[str, Any]) -> dict[str, Any]:
    """The cards beside the board, as sentences: the draw pile, the discards, the rule."""
    discards = list(piles["discards"])
    if piles["traded_cards"] == TradedCards.ASIDE.value:
        rule = (
            "Traded cards are set aside face up, out of the draw pile; when it runs out, they "
            "are shuffled into a new one."
        )
        aside = (
            f"Set aside ({len(discards)}, in the order traded): {', '.join(discards)}."
            if discards
            else "Set aside: none."
        )
    else:
        rule = "In this game traded cards go back into the draw pile (the rule it began with)."
        aside = ""
    draw_pile = f"Draw pile: {_plural(int(piles['draw_pile']), 'card')}."
    return {
        "draw_pile": draw_pile,
        "discards": aside,
        "rule": rule,
        "lines": textwrap.wrap(f"{draw_pile} {aside}", 70) + textwrap.wrap(rule, 70),
    }


def _player_context(game: Game, player: str) -> dict[str, Any]:
    state = game.state
    reg = game.registration(player)
    secret = reg.secret if reg else ""
    me = state.player(player)
    owned = set(state.owned(player))
    base = rules.reinforcement(state, player)
    value = rules.set_value(state.sets_traded)
    sets = [
        {
            "cards": list(s),
            "value": value,
            "bonus": [c for c in s if c in owned],
        }
        for s in rules.sets_in(state.board, me.hand)
    ]
    playing = me.alive and state.phase is not Phase.OVER
    turn = next_turn_of(state, player)
    return {
        "secret": secret,
        "hand": [{"card": c, "kind": _card_kind(state, c)} for c in me.hand],
        "sets": sets,
        "set_value": value,
        "must_trade": len(me.hand) >= rules.FORCED_TRADE_HAND,
        "reinforcement": {
            "territories": base.territories,
            "from_territories": base.from_territories,
            "continents": [
                {"name": c, "bonus": state.board.continents[c].bonus} for c in base.continents
            ],
            "total": base.total,
            "best_set": value if sets else 0,
            "with_set": base.total + (value if sets else 0),
        },
        "to_place": me.to_place,
        "alive": me.alive,
        "missed": _missed_warning(state, player),
        "my_turn": turn,
        "my_turn_now": state.phase is not Phase.OVER and player in state.awaiting(),
        "before_me": _players_before(state, player) if state.phase is Phase.PLAY else [],
        "skeleton": order_skeleton(state, player, secret) if playing else None,
    }


def _missed_warning(state: GameState, player: str) -> str | None:
    """What a player who is missing turns should read (None when they are not)."""
    me = state.player(player)
    if not me.missed or not me.alive or state.phase is Phase.OVER:
        return None
    limit = state.options.drop_after
    text = (
        f"You sent no valid orders for your last {_plural(me.missed, 'turn')}"
        if me.missed > 1
        else "You sent no valid orders for your last turn"
    ) + ": the autopilot played for you."
    if limit:
        left = limit - me.missed
        text += (
            f" Miss {_plural(left, 'more turn')} in a row and you leave the game; "
            "valid orders reset the count."
        )
    return text


def render(
    game: Game,
    resolution: int,
    events: Sequence[Event],
    player: str | None,
    kind: str = "txt",
    rejected: Sequence[str] = (),
    orders: Sequence[Orders] = (),
    now: datetime | None = None,
    undone: Sequence[str] = (),
) -> str:
    """A report as text ("txt") or HTML ("html"); player None: the moderator's overview."""
    name = "moderator" if player is None else "report"
    env = environment(game.path.resolve())
    context = report_context(game, resolution, events, player, rejected, orders, now, undone)
    return render_template(env, f"{name}.{kind}.j2", context)


def render_template(env: jinja2.Environment, name: str, context: Mapping[str, Any]) -> str:
    """One template rendered; any fault in it (syntax, a missing value, something the sandbox
    refuses, an error while rendering) is a TemplateProblem naming the template and line."""
    import jinja2

    fix = "fix the template and run the command again"
    try:
        return env.get_template(name).render(context)
    except jinja2.TemplateSyntaxError as err:
        where = f"{err.filename or err.name or name} line {err.lineno}"
        raise TemplateProblem(f"template {where}: {err.message}; {fix}") from None
    except jinja2.TemplateNotFound as err:
        raise TemplateProblem(f"template {err.name} is missing; {fix}") from None
    except Exception as err:  # noqa: BLE001 - a game's own template can raise anything
        raise TemplateProblem(
            f"template {_template_line(err, name)}: {type(err).__name__}: "
            f"{quoted(str(err), 200)}; {fix}"
        ) from None


def _template_line(err: BaseException, name: str) -> str:
    """The template file and line an error was raised at (Jinja2 puts them in the traceback)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not f.filename.endswith(".py")]
    if not frames:
        return name
    return f"{frames[-1].filename} line {frames[-1].lineno}"


def render_text(game: Game, resolution: int, events: Sequence[Event], player: str | None) -> str:
    return render(game, resolution, events, player, "txt")


def view_file(game: Game, resolution: int, events: Sequence[Event], player: str) -> str:
    """The player's view (DESIGN §7) with this resolution's dice check, as sent with a report."""
    view = game_view(game.state, player, game.commitment, deadline_iso(game))
    view["dice"] = dice_section(game, resolution, events)
    return json.dumps(view, indent=2, ensure_ascii=False) + "\n"


def render_reports(
    game: Game,
    resolution: int,
    events: Sequence[Event],
    rejected: Sequence[str] = (),
    orders: Sequence[Orders] = (),
    now: datetime | None = None,
    undone: Sequence[str] = (),
) -> dict[str, str]:
    """Every player's report (text, HTML, view file, order file) and the moderator's, by file
    name, rendered in memory: the caller writes them (store.write_files) once all succeeded.
    `orders` are those the resolution carried out (for notes on what they asked).

    <player>.txt is the mail body, .html the same report to open (with the map), .view.json
    the player's view for `pbem check --view` and `pbem verify`, .orders.toml the ready order
    file alone (to attach)."""
    files: dict[str, str] = {}
    for p in game.state.players:
        files[f"{p.name}.txt"] = render(
            game, resolution, events, p.name, "txt", (), orders, now, undone
        )
        files[f"{p.name}.html"] = render(
            game, resolution, events, p.name, "html", (), orders, now, undone
        )
        files[f"{p.name}.view.json"] = view_file(game, resolution, events, p.name)
        reg = game.registration(p.name)
        if p.alive and game.state.phase is not Phase.OVER:
            files[f"{p.name}.orders.toml"] = order_skeleton(
                game.state, p.name, reg.secret if reg else ""
            )
    for kind in ("txt", "html"):
        files[f"{MODERATOR}.{kind}"] = render(
            game, resolution, events, None, kind, rejected, orders, now, undone
        )
    return files
