"""Secret missions and the draft as readers see them: who may see which mission, the mission
entries of the views, the lines of reports and `pbem show`, and the draft's story.

A mission is secret: a player sees only their own (with how far they are), the moderator sees
every one, and when the game is over everyone sees every one (the card dealt, and what it
became if a "destroy" mission fell back).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pbem.core import fog, missions
from pbem.core.events import Drafted, Event, MissionCompleted, MissionDealt, MissionFellBack
from pbem.core.orders import REST
from pbem.core.state import NEUTRAL, GameState, Phase, Player
from pbem.languages.i18n import _, current, n_, place
from pbem.languages.reasons import told


def may_see(state: GameState, holder: str, viewer: str | None) -> bool:
    """Whether `viewer` (None: the moderator) may see `holder`'s mission now."""
    return viewer is None or viewer == holder or state.phase is Phase.OVER


UNCLAIMED = "unclaimed"
"""How reports name the holder of a territory nobody has drafted yet."""


def owner_shown(state: GameState, territory: str) -> str:
    """A territory's holder as a report names it: "unclaimed" during the draft, the neutral
    armies in the reader's word for them."""
    if state.phase is Phase.DRAFT:
        return UNCLAIMED
    return owner_name(state.owner(territory))


def owner_name(owner: str) -> str:
    """An owner as the reports name it: a player by name, the neutral armies in the reader's
    word for them."""
    return _("neutral") if owner == NEUTRAL else owner


def hidden_from(event: Event, viewer: str | None) -> bool:
    """Whether a report for `viewer` leaves `event` out: a mission dealt to, or fallen back
    for, another player (told to everyone in the final report's list of missions)."""
    if isinstance(event, (MissionDealt, MissionFellBack)):
        return viewer is not None and viewer != event.player
    return False


def goal(mission: missions.Mission, own: bool = True) -> str:
    """A mission card as the reader reads it (`Mission.describe` in the reader's language);
    `own`: the reader's own card (the choice it leaves is "yours", else "theirs")."""
    if mission.target is not None:
        return _("eliminate %(player)s from the game", player=mission.target)
    if mission.continents:
        named = current().listing([place(c) for c in mission.continents])
        if mission.plus_one and not own:
            return _(
                "conquer %(continents)s and one more continent of their choice", continents=named
            )
        if mission.plus_one:
            return _(
                "conquer %(continents)s and one more continent of your choice", continents=named
            )
        return _("conquer %(continents)s", continents=named)
    if mission.armies_each > 1:
        return _(
            "occupy %(territories)s territories with at least %(armies)s armies on each",
            territories=mission.territories,
            armies=mission.armies_each,
        )
    return _("occupy %(territories)s territories", territories=mission.territories)


def progress(state: GameState, player: str, viewer: str | None) -> str:
    """How far `player` is with their mission, for `viewer`, in the reader's language (as
    `missions.progress` counts it): "you hold 9/12 of Asia, 4/6 of Africa"."""
    mission = missions.current(state.player(player), state.mates(player))
    if mission is None:
        return ""
    mine = viewer == player
    if mission.target is not None:
        left = len(state.owned(mission.target))
        return n_(
            "%(player)s holds %(num)s territory",
            "%(player)s holds %(num)s territories",
            left,
            player=mission.target,
        )
    board = state.board
    if mission.continents:
        owner = {t: h.owner for t, h in state.territories.items()}
        parts = ", ".join(
            _(
                "%(held)s/%(size)s of %(continent)s",
                held=missions.continent_count(board, owner, player, c),
                size=len(board.continents[c].territories),
                continent=place(c),
            )
            for c in mission.continents
        )
        text = (
            _("you hold %(parts)s", parts=parts)
            if mine
            else _("%(player)s holds %(parts)s", player=player, parts=parts)
        )
        if mission.plus_one:
            others = [
                place(c) for c in state.continents_held(player) if c not in mission.continents
            ]
            text += "; " + _(
                "one more continent: %(continents)s",
                continents=", ".join(others) if others else _("none held yet"),
            )
        return text
    count = sum(1 for t in state.owned(player) if state.armies(t) >= mission.armies_each)
    values = {"player": player, "held": count, "territories": mission.territories}
    if mission.armies_each > 1:
        values["armies"] = mission.armies_each
        if mine:
            return _(
                "you hold %(held)s/%(territories)s territories with at least %(armies)s armies",
                **values,
            )
        return _(
            "%(player)s holds %(held)s/%(territories)s territories with at least %(armies)s armies",
            **values,
        )
    if mine:
        return _("you hold %(held)s/%(territories)s territories", **values)
    return _("%(player)s holds %(held)s/%(territories)s territories", **values)


def mission_entry(state: GameState, player: Player, viewer: str | None) -> dict[str, Any]:
    """The "mission" of a player's entry in a view: the card dealt, what it asks now (its
    `goal`), whether a "destroy" card fell back, whether it is done and how far it is."""
    assert player.mission is not None
    now = missions.current(player, state.mates(player.name))
    assert now is not None
    own = viewer == player.name
    entry: dict[str, Any] = {
        "card": player.mission,
        "dealt": goal(missions.Mission.parse(player.mission), own),
        "goal": goal(now, own),
    }
    if player.mission_fallback:
        entry["fell_back"] = True
    sight = fog.sight_of(state, viewer)
    hidden = sight is not None and not sight.owners and now.target is not None
    if player.alive and state.phase is not Phase.DRAFT and not hidden:  # (heavy fog: how much
        entry["progress"] = progress(state, player.name, viewer)  # a target holds is hidden)
    if state.winner == player.name and missions.completed(state, player.name):
        entry["done"] = True
    return entry


