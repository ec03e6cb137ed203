"""The table: the working copy of a game that one resolution changes, and what every kind of
turn does to it alike: armies placed, sets traded and cards drawn, missions done or falling
back, a turn missed or a player dropped, and the win (the last player or team standing, the
last round over).

The engine (`engine`) makes a table from the state, changes it step by step and freezes it
into the next state; nothing else outlives a resolution.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence

from pbem.core import missions, rules
from pbem.core.board import Board
from pbem.core.dice import Stream
from pbem.core.events import (
    Away,
    DrewCard,
    DrewNoCard,
    Dropped,
    Event,
    MissedTurn,
    MissionCompleted,
    MissionFellBack,
    Placed,
    Reshuffled,
    RoundsOver,
    Traded,
    Won,
)
from pbem.core.orders import CardSet
from pbem.core.state import NEUTRAL, GameState, Holding, Phase, Player, replaced


class Table:
    """A mutable working copy of the state, used only inside one resolution."""

    def __init__(self, state: GameState, away: Mapping[str, str] | None = None) -> None:
        self.state = state
        self.away = away or {}
        self.board = state.board
        self.owner: dict[str, str] = {}
        self.armies: dict[str, int] = {}
        for t, h in state.territories.items():
            self.owner[t] = h.owner
            self.armies[t] = h.armies
        self.hands = {p.name: list(p.hand) for p in state.players}
        self.alive = {p.name: p.alive for p in state.players}
        self.to_place = {p.name: p.to_place for p in state.players}
        self.missed = {p.name: p.missed for p in state.players}
        self.dropped = {p.name: p.dropped for p in state.players}
        self.fallback = {p.name: p.mission_fallback for p in state.players}
        # Missions are checked after each placement of a play turn; a setup turn's placements
        # are simultaneous, so its missions are checked once, when all are placed.
        self.missions = state.options.missions
        self.check_on_place = self.missions and state.phase is Phase.PLAY
        self.promised = state.options.stop_at_promised
        self.deck = list(state.deck)
        self.discards = list(state.discards)
        self.sets_traded = state.sets_traded
        self.winner = state.winner
        self.events: list[Event] = []
        self._card_order = _card_order(self.board)

    def owned(self, player: str) -> list[str]:
        return [t for t, o in self.owner.items() if o == player]

    def place(self, player: str, territory: str, armies: int, why: str) -> None:
        self.armies[territory] += armies
        self.events.append(Placed(player, territory, armies, why))
        if self.check_on_place:
            self.check_missions(player)

    def seat_of(self, name: str) -> Player:
        return replaced(
            self.state.player(name), alive=self.alive[name], mission_fallback=self.fallback[name]
        )

    def check_missions(self, first: str) -> None:
        """In a game with missions: the first player (from `first`, who acts, then round the
        table) whose mission is done wins at once."""
        if not self.missions or self.winner:
            return
        for name in missions.check_order([p.name for p in self.state.players], first):
            if not self.alive[name]:
                continue
            seat = self.seat_of(name)
            mission = missions.current(seat, self.state.mates(name))
            if mission is not None and missions.complete(
                mission, name, self.board, self.owner, self.armies, self.alive
            ):
                assert seat.mission is not None
                self.events.append(MissionCompleted(name, mission.card, seat.mission))
                win(self, name)
                return

    def missions_fall_back(self, gone: str, reason: str, victor: str | None = None) -> None:
        """`gone` left the game, eliminated by `victor` or dropped: every other player's
        "destroy" mission aimed at them becomes "occupy 24 territories"."""
        for p in self.state.players:
            seat = self.seat_of(p.name)
            mates = self.state.mates(p.name)
            if seat.alive and p.name != victor and missions.falls_back(seat, gone, mates):
                self.fallback[p.name] = True
                self.events.append(MissionFellBack(p.name, gone, reason))

    def trade(
        self,
        player: str,
        cards: CardSet,
        *,
        forced: bool,
        bonus_used: bool,
        unwritten: bool = False,
    ) -> tuple[int, str | None]:
        """Trade a set: its cards go onto the discard pile (or, by the old rule, back into the
        deck). Returns its value and the territory that gets the +2 (if a card shows one the
        player holds and the +2 was not yet given)."""
        hand = self.hands[player]
        for card in cards:
            hand.remove(card)
        self.to_pile(cards)
        value = rules.trade_value(self.state, cards, self.sets_traded)
        self.sets_traded += 1
        self.events.append(
            Traded(player, tuple(cards), value, self.sets_traded, forced, unwritten or None)
        )
        bonus = None
        if not bonus_used:
            allowed = self.state.options.territory_bonus
            bonus = rules.card_bonus_territory([cards], self.owned(player), allowed=allowed)
        return value, bonus

    def to_pile(self, cards: Sequence[str]) -> None:
        """Cards that leave a hand (a traded set, a dropped player's hand) go where traded
        cards go: the discard pile (rule "aside"), or back into the deck in board order."""
        if self.state.options.sets_aside:
            self.discards.extend(cards)
        else:
            self.deck.extend(cards)
            self.deck.sort(key=self._card_order.__getitem__)

    def living(self) -> list[str]:
        return [p for p, alive in self.alive.items() if alive]

    def last_standing(self, prefer: str | None = None) -> str | None:
        """Who wins because no one else is left: the last player in the game; in a team game,
        once one team alone is left, `prefer` (who ended it) when they are of that team and in
        the game, else its first player still in the game in seat order (the order of play
        from the player who played first)."""
        teams = self.state.options.teams
        if not teams:
            living = self.living()
            return living[0] if len(living) == 1 else None
        team = rules.last_team(self.alive, teams)
        if team is None:
            return None
        if prefer in team and self.alive[prefer]:
            return prefer
        return next(p.name for p in self.state.players if p.name in team and self.alive[p.name])

    def draw(self, player: str, hidden: Stream) -> None:
        """The card earned by a conquest: card number randbelow(cards in the pile) of the draw
        pile in board order, from the resolution's hidden stream. An empty pile first takes the
        discards (the reshuffle: the draw itself is the shuffle, docs/dice.md)."""
        if not self.deck and self.discards:
            self.events.append(Reshuffled(player, len(self.discards)))
            self.deck = sorted(self.discards, key=self._card_order.__getitem__)
            self.discards = []
        if not self.deck:
            self.events.append(
                DrewNoCard(
                    player, "the draw pile and the discard pile are empty: every card is in a hand"
                )
            )
            return
        card = self.deck.pop(hidden.randbelow(len(self.deck)))
        self.hands[player].append(card)
        self.events.append(DrewCard(player, card))

    def view(self) -> GameState:
        """The state with the table's territories, for a rules question asked mid-resolution;
        cheaper than `freeze` (nothing is copied), valid only until the table changes."""
        return replaced(self.state, territories=_Holdings(self))

    def freeze(self, **changes: object) -> GameState:
        """The state as the table has it now, with `changes` (fields of GameState) made. What
        did not change is kept: the same Player and Holding objects (they are frozen)."""
        players = tuple(self._seat(p) for p in self.state.players)
        owner, armies = self.owner, self.armies
        old = self.state.territories
        territories = {}
        for t in self.board.names:
            held = old[t]
            o, a = owner[t], armies[t]
            territories[t] = held if held.armies == a and held.owner == o else Holding(o, a)
        return replaced(
            self.state,
            players=players,
            territories=territories,
            deck=tuple(self.deck),
            discards=tuple(self.discards),
            sets_traded=self.sets_traded,
            winner=self.winner,
            **changes,
        )

    def _seat(self, p: Player) -> Player:
        """Player `p` as the table has them now (`p` itself when nothing changed)."""
        name = p.name
        alive, hand, to_place = self.alive[name], self.hands[name], self.to_place[name]
        missed, dropped, fallback = self.missed[name], self.dropped[name], self.fallback[name]
        if (
            alive == p.alive
            and to_place == p.to_place
            and missed == p.missed
            and dropped == p.dropped
            and fallback == p.mission_fallback
            and len(hand) == len(p.hand)
            and tuple(hand) == p.hand
        ):
            return p
        return replaced(
            p,
            alive=alive,
            hand=tuple(hand),
            to_place=to_place,
            missed=missed,
            dropped=dropped,
            mission_fallback=fallback,
        )


@functools.lru_cache(maxsize=8)
def _card_order(board: Board) -> Mapping[str, int]:
    """Each card's place in the board's deck order (territories, then the wild cards)."""
    return {c: i for i, c in enumerate(board.cards())}


class _Holdings(Mapping[str, Holding]):
    """A read-only view of a table's territories as holdings, built on demand."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def __getitem__(self, territory: str) -> Holding:
        return Holding(self._table.owner[territory], self._table.armies[territory])

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.owner)

    def __len__(self) -> int:
        return len(self._table.owner)


