"""The story of a resolution: its events told as a reader follows them, placements grouped,
each battle with its rolls and the armies left, under fog only what the reader saw.

Each event's own sentence is `sentences`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pbem.core import fog_events, rules
from pbem.core.events import (
    AttackStopped,
    Conquered,
    DiceKeyed,
    Drafted,
    Event,
    Fortified,
    MissedTurn,
    Placed,
    Rolled,
    RolledForFirst,
    Skipped,
    Traded,
)
from pbem.core.orders import Attack, Orders
from pbem.core.state import GameState
from pbem.languages.i18n import _, n_, place
from pbem.languages.reasons import told
from pbem.present import missions as mission_view
from pbem.present.sentences import KINDS, armies_text, card_name, dice_text, listing, narrate


@dataclass(frozen=True)
class RollLine:
    """One roll of a battle, ready to print: dice as rolled, who lost what, armies left."""

    attacker: str
    defender: str
    losses: str
    source_left: int | str
    target_left: int | str
    """(Under fog, "?" for a side the reader does not see.)"""


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
    if isinstance(event, fog_events.MovedSeen):
        change = event.armies if event.into else -event.armies
        armies[event.territory] = armies.get(event.territory, 0) + change
    elif isinstance(event, Placed):
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


def _losses(roll: Rolled) -> str:
    if roll.attacker_losses and roll.defender_losses:
        return _("each loses %(lost)s", lost=roll.attacker_losses)
    if roll.attacker_losses:
        return _("%(player)s loses %(lost)s", player=roll.player, lost=roll.attacker_losses)
    return _("%(player)s loses %(lost)s", player=roll.defender_name, lost=roll.defender_losses)


def _battle(
    events: Sequence[Event],
    start: int,
    armies: dict[str, int],
    dice: int | None = None,
    unknown: frozenset[str] = frozenset(),
) -> tuple[StoryItem, int]:
    """The rolls of one attack from `start`, with the conquest or stop that ends it; `dice` is
    what its order asked for, to say why the first roll has fewer. Under fog a side in
    `unknown` has no count told, and the battle neither its armies nor how it ended in them."""
    first = events[start]
    assert isinstance(first, Rolled)
    seen = first.source not in unknown and first.target not in unknown
    names = {
        "player": first.player,
        "target": place(first.target),
        "defender": first.defender_name,
        "source": place(first.source),
    }
    if seen:
        heading = _(
            "%(player)s attacked %(target)s (%(defender)s) from %(source)s: %(armies)s against "
            "%(defending)s.",
            **names,
            armies=armies_text(armies.get(first.source, 0)),
            defending=armies.get(first.target, 0),
        )
        note = told(rules.attack_dice_note(armies.get(first.source, 0), dice))
        if note:
            heading += f" {note[0].upper()}{note[1:]}."
    else:
        heading = _("%(player)s attacked %(target)s (%(defender)s) from %(source)s.", **names)

    def left(territory: str) -> int | str:
        return "?" if territory in unknown else armies.get(territory, 0)

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
                dice_text(e.attacker),
                dice_text(e.defender),
                _losses(e),
                left(e.source),
                left(e.target),
            )
        )
        i += 1
    result = ""
    end = events[i] if i < len(events) else None
    pair = (first.source, first.target)
    if isinstance(end, Conquered) and (end.source, end.target) == pair:
        _move(armies, end)
        if not seen:
            result = _("%(player)s took %(target)s.", player=end.player, target=place(end.target))
        else:
            note = f"; {told(end.note)}" if end.note else ""
            result = n_(
                "%(player)s took %(target)s, moving in %(moved)s "
                "(%(num)s stays in %(source)s%(note)s).",
                "%(player)s took %(target)s, moving in %(moved)s (%(num)s stay in "
                "%(source)s%(note)s).",
                armies.get(end.source, 0),
                player=end.player,
                target=place(end.target),
                moved=end.moved,
                source=place(end.source),
                note=note,
            )
        i += 1
    elif isinstance(end, AttackStopped) and (end.source, end.target) == pair:
        if not seen:
            result = _(
                "%(player)s stopped; %(target)s holds.", player=end.player, target=place(end.target)
            )
        else:
            result = _(
                "%(player)s stopped: %(reason)s; %(target)s holds with %(armies)s.",
                player=end.player,
                reason=told(end.reason),
                target=place(end.target),
                armies=armies.get(end.target, 0),
            )
        i += 1
    return StoryItem("battle", heading, tuple(rolls), result), i


def _spots(group: Sequence[Placed]) -> str:
    """Where a group of placements went: "3 on Ural, 2 on Siam"."""
    return listing(
        [
            _("%(armies)s on %(territory)s", armies=p.armies, territory=place(p.territory))
            for p in group
        ]
    )


def _seen_placements(group: Sequence[Placed]) -> str:
    """Another side's placements as a reader under fog saw them: where, not how many in all."""
    return _(
        "%(player)s placed, where you see: %(spots)s.", player=group[0].player, spots=_spots(group)
    )


