"""The story of a resolution: its events told as sentences, battles with their rolls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pbem.core import rules
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
from pbem.core.state import GameState
from pbem.present import missions as mission_view
from pbem.present.text import dice_faces, listing, plural


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
        parts = (
            f"{event.from_territories} for {plural(event.territories, 'territory', 'territories')}"
        )
        if event.continents:
            parts += f", {event.from_continents} for holding {listing(event.continents)}"
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
            f"{event.source} → {event.target}: {dice_faces(event.attacker)} against "
            f"{dice_faces(event.defender)}; {event.player} loses {event.attacker_losses}, "
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
            f"{plural(event.cards_taken, 'card')}."
        )
    if isinstance(event, DrewCard):
        if viewer is None or viewer == event.player:
            return f"{event.player} drew a card: {event.card}."
        return f"{event.player} drew a card."
    if isinstance(event, Reshuffled):
        return (
            f"The draw pile was empty when {event.player} was to draw: the "
            f"{plural(event.cards, 'traded card')} set aside were shuffled into a new draw pile."
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
            f"their {plural(event.cards, 'card')} {'goes' if event.cards == 1 else 'go'} where "
            "traded cards go, "
            if event.cards
            else ""
        )
        return (
            f"{event.player} missed {plural(event.missed, 'turn')} in a row and leaves the game: "
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
                dice_faces(e.attacker),
                dice_faces(e.defender),
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
    spots = listing([f"{p.armies} on {p.territory}" for p in group])
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
        return f"{first.player} placed 2 on {listing([p.territory for p in group])} for its card."
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