def count_turn(table: Table, player: str, turn: int, missed: bool) -> None:
    """A missed turn adds one to the player's count (with an event); orders reset it. The
    turn of a player away on a vacation, which the autopilot played, leaves it as it was."""
    if missed and player in table.away:
        table.events.append(Away(player, turn, table.away[player]))
    elif missed:
        table.missed[player] += 1
        table.events.append(MissedTurn(player, turn, table.missed[player]))
    else:
        table.missed[player] = 0


def drop_if_due(table: Table, player: str) -> None:
    """A player who missed `drop_after` turns in a row leaves: their armies stay as neutral
    armies that only defend, their cards go back to the pile, their seat is skipped. The last
    player in the game is never dropped (when every player of a setup turn is silent, they
    leave in seat order until one is left, who wins)."""
    limit = table.state.options.drop_after
    if not limit or table.missed[player] < limit or table.living() in ([], [player]):
        return
    held = table.owned(player)
    armies = sum(table.armies[t] for t in held)
    for territory in held:
        table.owner[territory] = NEUTRAL
    cards = table.hands[player]
    table.hands[player] = []
    table.to_pile(cards)
    table.alive[player] = False
    table.dropped[player] = True
    table.to_place[player] = 0
    table.events.append(Dropped(player, table.missed[player], len(held), armies, len(cards)))
    table.missions_fall_back(player, f"{player} left the game after missed turns")
    if table.state.phase is Phase.PLAY:
        table.check_missions(player)


