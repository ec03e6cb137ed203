"""Each event as one sentence in the language spoken (`narrate`), for the moderator or for one
player (who sees only their own cards), and the words those sentences share: a card's name, a
count of armies or cards, the dice of a roll, a listing; and the kind of paragraph each event
makes in a story (`KINDS`).

How a resolution's events are told together, as a story, is `story`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pbem.core import fog_events
from pbem.core.board import WILD
from pbem.core.events import (
    AttackStopped,
    Away,
    Conquered,
    Dealt,
    DiceKeyed,
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
    RoundsOver,
    SeatsDecided,
    SeatTaken,
    Skipped,
    Traded,
    Won,
)
from pbem.core.state import team_name
from pbem.languages import i18n
from pbem.languages.i18n import _, n_, place
from pbem.languages.reasons import told
from pbem.present import missions as mission_view
from pbem.present.skipped import skipped_sentence


def listing(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c' in the language spoken."""
    return i18n.current().listing(list(items))


def dice_text(values: Iterable[int]) -> str:
    return " ".join(map(str, values))


def armies_text(n: int) -> str:
    return n_("%(num)s army", "%(num)s armies", n)


def cards_text(n: int) -> str:
    return n_("%(num)s card", "%(num)s cards", n)


def _turns(n: int) -> str:
    return n_("%(num)s turn", "%(num)s turns", n)


