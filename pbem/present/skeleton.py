"""The ready order file each report ends with: valid as it is, with commented examples."""

from __future__ import annotations

from dataclasses import replace

from pbem.core import rules
from pbem.core.state import FortifyMode, GameState, Phase
from pbem.languages.i18n import _, place
from pbem.present import missions as mission_view


def next_turn_of(state: GameState, player: str) -> int | None:
    """The number of `player`'s next turn (None when they will not play again)."""
    if state.phase in (Phase.DRAFT, Phase.SETUP):
        return state.turn
    if state.phase is not Phase.PLAY or not state.player(player).alive:
        return None
    seat, turn, rounds = state.current, state.turn, state.round
    for _seat in range(len(state.players)):
        if state.players[seat].name == player:
            return turn
        following = rules.next_seat(state, seat)
        if rules.round_ends(replace(state, current=seat), following):
            rounds += 1
            if rounds > state.options.rounds:
                return None  # the game ends at its round limit first
        seat, turn = following, turn + 1
    return None


def players_before(state: GameState, player: str) -> list[str]:
    """Who plays before `player`'s next turn, in order (the current player first)."""
    out: list[str] = []
    seat = state.current
    for _seat in range(len(state.players)):
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
        lines.append(
            'trade = "best"            # ' + _("you hold 5 or more cards: a trade is required")
        )
    elif state.phase is Phase.PLAY and rules.sets_in(state.board, me.hand):
        lines.append('# trade = "best"          # ' + _("you can trade a set"))
    owned = state.owned(player)
    team = state.team(player)  # (a team-mate's territory is no border to hold, nor to attack)
    neighbours = state.board.neighbours
    borders = [t for t in owned if any(state.owner(n) not in team for n in neighbours(t))]
    strongest = max(borders or owned, key=lambda t: (state.armies(t), t), default=None)
    lines += [
        "",
        "[[place]]",
        f'territory = "{_quoted_place(strongest)}"',
        'armies = "rest"           # ' + _("every army the other [[place]] tables leave"),
    ]
    other = next((t for t in borders or owned if t != strongest), None)
    if other is not None:
        lines += [
            "",
            "# [[place]]               # " + _("more [[place]] tables split your armies"),
            f'# territory = "{_quoted_place(other)}"',
            "# armies = 3",
        ]
    if state.phase is Phase.PLAY and strongest is not None:
        enemy = min(
            (n for n in neighbours(strongest) if state.owner(n) not in team),
            key=lambda n: (state.armies(n), n),
            default=None,
        )
        if enemy:
            lines += [
                "",
                "# [[attack]]",
                f'# from = "{_quoted_place(strongest)}"',
                f'# to = "{_quoted_place(enemy)}"',
                "# stop_at = 3             # " + _("optional: stop when down to 3 armies"),
                '# move = "all"            # ' + _('optional: "all", "min" or a number'),
            ]
        inner = [t for t in owned if t not in borders and state.armies(t) > 1]
        friend = next((n for t in inner for n in state.board.neighbours(t) if n in borders), None)
        if state.options.fortify is FortifyMode.NONE:
            pass  # (a game without fortification: nothing to suggest)
        elif inner and friend:
            source = next(t for t in inner if friend in state.board.neighbours(t))
            lines += [
                "",
                "# [fortify]",
                f'# from = "{_quoted_place(source)}"',
                f'# to = "{_quoted_place(friend)}"',
                '# armies = "all"',
            ]
        elif len(borders) > 1:
            target = next((n for n in state.board.neighbours(strongest) if n in borders), None)
            if target:
                lines += [
                    "",
                    "# [fortify]",
                    f'# from = "{_quoted_place(strongest)}"',
                    f'# to = "{_quoted_place(target)}"',
                    "# armies = 2",
                ]
    return "\n".join(lines) + "\n"


def _quoted_place(name: str | None) -> str:
    """A territory's name in the language spoken, ready to go between TOML's double quotes
    (every language's names are accepted in orders)."""
    return place(name or "").replace("\\", "\\\\").replace('"', '\\"')
