"""The context every report template gets: ready values from the viewer's view of the game."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pbem.core import dice, fog, fog_events, rules
from pbem.core.events import (
    Conquered,
    DiceKeyed,
    Event,
    Rolled,
    RolledForFirst,
)
from pbem.core.orders import Orders
from pbem.core.state import (
    NEUTRAL,
    CardRule,
    FogLevel,
    FortifyMode,
    GameState,
    Phase,
    TradedCards,
    team_name,
)
from pbem.languages import i18n
from pbem.languages.i18n import _, n_, place
from pbem.languages.numbering import Played, Undone, played, played_after
from pbem.present import missions as mission_view
from pbem.present.aids import decision_aids
from pbem.present.bounds import fog_window
from pbem.present.json_text import OneLine
from pbem.present.sentences import card_name
from pbem.present.sentences import cards_text as _cards
from pbem.present.skeleton import next_turn_of, order_skeleton, players_before
from pbem.present.stats import (
    Story,
    story_after,
)
from pbem.present.story import armies_before, tell
from pbem.present.svgmap import NEUTRAL_COLOUR, map_shapes, player_colours
from pbem.present.text import dice_faces
from pbem.present.view import game_view
from pbem.records import clock
from pbem.records.history import read_history
from pbem.records.store import Game


def _card_kind(state: GameState, card: str) -> str:
    kind = state.board.card_kind(card)
    if kind is None:
        return _("wild")
    return {"infantry": _("infantry"), "cavalry": _("cavalry"), "artillery": _("artillery")}.get(
        kind.value, kind.value
    )


def _roll_lines(rolls: Sequence[str], width: int = 66) -> list[str]:
    """The rolls as lines of at most `width`, never breaking inside a roll."""
    lines: list[str] = []
    for i, roll in enumerate(rolls):
        piece = roll + (";" if i < len(rolls) - 1 else "")
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append(piece)
    return lines


def dice_section(
    game: Game, resolution: int, events: Sequence[Event], player: str | None = None
) -> dict[str, Any]:
    """The dice check of a resolution: its key (revealed now), the previous key, the rolls.

    Public information once the resolution is done; it goes into the report and its view file,
    and `pbem verify` reads it back. In a fog game it also gives the battles with their keys
    (docs/fog.md); until the game is over a player's holds only the battles they were told of,
    each with the path to the commitment shown before the turn, and no key of the chain."""
    section: dict[str, Any] = {
        "resolution": resolution,
        "key": game.key(resolution).hex(),
        "previous_key": game.previous_key(resolution).hex(),
        "commitment": game.commitment,
        "rolls": [
            OneLine(
                {
                    "from": e.source,
                    "to": e.target,
                    "attacker": list(e.attacker),
                    "defender": list(e.defender),
                }
            )
            for e in events
            if isinstance(e, Rolled)
        ],
    }
    section["played"] = Played.from_events(events, resolution).label
    section.update(orders_section(game.key(resolution), events))
    first = [{"player": e.player, "die": e.die} for e in events if isinstance(e, RolledForFirst)]
    if first:
        section["first_player"] = first
    if game.state.phase is Phase.OVER:
        section["hidden_key"] = game.hidden_key.hex()
        section["hidden_commitment"] = game.hidden_commitment
    if game.state.options.fogged:
        section.update(fog_section(game, resolution, events, player))
        if fog.sight_of(game.state, player) is not None:
            for secret in ("key", "previous_key", "rolls", "dice_key", "first_player"):
                section.pop(secret, None)
    return section


def fog_section(
    game: Game, resolution: int, events: Sequence[Event], player: str | None
) -> dict[str, Any]:
    """A fog game's battles for their dice check (docs/fog.md): the commitment to this
    resolution's battle keys and to the next one's, and each battle told to `player` with its
    label, key and path."""
    board = game.state.board
    key = game.key(resolution)
    told_events = fog_events.told(game.state, events, player)
    out: dict[str, Any] = {"battles": []}
    if resolution:  # (the setup rolls no battle: no commitment to show for it)
        out["battle_root"] = fog.battle_root(key, board).hex()
    if game.state.phase is not Phase.OVER and resolution + 2 <= game.chain_length:
        out["next_battle_root"] = fog.battle_root(game.key(resolution + 1), board).hex()
    if game.state.phase is Phase.OVER:  # (the fog lifts: every battle of the game, to check)
        first = 1 if player is None else fog_window(resolution)  # (a player's: the latest)
        out["game"] = game_battles(game, resolution, events, first)
        if first > 1:
            out["game_from"] = first
    for b in fog_events.battles(told_events):
        battle, index, path = fog.battle_proof(key, board, b.label)
        out["battles"].append(
            {
                "label": b.label,
                "key": battle.hex(),
                "index": index,
                "path": [p.hex() for p in path],
                "rolls": [OneLine({"attacker": list(a), "defender": list(d)}) for a, d in b.rolls],
            }
        )
    return out


def game_battles(
    game: Game, resolution: int, events: Sequence[Event], first: int = 1
) -> list[dict[str, Any]]:
    """The battles of a fog game that is over, resolution by resolution from `first` (this
    one's `events` last), with what its dice key needs besides the keys the last report
    reveals: the digest of the orders (and the salt of a resolution played again). Each roll is
    written short, the attacker's dice, a slash, the defender's ("653/42"). A player's view
    file lists the latest resolutions' (from `bounds.fog_window`), so that it stays bounded;
    the moderator's, which the public record keeps, every one."""
    recorded = [(r, read_history(game.path, r).events) for r in range(first, resolution)]
    out = []
    for r, resolved in [*recorded, (resolution, tuple(events))]:
        battles = fog_events.battles(resolved)
        keyed = next((e for e in resolved if isinstance(e, DiceKeyed)), None)
        if not battles or keyed is None:
            continue
        entry: dict[str, Any] = {"resolution": r, "orders_digest": keyed.orders.hex()}
        if keyed.again:
            entry["again"] = keyed.again
        entry["battles"] = [
            {
                "label": b.label,
                "rolls": ["".join(map(str, a)) + "/" + "".join(map(str, d)) for a, d in b.rolls],
            }
            for b in battles
        ]
        out.append(entry)
    return out


def _unseen(state: GameState, events: Sequence[Event], player: str | None) -> frozenset[str]:
    """Under fog, the territories whose armies `player` did not see during `events`."""
    if player is None:
        return frozenset()
    seen = fog_events.seen_during(state, events, player)
    return frozenset(t for t in state.board.names if t not in seen)


def _fog_dice(section: Mapping[str, Any]) -> dict[str, Any]:
    """A fog game's battles as the dice check of a report shows them."""
    battles = []
    for b in section["battles"]:
        source, target, number = b["label"].split("|")
        rolls = [f"{dice_faces(r['attacker'])}/{dice_faces(r['defender'])}" for r in b["rolls"]]
        battles.append(
            {
                "name": _(
                    "%(source)s to %(target)s, battle %(number)s of the turn there",
                    source=place(source),
                    target=place(target),
                    number=number,
                ),
                "key": b["key"],
                "count": len(rolls),
                "lines": _roll_lines(rolls),
            }
        )
    return {
        "root": section.get("battle_root"),
        "next_root": section.get("next_battle_root"),
        "battles": battles,
    }


def orders_section(key: bytes, events: Sequence[Event]) -> dict[str, Any]:
    """What a resolution whose dice follow its orders adds to its dice check: each order file's
    digest, their digest D, the salt of a resolution played again (`again`) and the dice key
    they give (docs/dice.md); nothing for a resolution whose dice come from the key alone."""
    keyed = next((e for e in events if isinstance(e, DiceKeyed)), None)
    if keyed is None:
        return {}
    again = bytes.fromhex(keyed.again) if keyed.again else None
    out: dict[str, Any] = {
        "orders": [
            {"player": p, "digest": d} for p, d in zip(keyed.players, keyed.digests, strict=True)
        ],
        "orders_digest": keyed.orders.hex(),
        "dice_key": dice.dice_key(key, keyed.orders, again).hex(),
    }
    if keyed.again:
        out["again"] = keyed.again
    return out


KIT_COMMAND = "python3 pbem-player.pyz"
"""How a player runs the player's kit (pbem.kit.KIT_NAME), as the reports name its commands:
the player has the kit, not pbem."""


def check_lines(key: str, indent: str = "    ") -> list[str]:
    """The key check as shell lines of at most 78 characters: inside double quotes a backslash
    at the end of a line joins the next, and bytes.fromhex skips the spaces that come along."""
    return [
        f"{indent}python3 -c \"import hashlib; print(hashlib.sha256(bytes.fromhex('\\",
        f"{indent}{key}\\",
        f"{indent}')).hexdigest())\"",
    ]


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
    lang = i18n.current()
    if lang.code == i18n.DEFAULT:
        return clock.describe(game.deadline, game.schedule.zone, now)
    return lang.deadline(game.deadline.astimezone(game.schedule.zone), now)


def variants(state: GameState) -> list[str]:
    """The rules of a game that are not classic Risk's, in words (the report's header)."""
    options = state.options
    out = []
    if state.board.name != "classic":
        out.append(_("played on the board %(board)s", board=state.board.name))
    if not options.with_cards:
        out.append(_("no cards"))
    if options.cards is CardRule.FLAT:
        out.append(_("flat spoils: a set is worth what it shows, not what was traded before"))
    if options.with_cards and not options.territory_bonus:
        out.append(_("no +2 for a traded card that shows a territory of yours"))
    fortify = {
        FortifyMode.CONNECTED: _("fortify through a chain of your territories"),
        FortifyMode.UNLIMITED: _("fortify from any territory of yours to any other"),
        FortifyMode.NONE: _("no fortification"),
    }
    if options.fortify in fortify:
        out.append(fortify[options.fortify])
    if options.fortifies > 1 and options.fortify is not FortifyMode.NONE:
        out.append(
            _(
                "up to %(most)s fortifications a turn ([[fortify]] tables)",
                most=options.fortifies,
            )
        )
    if options.rounds and state.phase is Phase.PLAY and state.round:
        out.append(
            _(
                "the game ends after round %(rounds)s (the most territories win); this turn is "
                "in round %(round)s",
                rounds=options.rounds,
                round=state.round,
            )
        )
    elif options.rounds:
        out.append(
            _(
                "the game ends after round %(rounds)s (the most territories win)",
                rounds=options.rounds,
            )
        )
    if options.teams:
        out.append(
            _(
                "teams %(teams)s: team-mates never attack each other and win together",
                teams=team_list(state),
            )
        )
        if options.team_fortify:
            out.append(_("you may fortify into and through your team-mates' territories"))
        if options.team_cards:
            out.append(_("team-mates see each other's cards"))
    if options.fog is FogLevel.LIGHT:
        out.append(
            _("light fog: every owner is shown, armies only on and next to your territories")
        )
    elif options.fog is FogLevel.HEAVY:
        out.append(_("heavy fog: owners and armies are shown only on and next to your territories"))
    return out


def team_list(state: GameState) -> str:
    """The teams of a team game, numbered as the players' table marks them: "[1] alice +
    carol; [2] bob + dave"."""
    return "; ".join(
        f"[{n}] {team_name(team)}" for n, team in enumerate(state.options.teams, start=1)
    )


def game_over(state: GameState, player: str | None) -> str | None:
    """Who won, as the report's headline tells it to `player` (None: the moderator); None
    while the game goes on."""
    if state.winner is None:
        return None
    if state.options.teams:
        if player in state.team(state.winner):
            return _(
                "The game is over: your team, %(team)s, has won. Congratulations!",
                team=state.won_by,
            )
        return _("The game is over: the team %(team)s has won.", team=state.won_by)
    if player == state.winner:
        return _("The game is over: %(winner)s has won. Congratulations!", winner=state.winner)
    return _("The game is over: %(winner)s has won.", winner=state.winner)


def team_section(state: GameState, players: Sequence[Mapping[str, Any]], player: str) -> Any:
    """A player's team in a team game: its name, what it holds together, and each team-mate's
    hand where the game shows it (`hand` None where it does not); None without teams."""
    if not state.options.teams:
        return None
    team = state.team(player)
    mates = [p for p in players if p["name"] in team and p["name"] != player]
    return {
        "name": team_name(team),
        "territories": sum(len(state.owned(n)) for n in team),
        "armies": sum(state.total_armies(n) for n in team),
        "mates": [
            {
                "label": p["name"],
                "cards": p["cards"],
                "hand": [card_name(c) for c in p["hand"]] if "hand" in p else None,
            }
            for p in mates
        ],
    }


def report_context(
    game: Game,
    resolution: int,
    events: Sequence[Event],
    player: str | None,
    rejected: Sequence[str] = (),
    orders: Sequence[Orders] = (),
    now: datetime | None = None,
    undone: Sequence[Undone] = (),
    story: Story | None = None,
) -> dict[str, Any]:
    """Everything a report shows, as ready values (player None: the moderator's overview).

    `orders` are those the resolution carried out (for notes on what they asked); `now` is
    when the resolution was made (the deadline is told relative to it); `undone` the notes of
    the resolutions the moderator took back; `story` the story of the game so far (read from
    the history when not given, see `stats.story_after`)."""
    state = game.state
    if story is None:
        story = story_after(game.path, resolution, events, [p.name for p in state.players])
    stats = story.told(state, player)  # (under fog, the reader's side's)
    view = game_view(state, player, game.commitment, deadline_iso(game))
    colours = player_colours(state)
    section = dice_section(game, resolution, events, player)
    continents: list[dict[str, Any]] = []
    mates = state.mates(player) if player is not None else ()
    full = state  # (the game as it is; `state` below: as the reader may know it, under fog)
    state, hidden = fog.as_known(full, player) if player is not None else (full, frozenset())
    told = fog_events.told(full, events, player)
    for c in state.board.continents.values():
        holders = {state.owner(t) for t in c.territories}
        holder = holders.pop() if len(holders) == 1 and state.phase is not Phase.DRAFT else None
        holder = None if holder == fog.UNKNOWN else holder
        continents.append(
            {
                "name": place(c.name),
                "bonus": c.bonus,
                "holder": holder,
                "holder_colour": colours[holder][0] if holder else None,
                "mine": holder is not None and holder == player,
                "territories": [
                    {
                        "name": place(t),
                        "owner": mission_view.owner_shown(state, t),
                        "armies": None if t in hidden else state.armies(t),
                        "mine": player is not None and state.owner(t) == player,
                        "mate": player is not None and state.owner(t) in mates,
                        "colour": colours.get(state.owner(t), NEUTRAL_COLOUR)[0],
                    }
                    for t in c.territories
                ],
            }
        )
    players = []
    number = {n: i for i, team in enumerate(state.options.teams, start=1) for n in team}
    for p in view["players"]:
        label = seat_label(game, p["name"])
        players.append(
            {
                **p,
                "label": f"{label} [{number[p['name']]}]" if number else label,
                "team": number.get(p["name"]),
                "colour": colours[p["name"]][0],
                "continents": None
                if p["territories"] is None  # (heavy fog: another side's holdings unknown)
                else [place(c) for c in state.continents_held(p["name"])],
                "me": p["name"] == player,
                "next": state.phase is Phase.PLAY and p["name"] in state.awaiting(),
            }
        )
    rolls = [
        f"{dice_faces(r['attacker'])}/{dice_faces(r['defender'])}"
        for r in section.get("rolls", ())  # (none under fog: each battle has its own)
    ]
    first = [f"{r['player']} {r['die']}" for r in section.get("first_player", [])]
    context: dict[str, Any] = {
        "view": view,
        "game": state.game,
        "player": player,
        "kit": KIT_COMMAND,
        "neutral": NEUTRAL,
        "neutral_colour": NEUTRAL_COLOUR[0],
        "story": tell(
            told,
            player,
            armies_before(full, events),
            [o for o in orders if not hidden or o.player in full.team(player or "")],
            _unseen(full, events, player) if hidden else frozenset(),
            frozenset(full.team(player)) if player is not None else frozenset(),
        ),
        "piles": piles_context(view["piles"]),
        "continents": continents,
        "players": players,
        "resolution": resolution,
        "played": played(events, resolution),
        "after": played_after(events, resolution),
        "forecasts": [],  # the moderator's overview gets them from `report.render`
        "dice": section,
        "key": section.get("key"),
        "previous_key": section.get("previous_key"),
        "commitment": game.commitment,
        "check_command": _check_command(section["key"]) if "key" in section else None,
        "check_lines": check_lines(section["key"]) if "key" in section else [],
        "order_digests": section.get("orders", []),
        "dice_key": section.get("dice_key"),
        "again": section.get("again"),
        "roll_count": len(rolls),
        "roll_lines": _roll_lines(rolls),
        "first_player_dice": ", ".join(first),
        "hidden_key": section.get("hidden_key"),
        "fog_dice": _fog_dice(section) if "battles" in section else None,
        "hidden_commitment": game.hidden_commitment,
        "next_player": state.current_player.name if state.phase is Phase.PLAY else None,
        "awaiting": list(state.awaiting()),
        "rejected": list(rejected),
        "deadline": deadline_text(game, now),
        "undone": [u.told(game.schedule.zone if game.schedule else None) for u in undone],
        "variants": variants(state),
        "game_over": game_over(state, player),
        "teams": team_list(state) if state.options.teams else None,
        "team": team_section(state, players, player) if player is not None else None,
        "flat": state.options.cards is CardRule.FLAT,
        "with_cards": state.options.with_cards,
        "away": [],  # the players away (render_reports fills it in)
        "press": [],  # the table talk of the turn (likewise)
        "map": map_shapes(
            state, player, (e.target for e in told if isinstance(e, Conquered)), hidden
        ),
        **mission_view.report_missions(state, player),
        "stats": stats,
        "name_width": max(
            len(n)
            for n in [NEUTRAL, *(p["label"] for p in players)]
            + [t["owner"] for c in continents for t in c["territories"]]
        ),
        "charts": story.charts(full, player, {p: c[0] for p, c in colours.items()}),
        **story.lines(full, player),
    }
    if player is not None:
        context.update(_player_context(game, player))
    return context


def seat_label(game: Game, seat: str) -> str:
    """A seat as the players' table names it: its name, then who plays it when that is not
    the seat's first player (a substitute), or that a program does (a bot)."""
    reg = game.registration(seat)
    if reg is None:
        return seat
    if reg.bot is not None:
        return _("%(seat)s (a bot)", seat=seat)
    if reg.holder is not None and reg.holder != seat:
        return _("%(seat)s (played by %(holder)s)", seat=seat, holder=reg.holder)
    return seat


def piles_context(piles: Mapping[str, Any]) -> dict[str, Any]:
    """The cards beside the board, as sentences: the draw pile, the discards, the rule (under
    heavy fog, that fog hides the piles)."""
    if piles["draw_pile"] is None:
        hidden = _("The draw pile and the cards set aside are hidden by the fog.")
        return {"draw_pile": hidden, "discards": "", "rule": "", "lines": i18n.wrap(hidden, 70)}
    discards = list(piles["discards"])
    if piles["traded_cards"] == TradedCards.ASIDE.value:
        rule = _(
            "Traded cards are set aside face up, out of the draw pile; when it runs out, they "
            "are shuffled into a new one."
        )
        aside = (
            _(
                "Set aside (%(count)s, in the order traded): %(cards)s.",
                count=len(discards),
                cards=", ".join(card_name(c) for c in discards),
            )
            if discards
            else _("Set aside: none.")
        )
    else:
        rule = _("In this game traded cards go back into the draw pile (the rule it began with).")
        aside = ""
    draw_pile = _("Draw pile: %(cards)s.", cards=_cards(int(piles["draw_pile"])))
    return {
        "draw_pile": draw_pile,
        "discards": aside,
        "rule": rule,
        "lines": i18n.wrap(f"{draw_pile} {aside}", 70) + i18n.wrap(rule, 70),
    }


def _player_context(game: Game, player: str) -> dict[str, Any]:
    state = game.state
    reg = game.registration(player)
    secret = reg.secret if reg else ""
    me = state.player(player)
    owned = set(state.owned(player))
    base = rules.reinforcement(state, player)
    held = rules.sets_in(state.board, me.hand)
    values = [rules.trade_value(state, s, state.sets_traded) for s in held]
    sets = [
        {
            "cards": [card_name(c) for c in s],
            "value": worth,
            "bonus": [place(c) for c in s if c in owned and state.options.territory_bonus],
        }
        for s, worth in zip(held, values, strict=True)
    ]
    value = max(values, default=rules.set_value(state.sets_traded))
    playing = me.alive and state.phase is not Phase.OVER
    awaited = player in state.awaiting()  # only the players asked for orders get a file
    turn = next_turn_of(state, player)
    return {
        "aids": decision_aids(fog.as_known(state, player)[0], player)
        if playing and state.phase is Phase.PLAY
        else None,
        "secret": secret,
        "holder": reg.holder if reg else None,
        "hand": [{"card": card_name(c), "kind": _card_kind(state, c)} for c in me.hand],
        "sets": sets,
        "set_value": value,
        "must_trade": len(me.hand) >= rules.FORCED_TRADE_HAND,
        "reinforcement": {
            "territories": base.territories,
            "from_territories": base.from_territories,
            "continents": [
                {"name": place(c), "bonus": state.board.continents[c].bonus}
                for c in base.continents
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
        "before_me": players_before(state, player) if state.phase is Phase.PLAY else [],
        "skeleton": order_skeleton(state, player, secret) if playing and awaited else None,
    }


def _missed_warning(state: GameState, player: str) -> str | None:
    """What a player who is missing turns should read (None when they are not)."""
    me = state.player(player)
    if not me.missed or not me.alive or state.phase is Phase.OVER:
        return None
    limit = state.options.drop_after
    text = (
        n_(
            "You sent no valid orders for your last %(num)s turn: the autopilot played for you.",
            "You sent no valid orders for your last %(num)s turns: the autopilot played for you.",
            me.missed,
        )
        if me.missed > 1
        else _("You sent no valid orders for your last turn: the autopilot played for you.")
    )
    if limit:
        left = limit - me.missed
        text += " " + n_(
            "Miss %(num)s more turn in a row and you leave the game; valid orders reset the count.",
            "Miss %(num)s more turns in a row and you leave the game; valid orders reset the "
            "count.",
            left,
        )
    return text