def narrate(event: Event, viewer: str | None) -> str:
    """One event as a sentence for `viewer` (None: the moderator, who sees every card), in the
    language spoken (pbem.languages.i18n): every sentence is a catalogue entry."""
    sentence = mission_view.narrate(event, viewer)
    if sentence is not None:
        return sentence
    if isinstance(event, RolledForFirst):
        return _("%(player)s rolled %(die)s for first player.", player=event.player, die=event.die)
    if isinstance(event, SeatsDecided):
        return _("Order of play: %(players)s.", players=", ".join(event.order))
    if isinstance(event, Dealt):
        return n_(
            "%(player)s was dealt %(num)s territory, one army on it.",
            "%(player)s was dealt %(num)s territories, one army each.",
            len(event.territories),
            player=event.player,
        )
    if isinstance(event, Reinforced):
        total = event.from_territories + event.from_continents
        parts = n_(
            "%(armies)s for %(num)s territory",
            "%(armies)s for %(num)s territories",
            event.territories,
            armies=event.from_territories,
        )
        if event.continents:
            parts += _(
                ", %(armies)s for holding %(continents)s",
                armies=event.from_continents,
                continents=listing([place(c) for c in event.continents]),
            )
        return _(
            "Turn %(turn)s: %(player)s receives %(armies)s (%(parts)s).",
            turn=event.turn,
            player=event.player,
            armies=armies_text(total),
            parts=parts,
        )
    if isinstance(event, Traded):
        values = {
            "player": event.player,
            "cards": ", ".join(card_name(c) for c in event.cards),
            "armies": armies_text(event.value),
            "set": event.set_number,
        }
        if event.unwritten:
            return _(
                "%(player)s traded %(cards)s for %(armies)s (set %(set)s of the game): a forced "
                "trade, made by pbem for %(player)s, who held 5 or more cards and whose orders "
                "traded none.",
                **values,
            )
        if event.forced:
            return _(
                "%(player)s traded %(cards)s for %(armies)s (set %(set)s of the game) "
                "(forced, after an elimination).",
                **values,
            )
        return _("%(player)s traded %(cards)s for %(armies)s (set %(set)s of the game).", **values)
    if isinstance(event, Placed):
        where = {"player": event.player, "territory": place(event.territory)}
        if event.why == "card":
            return _("%(player)s placed 2 on %(territory)s for its card.", **where)
        if event.why == "elimination":
            return _(
                "%(player)s placed %(armies)s on %(territory)s from the forced trade.",
                armies=event.armies,
                **where,
            )
        return _("%(player)s placed %(armies)s on %(territory)s.", armies=event.armies, **where)
    if isinstance(event, Rolled):
        return _(
            "%(source)s → %(target)s: %(attacker)s against %(defender)s; "
            "%(player)s loses %(lost)s, %(defender_name)s loses %(defender_lost)s.",
            source=place(event.source),
            target=place(event.target),
            attacker=dice_text(event.attacker),
            defender=dice_text(event.defender),
            player=event.player,
            lost=event.attacker_losses,
            defender_name=event.defender_name,
            defender_lost=event.defender_losses,
        )
    if isinstance(event, Conquered):
        note = f" ({told(event.note)})" if event.note else ""
        return (
            _(
                "%(player)s took %(target)s from %(loser)s, moving in %(moved)s from %(source)s.",
                player=event.player,
                target=place(event.target),
                loser=event.loser,
                moved=event.moved,
                source=place(event.source),
            )[:-1]
            + note
            + "."
        )
    if isinstance(event, AttackStopped):
        return _(
            "%(player)s stopped attacking %(target)s: %(reason)s.",
            player=event.player,
            target=place(event.target),
            reason=told(event.reason),
        )
    if isinstance(event, fog_events.MovedSeen) and event.into:
        return _(
            "%(player)s moved %(armies)s into %(territory)s.",
            player=event.player,
            armies=event.armies,
            territory=place(event.territory),
        )
    if isinstance(event, fog_events.MovedSeen):
        return _(
            "%(player)s moved %(armies)s out of %(territory)s.",
            player=event.player,
            armies=event.armies,
            territory=place(event.territory),
        )
    if isinstance(event, fog_events.CardsHidden) and event.reshuffled:
        return _(
            "The draw pile was empty when %(player)s was to draw: the cards set aside were "
            "shuffled into a new draw pile.",
            player=event.player,
        )
    if isinstance(event, fog_events.CardsHidden):
        return _("%(player)s draws no card: no card is left to draw.", player=event.player)
    if isinstance(event, fog_events.LeftGame) and event.by is not None:
        return _(
            "%(player)s is out of the game, eliminated by %(by)s.", player=event.player, by=event.by
        )
    if isinstance(event, fog_events.LeftGame):
        return _("%(player)s is out of the game.", player=event.player)
    if isinstance(event, fog_events.TurnPlayed) and not event.seen:
        return _(
            "Turn %(turn)s: %(player)s played; you saw nothing of it.",
            turn=event.turn,
            player=event.player,
        )
    if isinstance(event, fog_events.TurnPlayed):
        return _(
            "Turn %(turn)s: %(player)s played; what you saw of it:",
            turn=event.turn,
            player=event.player,
        )
    if isinstance(event, Eliminated):
        return _(
            "%(player)s is out of the game, eliminated by %(by)s, who takes %(cards)s.",
            player=event.player,
            by=event.by,
            cards=cards_text(event.cards_taken),
        )
    if isinstance(event, DrewCard):
        if viewer is None or viewer == event.player:
            return _(
                "%(player)s drew a card: %(card)s.", player=event.player, card=card_name(event.card)
            )
        return _("%(player)s drew a card.", player=event.player)
    if isinstance(event, Reshuffled):
        return n_(
            "The draw pile was empty when %(player)s was to draw: the %(num)s traded card set "
            "aside was shuffled into a new draw pile.",
            "The draw pile was empty when %(player)s was to draw: the %(num)s traded cards set "
            "aside were shuffled into a new draw pile.",
            event.cards,
            player=event.player,
        )
    if isinstance(event, DrewNoCard):
        return _(
            "%(player)s draws no card: %(reason)s.", player=event.player, reason=told(event.reason)
        )
    if isinstance(event, Fortified):
        note = f" ({told(event.note)})" if event.note else ""
        return (
            _(
                "%(player)s moved %(armies)s from %(source)s to %(target)s.",
                player=event.player,
                armies=event.armies,
                source=place(event.source),
                target=place(event.target),
            )[:-1]
            + note
            + "."
        )
    if isinstance(event, Skipped):
        return skipped_sentence(event, viewer)
    if isinstance(event, MissedTurn):
        if event.missed > 1:
            return n_(
                "No orders from %(player)s by the deadline (%(num)s turn missed in a row).",
                "No orders from %(player)s by the deadline (%(num)s turns missed in a row).",
                event.missed,
                player=event.player,
            )
        return _("No orders from %(player)s by the deadline.", player=event.player)
    if isinstance(event, Away):
        return _(
            "%(player)s is away until %(until)s: the autopilot played the turn, and it does not "
            "count as missed.",
            player=event.player,
            until=event.until,
        )
    if isinstance(event, SeatTaken):
        if event.returned:
            return n_(
                "%(holder)s took over %(seat)s's seat before turn %(turn)s: %(seat)s had left "
                "the game after missed turns, and the seat is back with the %(count)s territory "
                "it held then that is still neutral, its armies there, and no cards; its orders "
                "are signed with %(holder)s's secret.",
                "%(holder)s took over %(seat)s's seat before turn %(turn)s: %(seat)s had left "
                "the game after missed turns, and the seat is back with the %(count)s "
                "territories it held then that are still neutral, their armies there, and no "
                "cards; its orders are signed with %(holder)s's secret.",
                len(event.returned),
                holder=event.holder,
                seat=event.player,
                turn=event.turn,
                count=len(event.returned),
            )
        if event.previous == event.player:
            return _(
                "%(holder)s took over %(seat)s's seat before turn %(turn)s: the same armies, "
                "cards and mission; its orders are signed with %(holder)s's secret from now on.",
                holder=event.holder,
                seat=event.player,
                turn=event.turn,
            )
        return _(
            "%(holder)s took over the seat %(seat)s from %(previous)s before turn %(turn)s: "
            "the same armies, cards and mission; its orders are signed with %(holder)s's "
            "secret from now on.",
            holder=event.holder,
            seat=event.player,
            previous=event.previous,
            turn=event.turn,
        )
    if isinstance(event, Dropped):
        values = {
            "player": event.player,
            "turns": _turns(event.missed),
            "armies": armies_text(event.armies),
            "where": n_("%(num)s territory", "%(num)s territories", event.territories),
        }
        if event.cards:
            return n_(
                "%(player)s missed %(turns)s in a row and leaves the game: their %(armies)s on "
                "%(where)s stay as neutral armies that only defend, their %(num)s card goes "
                "where traded cards go, and their seat is skipped.",
                "%(player)s missed %(turns)s in a row and leaves the game: their %(armies)s on "
                "%(where)s stay as neutral armies that only defend, their %(num)s cards go "
                "where traded cards go, and their seat is skipped.",
                event.cards,
                **values,
            )
        return _(
            "%(player)s missed %(turns)s in a row and leaves the game: their %(armies)s on "
            "%(where)s stay as neutral armies that only defend, and their seat is skipped.",
            **values,
        )
    if isinstance(event, RoundsOver) and event.team:
        return _(
            "Round %(rounds)s, the game's last, is over: the team %(team)s holds the most "
            "territories (%(territories)s, with %(armies)s; a tie goes to the most armies, then "
            "to the team of the earliest to play).",
            rounds=event.rounds,
            team=team_name(event.team),
            territories=n_("%(num)s territory", "%(num)s territories", event.territories),
            armies=armies_text(event.armies),
        )
    if isinstance(event, RoundsOver):
        return _(
            "Round %(rounds)s, the game's last, is over: %(player)s holds the most territories "
            "(%(territories)s, with %(armies)s; a tie goes to the most armies, then to the "
            "earliest to play).",
            rounds=event.rounds,
            player=event.player,
            territories=n_("%(num)s territory", "%(num)s territories", event.territories),
            armies=armies_text(event.armies),
        )
    if isinstance(event, Won) and event.team:
        return _("The team %(team)s has won the game!", team=team_name(event.team))
    if isinstance(event, Won):
        return _("%(player)s has won the game!", player=event.player)
    if isinstance(event, DiceKeyed):
        return _(
            "The dice come from the key and the order files of %(players)s.",
            players=", ".join(event.players),
        )
    return str(event)


def card_name(card: str) -> str:
    """A card as the language spoken names it: its territory, or the wild card."""
    return _("wild") if card == WILD else place(card)


KINDS: dict[type[Event], str] = {
    Reinforced: "turn",
    Traded: "trade",
    Placed: "place",
    Dealt: "setup",
    Dropped: "dropped",
    SeatTaken: "seat",
    Away: "away",
    SeatsDecided: "setup",
    RolledForFirst: "setup",
    Eliminated: "eliminated",
    fog_events.LeftGame: "eliminated",
    fog_events.MovedSeen: "fortify",
    fog_events.CardsHidden: "card",
    fog_events.TurnPlayed: "turn",
    DrewCard: "card",
    Reshuffled: "card",
    DrewNoCard: "card",
    Fortified: "fortify",
    Skipped: "skipped",
    Won: "won",
    RoundsOver: "won",
    Conquered: "battle",
    AttackStopped: "battle",
}
"""The story kind of each event told here (pbem.present.missions has those of missions and the
draft): what the reports style its paragraph by."""