def _placements(group: Sequence[Placed]) -> str:
    first = group[0]
    spots = _spots(group)
    total = sum(p.armies for p in group)
    values = {"player": first.player, "armies": armies_text(total), "spots": spots}
    if first.why == "autopilot":
        if len(group) == 1:
            return _("autopilot placed %(spots)s", **values)
        return _("autopilot placed %(armies)s: %(spots)s", **values)
    if first.why == "setup":
        return n_(
            "%(player)s placed %(num)s setup army: %(spots)s.",
            "%(player)s placed %(num)s setup armies: %(spots)s.",
            total,
            **values,
        )
    if first.why == "random":
        return n_(
            "%(player)s's other %(num)s army was placed at random: %(spots)s.",
            "%(player)s's other %(num)s armies were placed at random: %(spots)s.",
            total,
            **values,
        )
    if first.why == "elimination":
        return _(
            "%(player)s placed %(total)s from the forced trade: %(spots)s.", total=total, **values
        )
    if first.why == "card":
        return _(
            "%(player)s placed 2 on %(territory)s for its card.",
            player=first.player,
            territory=listing([place(p.territory) for p in group]),
        )
    if len(group) == 1:
        return _(
            "%(player)s placed %(armies)s on %(territory)s.",
            player=first.player,
            armies=first.armies,
            territory=place(first.territory),
        )
    return _("%(player)s placed %(armies)s: %(spots)s.", **values)


def _first_player_rolls(group: Sequence[RolledForFirst]) -> str:
    rounds: list[list[RolledForFirst]] = [[]]
    for roll in group:
        if any(r.player == roll.player for r in rounds[-1]):
            rounds.append([])
        rounds[-1].append(roll)
    told = [", ".join(f"{r.player} {r.die}" for r in one) for one in rounds]
    return _("Dice for the first player: %(rolls)s.", rolls=_("; a tie, so again: ").join(told))


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
    unknown: frozenset[str] = frozenset(),
    side: frozenset[str] = frozenset(),
) -> list[StoryItem]:
    """The events as a story for `viewer`: placements grouped, each battle with its rolls.

    `armies` are the armies on each territory before the events (see `armies_before`);
    `orders`, those the events resolved, let a battle say why it rolls fewer dice than asked.
    `unknown`: under fog, the territories whose armies the reader did not see during the
    events (pbem.core.fog_events): no count of theirs is told, and a group of placements of
    another side than the reader's (`side`: the reader and their team-mates) is told as what
    the reader saw of it."""
    counts = dict(armies)

    def partial(player: str) -> bool:
        """Whether the reader saw only part of what `player` did (under fog, another side)."""
        return bool(unknown) and viewer is not None and player not in side

    autopilot = {e.player for e in events if isinstance(e, MissedTurn)}
    asked = dice_asked(events, [a for o in orders for a in o.attack])
    items: list[StoryItem] = []
    i = 0
    while i < len(events):
        e = events[i]
        if mission_view.hidden_from(e, viewer):
            i += 1
            continue
        if isinstance(e, DiceKeyed):
            i += 1  # the dice check of the report tells it, with the digests
            continue
        if isinstance(e, Skipped) and viewer is not None and viewer != e.player:
            i += 1  # a skipped order is its player's business (and the moderator's)
            continue
        if isinstance(e, Drafted):
            text, i = mission_view.draft_round(events, i)
            items.append(StoryItem("setup", text))
            continue
        if isinstance(e, Rolled):
            item, i = _battle(events, i, counts, asked.get(i), unknown)
            items.append(item)
            continue
        if isinstance(e, Placed) and e.why == "card" and e.player in autopilot:
            _move(counts, e)
            items.append(
                StoryItem(
                    "place",
                    _(
                        "2 placed on %(territory)s for %(player)s's card.",
                        territory=place(e.territory),
                        player=e.player,
                    ),
                )
            )
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
            said = _seen_placements(group) if partial(e.player) else _placements(group)
            items.append(StoryItem("place", said))
            i += len(group)
            continue
        if isinstance(e, MissedTurn):
            sentence = narrate(e, viewer)
            group = list(_autopilot_placements(events, i + 1, e.player))
            for p in group:
                _move(counts, p)
            if group:
                said = _seen_placements(group) if partial(e.player) else _placements(group)
                sentence = f"{sentence[:-1]}: {said}."
            items.append(StoryItem("missed", sentence))
            i += 1 + len(group)
            continue
        if isinstance(e, Traded) and e.player in autopilot and not e.forced:
            items.append(
                StoryItem(
                    "trade",
                    _(
                        "The autopilot traded %(cards)s for %(player)s, who held 5 or more "
                        "cards, for %(armies)s (set %(set)s of the game).",
                        cards=", ".join(card_name(c) for c in e.cards),
                        player=e.player,
                        armies=armies_text(e.value),
                        set=e.set_number,
                    ),
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
        kind = KINDS.get(type(e)) or mission_view.KINDS.get(type(e), "other")
        items.append(StoryItem(kind, narrate(e, viewer)))
        i += 1
    return items


def _autopilot_placements(events: Sequence[Event], start: int, player: str) -> Iterable[Placed]:
    """The autopilot's placements for `player` that follow `start`."""
    for e in events[start:]:
        if not (isinstance(e, Placed) and e.why == "autopilot" and e.player == player):
            return
        yield e