def win(table: Table, player: str) -> None:
    """The game ends: `player` won (once; a mission done first has already ended it)."""
    if table.winner:
        return
    table.winner = player
    teams = table.state.options.teams
    table.events.append(Won(player, table.state.team(player) if teams else None))


def rounds_over(table: Table) -> None:
    """The last round is over: the player still in the game with the most territories wins,
    then the one with the most armies, then the earliest in the order of play. In a team game
    the team with the most territories together wins (then the most armies, then the one
    whose player still in the game plays earliest), told as won by that player."""
    state = table.state
    teams = state.options.teams or tuple((p,) for p in table.living())
    order = {p.name: rules.place_in_round(state, p.seat) for p in state.players}
    held = {
        team: [t for t, o in table.owner.items() if o in team]
        for team in teams
        if any(table.alive[n] for n in team)
    }

    def armies(team: tuple[str, ...]) -> int:
        return sum(table.armies[t] for t in held[team])

    def first(team: tuple[str, ...]) -> str:
        return min((n for n in team if table.alive[n]), key=order.__getitem__)

    best = min(held, key=lambda team: (-len(held[team]), -armies(team), order[first(team)]))
    winner = first(best)
    team = best if state.options.teams else None
    table.events.append(
        RoundsOver(state.options.rounds, winner, len(held[best]), armies(best), team)
    )
    win(table, winner)