def view_missions(state: GameState, viewer: str | None) -> dict[str, dict[str, Any]]:
    """Each player's mission entry that `viewer` may see, by name."""
    return {
        p.name: mission_entry(state, p, viewer)
        for p in state.players
        if p.mission is not None and may_see(state, p.name, viewer)
    }


def report_missions(state: GameState, viewer: str | None) -> dict[str, Any]:
    """What a report shows of the missions: `my_mission` (a player's own, with progress) and
    `missions` (every one the reader may see, for the moderator and at the end)."""
    if not state.options.missions:
        return {"my_mission": None, "missions": []}
    visible = view_missions(state, viewer)
    mine = visible.get(viewer) if viewer is not None else None
    shown = viewer is None or state.phase is Phase.OVER
    return {
        "my_mission": mine,
        "missions": [{"name": name, **entry} for name, entry in visible.items()] if shown else [],
    }


def mission_lines(players: Sequence[Mapping[str, Any]], viewer: str | None) -> list[str]:
    """Lines for `pbem show` from a view's players: "Your mission: ..." for a player, every
    mission for the moderator or once the game is over."""
    out: list[str] = []
    for p in players:
        entry = p.get("mission")
        if not entry:
            continue
        who = "Your mission" if p["name"] == viewer else f"{p['name']}'s mission"
        line = f"{who}: {entry['goal']}"
        if entry["goal"] != entry["dealt"]:
            line += f" (dealt: {entry['dealt']})"
        if entry.get("progress"):
            line += f"; {entry['progress']}"
        out.append(line)
    return out


def narrate(event: Event, viewer: str | None) -> str | None:
    """The sentence of a mission or draft event (None for other events)."""
    if isinstance(event, MissionDealt):
        mission = goal(missions.Mission.parse(event.mission), viewer == event.player)
        if viewer == event.player:
            return _("Your secret mission: %(mission)s.", mission=mission)
        return _(
            "%(player)s was dealt the secret mission: %(mission)s.",
            player=event.player,
            mission=mission,
        )
    if isinstance(event, MissionFellBack):
        values = {
            "player": event.player,
            "target": event.target,
            "territories": missions.Mission.parse(missions.FALLBACK).territories,
            "reason": told(event.reason),
        }
        if viewer == event.player:
            return _(
                "Your mission to destroy %(target)s became: occupy %(territories)s territories "
                "(%(reason)s).",
                **values,
            )
        return _(
            "%(player)s's mission to destroy %(target)s became: occupy %(territories)s "
            "territories (%(reason)s).",
            **values,
        )
    if isinstance(event, MissionCompleted):
        card = goal(missions.Mission.parse(event.card), own=False)
        done = goal(missions.Mission.parse(event.mission), own=False)
        if card != done:
            return _(
                "%(player)s has done their secret mission: %(done)s (the card dealt: %(card)s).",
                player=event.player,
                done=done,
                card=card,
            )
        return _(
            "%(player)s has done their secret mission: %(done)s.", player=event.player, done=done
        )
    if isinstance(event, Drafted):
        values = {"round": event.round, "player": event.player, "territory": place(event.territory)}
        if event.by != "list":
            return _("Round %(round)s: %(player)s took %(territory)s (fill-in rule).", **values)
        return _("Round %(round)s: %(player)s took %(territory)s.", **values)
    return None


KINDS: dict[type[Event], str] = {
    Drafted: "setup",
    MissionDealt: "mission",
    MissionFellBack: "mission",
    MissionCompleted: "won",
}
"""The story kind of each mission or draft event."""


def draft_round(events: Sequence[Event], start: int) -> tuple[str, int]:
    """The picks of one draft round from `start` as one sentence, and the index after them."""
    first = events[start]
    assert isinstance(first, Drafted)
    picks: list[str] = []
    i = start
    while i < len(events):
        e = events[i]
        if not isinstance(e, Drafted) or e.round != first.round:
            break
        pick = f"{e.player} {place(e.territory)}"
        picks.append(_("%(pick)s (fill-in rule)", pick=pick) if e.by != "list" else pick)
        i += 1
    return _("Draft round %(round)s: %(picks)s.", round=first.round, picks=", ".join(picks)), i


def draft_forecast(ranked: Sequence[str]) -> str:
    """What a valid draft list asks for, as `pbem check` tells it."""
    named = [t for t in ranked if t != REST]
    shown = ", ".join(place(t) for t in named[:3]) + (", ..." if len(named) > 3 else "")
    if len(named) < len(ranked):
        if not named:
            return _("draft: every pick by the fill-in rule")
        return _(
            "draft: %(count)s territories ranked (%(shown)s), then the fill-in rule",
            count=len(named),
            shown=shown,
        )
    return _("draft: all %(count)s territories ranked (%(shown)s)", count=len(named), shown=shown)


def draft_skeleton(state: GameState) -> list[str]:
    """The draft lines of a ready order file, in the language spoken: a list that lets the
    fill-in rule choose, and every territory by the reader's names (an order file takes the
    names of every language), commented, to copy in the order wanted."""
    from pbem.present.text import wrap

    said = _(
        "Your ranked list of territories, best first: each draft round you get the first one "
        'still free. "rest" (which must come last) lets pbem choose the others by its fill-in '
        "rule: the free territory in the continent where you hold the most."
    )
    lines = ["", *wrap(said, "# ")]
    lines += ['draft = ["rest"]', ""]
    lines += wrap(_("Every territory, to copy into the list in the order you want:"), "# ")
    lines += [f'#   "{place(t)}",' for t in state.board.names]
    return lines
