"""What each reader may see of a game: one pure function, used by every way out.

Reports, `show --json`, the view file sent with each report and the player's own order checker
all go through `game_view`, so a hand, a secret or the deck cannot leak by another road.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.core import rules
from pbem.core.board import Board
from pbem.core.state import (
    NEUTRAL,
    GameState,
    Holding,
    Options,
    Phase,
    Player,
)


def game_view(
    state: GameState, player: str | None = None, commitment: str = "", deadline: str | None = None
) -> dict[str, Any]:
    """DESIGN §7's view: the moderator's (player None: every hand) or one player's (own hand).

    `deadline`: when the pending turn is due (ISO 8601 with offset), in games with deadlines."""
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
                if state.phase is Phase.SETUP
                else rules.reinforcement(state, p.name).total
            )
            if p.alive
            else 0,
        }
        if p.missed:
            entry["missed"] = p.missed
        if p.dropped:
            entry["dropped"] = True
        if player is None or player == p.name:
            entry["hand"] = list(p.hand)
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
        "next_set_value": rules.set_value(state.sets_traded),
        "board": state.board.name,
        "options": state.options.to_dict(),
        "piles": card_piles(state),
        "players": players,
        "territories": {
            t: {"owner": h.owner, "armies": h.armies} for t, h in state.territories.items()
        },
    }
    if deadline is not None and state.phase is not Phase.OVER:
        view["deadline"] = deadline
    if player is not None:
        view["player"] = player
    if state.has_neutral():
        view["neutral"] = {
            "territories": len(state.owned(NEUTRAL)),
            "armies": state.total_armies(NEUTRAL),
        }
    return view


def card_piles(state: GameState) -> dict[str, Any]:
    """What everyone sees of the cards beside the board: where traded cards go, how many cards
    the draw pile holds (not which), and the discard pile face up, in the order traded."""
    return {
        "traded_cards": state.options.traded_cards.value,
        "draw_pile": len(state.deck),
        "discards": list(state.discards),
    }


def state_from_view(view: Mapping[str, Any], board: Board) -> GameState:
    """A state good enough to check the viewing player's orders: other hands and the draw
    pile, which the view does not show, are left empty."""
    return GameState(
        game=str(view["game"]),
        board=board,
        options=Options.from_dict(view.get("options") or {}),
        players=tuple(
            Player(
                name=str(p["name"]),
                seat=int(p["seat"]),
                alive=bool(p["alive"]),
                hand=tuple(p.get("hand", ())),
                to_place=int(p["reinforcements"]) if view["phase"] == "setup" else 0,
                missed=int(p.get("missed", 0)),
                dropped=bool(p.get("dropped", False)),
            )
            for p in view["players"]
        ),
        territories={
            t: Holding(str(view["territories"][t]["owner"]), int(view["territories"][t]["armies"]))
            for t in board.names
        },
        deck=(),
        discards=tuple((view.get("piles") or {}).get("discards", ())),
        phase=Phase(view["phase"]),
        turn=int(view["turn"]),
        resolution=int(view["resolution"]),
        current=next(
            (i for i, p in enumerate(view["players"]) if p["name"] in view["awaiting"]), 0
        ),
        sets_traded=int(view["sets_traded"]),
        winner=view.get("winner"),
    )
