"""Reports: what each player is sent after a resolution, rendered from their view.

One Jinja2 environment per game directory (the game's own `templates/` before the built-in
ones), with StrictUndefined so a typo in a template fails loudly. Templates only format: this
module hands them ready values.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from pbem import dice, rules
from pbem.events import (
    AttackStopped,
    Conquered,
    Dealt,
    DrewCard,
    Eliminated,
    Event,
    Fortified,
    Placed,
    Reinforced,
    Rolled,
    RolledForFirst,
    SeatsDecided,
    Skipped,
    Traded,
    Won,
)
from pbem.state import NEUTRAL, GameState, Phase
from pbem.store import Game, atomic_write, report_dir
from pbem.view import game_view

MODERATOR = "_moderator"


def builtin_templates() -> Path:
    """The templates that ship with pbem (inside the wheel, or beside the package in a checkout)."""
    packaged = resources.files("pbem") / "templates"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "templates"


@functools.lru_cache(maxsize=32)
def environment(game_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja2 environment for a game: its own templates/ folder first, then the built-in."""
    loaders: list[jinja2.BaseLoader] = []
    if game_dir is not None and (game_dir / "templates").is_dir():
        loaders.append(jinja2.FileSystemLoader(str(game_dir / "templates")))
    loaders.append(jinja2.FileSystemLoader(str(builtin_templates())))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(["html", "htm", "xml", "svg"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def narrate(event: Event, viewer: str | None) -> str:
    """One event as a sentence for `viewer` (None: the moderator, who sees every card)."""
    if isinstance(event, RolledForFirst):
        return f"{event.player} rolled {event.die} for first player."
    if isinstance(event, SeatsDecided):
        return "Order of play: " + ", ".join(event.order) + "."
    if isinstance(event, Dealt):
        return f"{event.player} was dealt {len(event.territories)} territories, one army each."
    if isinstance(event, Reinforced):
        parts = f"{event.territories} territories give {event.from_territories}"
        if event.continents:
            parts += f"; {', '.join(event.continents)} give {event.from_continents}"
        return f"Turn {event.turn}, {event.player}: {parts}."
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
        a = " ".join(map(str, event.attacker))
        d = " ".join(map(str, event.defender))
        return (
            f"{event.source} → {event.target}: {a} against {d}; "
            f"{event.player} loses {event.attacker_losses}, "
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
    if isinstance(event, Fortified):
        note = f" ({event.note})" if event.note else ""
        return f"{event.player} moved {event.armies} from {event.source} to {event.target}{note}."
    if isinstance(event, Skipped):
        return f"{event.player}'s order to {event.order} was skipped: {event.reason}."
    if isinstance(event, Won):
        return f"{event.player} has won the game!"
    return str(event)


def order_skeleton(state: GameState, player: str, secret: str) -> str:
    """A ready order file for the player's next turn, with commented examples."""
    lines = [
        f'game = "{state.game}"',
        f"turn = {state.turn}",
        f'player = "{player}"',
        f'secret = "{secret}"',
    ]
    me = state.player(player)
    if state.phase is Phase.PLAY and len(me.hand) >= rules.FORCED_TRADE_HAND:
        lines.append('trade = "best"            # you hold 5 or more cards: a trade is required')
    elif state.phase is Phase.PLAY and rules.sets_in(state.board, me.hand):
        lines.append('# trade = "best"          # you can trade a set')
    owned = state.owned(player)
    borders = [t for t in owned if any(state.owner(n) != player for n in state.board.neighbours(t))]
    strongest = max(borders or owned, key=lambda t: (state.armies(t), t), default=None)
    lines += ["", "[[place]]", f'territory = "{strongest}"', 'armies = "rest"']
    if state.phase is Phase.PLAY and strongest is not None:
        enemy = next(
            (n for n in state.board.neighbours(strongest) if state.owner(n) != player), None
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
    return "\n".join(lines) + "\n"


def _card_kind(state: GameState, card: str) -> str:
    kind = state.board.card_kind(card)
    return kind.value if kind is not None else "wild"


def report_context(
    game: Game, resolution: int, events: Sequence[Event], player: str | None
) -> dict[str, Any]:
    """Everything a report shows, as ready values (player None: the moderator's overview)."""
    state = game.state
    view = game_view(state, player, game.commitment)
    key = game.key(resolution)
    previous = dice.chain_key(game.seed, resolution, game.chain_length)
    continents = []
    for c in state.board.continents.values():
        holders = {state.owner(t) for t in c.territories}
        continents.append(
            {
                "name": c.name,
                "bonus": c.bonus,
                "holder": holders.pop() if len(holders) == 1 else None,
                "territories": [
                    {
                        "name": t,
                        "owner": state.owner(t),
                        "armies": state.armies(t),
                        "mine": player is not None and state.owner(t) == player,
                    }
                    for t in c.territories
                ],
            }
        )
    context: dict[str, Any] = {
        "view": view,
        "player": player,
        "neutral": NEUTRAL,
        "story": [narrate(e, player) for e in events],
        "continents": continents,
        "resolution": resolution,
        "key": key.hex(),
        "previous_key": previous.hex(),
        "commitment": game.commitment,
        "hidden_key": dice.hidden_key(game.seed).hex() if state.phase is Phase.OVER else None,
        "hidden_commitment": dice.hidden_commitment(game.seed).hex(),
        "next_player": state.current_player.name if state.phase is Phase.PLAY else None,
    }
    if player is not None:
        reg = game.registration(player)
        me = state.player(player)
        base = rules.reinforcement(state, player)
        sets = rules.sets_in(state.board, me.hand)
        context.update(
            secret=reg.secret if reg else "",
            hand=[{"card": c, "kind": _card_kind(state, c)} for c in me.hand],
            sets=[list(s) for s in sets],
            set_value=rules.set_value(state.sets_traded),
            reinforcement={
                "territories": base.territories,
                "from_territories": base.from_territories,
                "continents": [
                    {"name": c, "bonus": state.board.continents[c].bonus} for c in base.continents
                ],
                "total": base.total,
                "best_set": rules.set_value(state.sets_traded) if sets else 0,
            },
            alive=me.alive,
            skeleton=order_skeleton(state, player, reg.secret if reg else "")
            if me.alive and state.phase is not Phase.OVER
            else None,
        )
    return context


def render_text(game: Game, resolution: int, events: Sequence[Event], player: str | None) -> str:
    template = "moderator.txt.j2" if player is None else "report.txt.j2"
    env = environment(game.path.resolve())
    return env.get_template(template).render(report_context(game, resolution, events, player))


def write_reports(game: Game, resolution: int, events: Sequence[Event]) -> tuple[Path, ...]:
    """Write every player's report and view file, and the moderator's overview."""
    folder = report_dir(game.path, resolution)
    written: list[Path] = []
    for p in game.state.players:
        text_path = folder / f"{p.name}.txt"
        atomic_write(text_path, render_text(game, resolution, events, p.name))
        view_path = folder / f"{p.name}.view.json"
        view = game_view(game.state, p.name, game.commitment)
        atomic_write(view_path, json.dumps(view, indent=2, ensure_ascii=False) + "\n")
        written += [text_path, view_path]
    overview = folder / f"{MODERATOR}.txt"
    atomic_write(overview, render_text(game, resolution, events, None))
    written.append(overview)
    return tuple(written)
