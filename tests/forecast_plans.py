"""Plans with chains, and the comparison of their forecast with the engine resolving them many
times (tests/test_plan_forecast.py runs a few hundred resolutions per plan; the full 20,000 per
plan is benchmarks/forecast_vs_engine.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from helpers import HIDDEN, key, make_state, orders

from pbem.core import validation
from pbem.core.engine import Randomness, resolve
from pbem.core.events import AttackStopped, Conquered, Fortified, Placed, Rolled, Skipped
from pbem.core.forecast import Distribution, PlanForecast, forecast_plan
from pbem.core.orders import Attack, Fortify, Orders
from pbem.core.state import FortifyMode, GameState, Options, StopAt

A = Attack

OWNERS = {
    "Ukraine": ("alice", 12),
    "China": ("alice", 10),
    "Alaska": ("alice", 8),
    "Siam": ("alice", 1),
    "Brazil": ("alice", 6),
    "Egypt": ("alice", 4),
    "Ural": ("bob", 3),
    "Afghanistan": ("bob", 4),
    "Scandinavia": ("bob", 2),
    "Middle East": ("bob", 5),
    "India": ("bob", 2),
    "Mongolia": ("bob", 3),
    "Siberia": ("bob", 2),
    "Kamchatka": ("bob", 3),
    "Northwest Territory": ("bob", 2),
    "Alberta": ("bob", 3),
    "Peru": ("bob", 2),
    "Venezuela": ("bob", 3),
    "North Africa": ("bob", 4),
    "East Africa": ("bob", 3),
    "Southern Europe": ("bob", 3),
    "Northern Europe": ("bob", 4),
}


def board(options: Options | None = None) -> GameState:
    """alice to play, with stacks of 4 to 12; bob and carol (1 army everywhere else) hold too
    much to be knocked out by one turn."""
    return make_state(OWNERS, default="carol", options=options, players=["alice", "bob", "carol"])


@dataclass(frozen=True)
class Plan:
    name: str
    attacks: tuple[Attack, ...]
    fortify: Fortify | None = None
    options: Options | None = None
    place: tuple[tuple[str, int | str], ...] = (("Siam", "rest"),)

    def state(self) -> GameState:
        return board(self.options)

    def orders(self, state: GameState) -> Orders:
        return orders(state, place=list(self.place), attack=self.attacks, fortify=self.fortify)


PLANS = (
    Plan("one attack", (A("Ukraine", "Ural"),)),
    Plan("two from one", (A("Ukraine", "Ural"), A("Ukraine", "Afghanistan"))),
    Plan(
        "three from one",
        (A("Ukraine", "Ural"), A("Ukraine", "Afghanistan"), A("Ukraine", "Scandinavia")),
    ),
    Plan("from a newly taken one", (A("Ukraine", "Ural"), A("Ural", "Siberia"))),
    Plan(
        "a chain of three",
        (A("Ukraine", "Ural"), A("Ural", "Siberia"), A("Siberia", "Yakutsk")),
    ),
    Plan("move min", (A("Ukraine", "Ural", move="min"), A("Ukraine", "Afghanistan"))),
    Plan(
        "move N then from the source (the reported case)",
        (A("China", "India", move=8), A("China", "Afghanistan")),
        place=(("China", 3),),
    ),
    Plan("move N too few", (A("Ukraine", "Ural", move=1), A("Ural", "Siberia"))),
    Plan("stop_at", (A("Ukraine", "Ural", stop_at=4), A("Ukraine", "Afghanistan"))),
    Plan("stop_at and dice", (A("China", "Mongolia", stop_at=3, dice=2),)),
    Plan("one die", (A("Alaska", "Kamchatka", dice=1), A("Kamchatka", "Irkutsk"))),
    Plan(
        "one target from two sources",
        (A("Ukraine", "Afghanistan", stop_at=6), A("China", "Afghanistan")),
    ),
    Plan(
        "fortify from a newly taken one",
        (A("Ukraine", "Ural"),),
        fortify=Fortify("Ural", "Ukraine", 3),
    ),
    Plan(
        "fortify all from a source the attacks use",
        (A("China", "India"),),
        fortify=Fortify("China", "Siam", "all"),
    ),
    Plan(
        "move 3 and on, then a second front",
        (
            A("Alaska", "Kamchatka", move=3),
            A("Kamchatka", "Irkutsk"),
            A("Alaska", "Northwest Territory"),
        ),
    ),
    Plan(
        "south america",
        (A("Brazil", "Peru"), A("Peru", "Argentina", move="min"), A("Brazil", "Venezuela")),
    ),
    Plan(
        "small stacks stop_at 2", (A("Egypt", "North Africa", stop_at=2), A("Egypt", "East Africa"))
    ),
    Plan("even", (A("Egypt", "Middle East"),)),
    Plan(
        "move 2 then on, and another",
        (
            A("Ukraine", "Southern Europe", move=2),
            A("Southern Europe", "Western Europe"),
            A("Ukraine", "Northern Europe"),
        ),
    ),
    Plan(
        "two chains from China",
        (A("China", "Mongolia"), A("Mongolia", "Irkutsk"), A("China", "India")),
    ),
    Plan(
        "chain with stop_at and move min",
        (
            A("Ukraine", "Ural", stop_at=5, move="min"),
            A("Ural", "Siberia"),
            A("Ukraine", "Afghanistan", stop_at=3),
        ),
    ),
    Plan(
        "connected fortify through a conquest",
        (A("Ukraine", "Ural"), A("Ural", "Siberia")),
        fortify=Fortify("Siberia", "Siam", "all"),
        options=Options(fortify=FortifyMode.CONNECTED),
    ),
    Plan(
        "stop_at as a threshold (older games)",
        (A("Ukraine", "Ural", stop_at=4), A("Ukraine", "Afghanistan", stop_at=2)),
        options=Options(stop_at=StopAt.THRESHOLD),
    ),
)


@dataclass
class Tally:
    """What the engine did with one step over many resolutions."""

    happened: int = 0
    took: int = 0
    source_after: list[int] = field(default_factory=list)
    target_after: list[int] = field(default_factory=list)


def resolve_many(plan: Plan, runs: int, first: int = 0) -> tuple[list[Tally], Tally]:
    """Resolve the plan `runs` times, each with its own key; tally every attack and the
    fortification (its `source_after` holds the armies moved)."""
    state = plan.state()
    turn = plan.orders(state)
    assert validation.validate(state, turn) == [], plan.name
    tallies = [Tally() for _ in turn.attack]
    fortified = Tally()
    for n in range(first, first + runs):
        _, events = resolve(state, [turn], Randomness(key(n), HIDDEN))
        armies = {t: state.armies(t) for t in state.board.names}
        step = 0
        for event in events:
            if isinstance(event, Placed):
                armies[event.territory] += event.armies
            elif isinstance(event, Skipped) and step < len(turn.attack):
                step += 1
            elif isinstance(event, Rolled):
                armies[event.source] -= event.attacker_losses
                armies[event.target] -= event.defender_losses
            elif isinstance(event, (AttackStopped, Conquered)):
                tally = tallies[step]
                tally.happened += 1
                if isinstance(event, Conquered):
                    tally.took += 1
                    armies[event.source] -= event.moved
                    armies[event.target] = event.moved
                tally.source_after.append(armies[event.source])
                tally.target_after.append(armies[event.target])
                step += 1
            elif isinstance(event, Fortified):
                fortified.happened += 1
                fortified.source_after.append(event.armies)
    return tallies, fortified


Z = 4.5
"""Standard errors allowed: a comparison fails by chance with probability about 7e-6, so all
of them (some 300) together about once in 500 runs; the keys are fixed, so a run that passes
always passes."""


def _within(observed: float, expected: float, sd: float, n: int) -> bool:
    if n == 0:
        return expected == 0
    return abs(observed - expected) <= Z * sd / math.sqrt(n) + 1e-9


def _frequency(what: str, count: int, n: int, p: float, out: list[str]) -> None:
    if not _within(count / n if n else 0.0, p, math.sqrt(p * (1 - p)), n):
        out.append(f"{what}: {count}/{n} = {count / n:.4f}, forecast {p:.4f}")


def _mean(what: str, values: list[int], d: Distribution | None, out: list[str]) -> None:  # type: ignore[type-arg]
    if d is None:
        if values:
            out.append(f"{what}: happened {len(values)} times, forecast never")
        return
    observed = sum(values) / len(values) if values else 0.0
    if not _within(observed, d.mean, math.sqrt(d.variance), len(values)):
        out.append(f"{what}: mean {observed:.3f} over {len(values)}, forecast {d.mean:.3f}")


def compare(plan: Plan, runs: int, first: int = 0) -> list[str]:
    """Every statistic of the plan's forecast that the engine's frequencies contradict."""
    state = plan.state()
    forecast: PlanForecast = forecast_plan(state, plan.orders(state))  # type: ignore[type-arg]
    tallies, fortified = resolve_many(plan, runs, first)
    out: list[str] = []
    for i, (f, tally) in enumerate(zip(forecast.attacks, tallies, strict=True)):
        name = f"{plan.name}, attack {i + 1}"
        _frequency(f"{name} happens", tally.happened, runs, float(f.happens), out)
        _frequency(f"{name} takes", tally.took, runs, float(f.takes), out)
        _mean(f"{name} source after", tally.source_after, f.source_after, out)
        _mean(f"{name} target after", tally.target_after, f.target_after, out)
    if forecast.fortify is not None:
        happens = float(forecast.fortify.happens)
        _frequency(f"{plan.name}, fortify happens", fortified.happened, runs, happens, out)
        _mean(f"{plan.name}, fortify moves", fortified.source_after, forecast.fortify.moved, out)
    return out


def fifty_army_plans() -> list[tuple[str, GameState, Orders]]:
    """Plans of ten attacks from 50-army stacks, for the forecast's speed: ten stacks each
    attacking 40 (two of them chained from a conquest), and one stack attacking ten times in
    a chain."""
    names = ["Alaska", "Kamchatka", "Alberta", "Northwest Territory", "Greenland", "Iceland"]
    names += ["Scandinavia", "Ukraine", "Ural", "Siberia", "Yakutsk", "Irkutsk"]
    names += ["Mongolia", "China", "Siam", "India", "Middle East", "Afghanistan"]
    names += ["Egypt", "North Africa"]
    owners = {n: ("alice", 50) if i % 2 == 0 else ("bob", 40) for i, n in enumerate(names)}
    spread = make_state(owners)
    attacks = [Attack(names[i], names[i + 1]) for i in range(0, 20, 2)]
    chain = [Attack("Ural", t, move="min") for t in ("Siberia", "Afghanistan")]
    ten = orders(spread, place=[("Ural", "rest")], attack=attacks[:8] + chain)
    line = ["Scandinavia", "Northern Europe", "Southern Europe", "Middle East", "Afghanistan"]
    owners = {"Ukraine": ("alice", 50), "Siam": "alice"} | {t: ("bob", 5) for t in line}
    owners |= {"Ural": ("bob", 5)}
    one = make_state(owners)
    chained = [Attack("Ukraine", t, move="min") for t in [*line, "Ural"]]
    chained += [
        Attack(a, b)
        for a, b in zip(
            ["Ural", "Siberia", "Yakutsk", "Kamchatka"],
            ["Siberia", "Yakutsk", "Kamchatka", "Alaska"],
            strict=True,
        )
    ]
    return [
        ("ten attacks from 50-army stacks (two chained)", spread, ten),
        (
            "ten attacks in a chain from one 50-army stack, then a fortification",
            one,
            orders(
                one,
                place=[("Ukraine", "rest")],
                attack=chained,
                fortify=Fortify("Kamchatka", "Yakutsk", "all"),
            ),
        ),
    ]
