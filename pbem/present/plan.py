"""The forecast of an order file and its warnings, told in the reader's language: the lines
`pbem check`, `check --view`, the player's kit, the mail answer that accepts orders and the
moderator's overview print. The forecast itself (`pbem.core.forecast`) and the warnings
(`pbem.core.advice`) are data; every sentence is here, a catalogue entry.

Why a step may be skipped is the engine's own reason, as the history records it; it is told
by its shape (`pbem.languages.reasons`). Numbers with decimals use the language's separator
without Babel, so that the player's kit, which has only the standard library, writes them
the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from pbem.core import fog, rules
from pbem.core.advice import Advice, Threat, warnings
from pbem.core.forecast import (
    AttackForecast,
    Distribution,
    FortifyForecast,
    PlanForecast,
    forecast_plan,
)
from pbem.core.orders import ALL, Attack, Fortify, Orders
from pbem.core.state import GameState
from pbem.languages.i18n import _, current, n_, place
from pbem.languages.reasons import told, told_of

DECIMAL_SEPARATORS = {"id": ",", "sv": ",", "it": ",", "nl": ","}
"""The languages that write a decimal comma (the others a point), as CLDR has them."""


def decimal(x: float) -> str:
    """`x` to one decimal, in the language spoken: "5.3", "5,3"."""
    text = f"{x:.1f}"
    return text.replace(".", DECIMAL_SEPARATORS.get(current().code, "."))


def percent(p: float | Fraction) -> str:
    """A probability as a percentage to one decimal, never rounding a chance to certainty or
    to nothing."""
    x = float(p)
    if p > 0 and x < 0.0005:
        return "<" + _("%(value)s%%", value=decimal(0.1))
    if 0.9995 < x <= 1 and not _certain(p):
        return ">" + _("%(value)s%%", value=decimal(99.9))
    return _("%(value)s%%", value=decimal(min(x, 1.0) * 100))


def _certain(p: float | Fraction) -> bool:
    """Certainty: exactly 1 for an exact chance, within rounding of 1 for a float's."""
    return p == 1 if isinstance(p, Fraction) else abs(float(p) - 1) < 1e-12


def _armies(n: int) -> str:
    return n_("%(num)s army", "%(num)s armies", n)


def _cards(cards: Sequence[str]) -> str:
    from pbem.present.sentences import card_name  # the sentences (and the events) only for a trade

    return ", ".join(card_name(c) for c in cards)


def spread(d: Distribution) -> str:  # type: ignore[type-arg]
    """ "6" when certain, else "2 to 9 (most likely 6)"."""
    if d.low == d.high:
        return str(d.low)
    return _(
        "%(low)s to %(high)s (most likely %(likely)s)", low=d.low, high=d.high, likely=d.likely
    )


def attack_step(a: Attack) -> str:
    return _("attack %(target)s from %(source)s", target=place(a.target), source=place(a.source))


def fortify_step(f: Fortify) -> str:
    values = {"target": place(f.target), "source": place(f.source)}
    if f.armies == ALL:
        return _("fortify %(target)s from %(source)s with all", **values)
    return _("fortify %(target)s from %(source)s with %(armies)s", armies=f.armies, **values)


# --- The forecast ------------------------------------------------------------------------------


def plan_lines(plan: PlanForecast) -> list[str]:  # type: ignore[type-arg]
    """The lines of a forecast: one per trade, placement, attack and fortify."""
    lines = [
        _("trade %(cards)s for %(armies)s", cards=_cards(cards), armies=_armies(value))
        for cards, value in plan.trades
    ]
    if plan.card_bonus is not None:
        lines.append(
            _(
                "place %(armies)s on %(territory)s (card bonus)",
                armies=rules.CARD_TERRITORY_BONUS,
                territory=place(plan.card_bonus),
            )
        )
    lines += [
        _("place %(armies)s on %(territory)s", armies=amount, territory=place(territory))
        for territory, amount in plan.placements
    ]
    lines += [_attack_line(a) for a in plan.attacks]
    if plan.stopped:
        lines.append(_("later steps depend on that attack: no forecast for them"))
    lines += [_fortify_line(f) for f in plan.fortifications]
    if plan.fortify_unknown:
        lines.append(_("the fortification depends on too many attacks: no forecast for it"))
    return lines


def _reasons(skipped: Sequence[tuple[str, float | Fraction]]) -> str:
    """Why a step may be skipped: "skipped 40.7%: China has only 1 army ...", most likely
    first; a step skipped for one reason whatever happens gives the reason alone."""
    if len(skipped) == 1 and _certain(skipped[0][1]):
        return told(skipped[0][0])
    return "; ".join(
        _("skipped %(chance)s: %(reason)s", chance=percent(p), reason=told(why))
        for why, p in skipped
    )


def _skipped(step: str, skipped: Sequence[tuple[str, float | Fraction]]) -> str:
    return _("%(step)s: will be skipped (%(reasons)s)", step=step, reasons=_reasons(skipped))


def _attack_line(f: AttackForecast) -> str:  # type: ignore[type-arg]
    a = f.attack
    head = attack_step(a)
    if f.too_large:
        return _("%(step)s: too many armies for exact odds", step=head)
    if f.unseen:
        about = told_of()
        if about is not None:  # (the moderator, of a player's forecast)
            return _(
                "%(step)s: the armies on %(territory)s are hidden from %(player)s: no forecast",
                step=head,
                territory=place(a.target),
                player=about,
            )
        return _(
            "%(step)s: the armies on %(territory)s are hidden from you: no forecast",
            step=head,
            territory=place(a.target),
        )
    if f.attackers is None or f.defenders is None:
        return _skipped(head, f.skipped)
    terms = []
    if a.stop_at > 1:
        terms.append(_("stopping at %(stop)s", stop=a.stop_at))
    if a.dice is not None:
        terms.append(n_("at most %(num)s die", "at most %(num)s dice", a.dice))
    how = f" ({', '.join(terms)})" if terms else ""
    parts = [
        _(
            "%(attackers)s against %(defenders)s",
            attackers=spread(f.attackers),
            defenders=spread(f.defenders),
        )
        + how
    ]
    takes = percent(f.takes)
    if _certain(f.happens):
        parts.append(_("takes it %(chance)s of the time", chance=takes))
    else:
        parts.append(
            _(
                "happens %(chance)s (%(reasons)s)",
                chance=percent(f.happens),
                reasons=_reasons(f.skipped),
            )
            + "; "
            + _("takes it %(chance)s in all", chance=takes)
        )
    assert f.source_after is not None and f.target_after is not None
    left = _(
        "expected left: %(source)s %(left)s, %(target)s %(kept)s",
        source=place(a.source),
        left=decimal(f.source_after.mean),
        target=place(a.target),
        kept=decimal(f.target_after.mean),
    )
    if f.attackers.low == f.attackers.high:
        note = rules.attack_dice_note(f.attackers.low, a.dice)
        if note:
            left += " (" + _("first roll: %(note)s", note=told(note)) + ")"
    parts.append(left)
    if f.may_eliminate:
        about = told_of()
        parts.append(
            _(
                "taking it may knock %(player)s out: the cards you take then are not in this "
                "forecast",
                player=f.may_eliminate,
            )
            if about is None
            else _(
                "taking it may knock %(player)s out: the cards %(taker)s takes then are not in "
                "this forecast",
                player=f.may_eliminate,
                taker=about,
            )
        )
    text = f"{head}: {parts[0]}: {parts[1]}"
    return "; ".join([text, *parts[2:]])


def _fortify_line(f: FortifyForecast) -> str:  # type: ignore[type-arg]
    line = fortify_step(f.fortify)
    if f.moved is None:
        return _skipped(line, f.skipped)
    if _certain(f.happens) and f.moved.low == f.moved.high:
        moved = f.moved.low
        if _certain(f.cut):
            note = _(
                "asked to move %(asked)s, cut to %(moved)s: one army stays behind",
                asked=f.fortify.armies,
                moved=moved,
            )
            return f"{line} ({note})"
        if f.fortify.armies != ALL:
            return line
        return _("%(step)s: moves %(armies)s", step=line, armies=_armies(moved))
    terms = [_("moves %(armies)s", armies=spread(f.moved))]
    if not _certain(f.happens):
        terms.insert(
            0,
            _(
                "happens %(chance)s (%(reasons)s)",
                chance=percent(f.happens),
                reasons=_reasons(f.skipped),
            ),
        )
    if f.cut:
        terms.append(
            _(
                "cut to what is there %(chance)s of the time: one army stays behind",
                chance=percent(f.cut),
            )
        )
    return f"{line}: {', '.join(terms)}"


# --- The warnings ------------------------------------------------------------------------------


def _threat(threat: object) -> str:
    assert isinstance(threat, Threat)
    return _(
        "%(territory)s (%(player)s, %(armies)s)",
        territory=place(threat.territory),
        player=threat.owner,
        armies=_armies(threat.armies),
    )


def advice_text(advice: Advice) -> str:
    """A warning's sentence, without its line."""
    v = advice.values
    if advice.kind == "best_without_set":
        return _('trade = "best" but your hand holds no set: nothing is traded this turn')
    if advice.kind == "forced_trade":
        values = {
            "hand": v["hand"],
            "cards": _cards(v["cards"]),  # type: ignore[arg-type]
            "armies": _armies(int(v["armies"])),  # type: ignore[call-overload]
        }
        if v["placed"] == "rest":
            return _(
                "you hold %(hand)s cards and your orders trade none: with 5 or more a trade is "
                'required, so pbem trades %(cards)s for you (%(armies)s), and "rest" places '
                'them; write trade = "best" to say so yourself',
                **values,
            )
        if v["placed"] == "counted":
            return _(
                "you hold %(hand)s cards and your orders trade none: with 5 or more a trade is "
                "required, so pbem trades %(cards)s for you (%(armies)s), which your "
                'placements already count; write trade = "best" to say so yourself',
                **values,
            )
        return _(
            "you hold %(hand)s cards and your orders trade none: with 5 or more a trade is "
            "required, so pbem trades %(cards)s for you (%(armies)s), placed with your last "
            'placement, on %(territory)s; write trade = "best" to say so yourself',
            territory=place(str(v["territory"])),
            **values,
        )
    if advice.kind == "never_happens":
        if v["thin"]:
            return _(
                "this attack will never happen: by then, %(reason)s (an earlier attack takes its "
                "armies)",
                reason=told(str(v["reason"])),
            )
        return _(
            "this attack will never happen: by then, %(reason)s", reason=told(str(v["reason"]))
        )
    if advice.kind == "may_be_thin":
        return _(
            "%(source)s may be too thin to attack by then (%(chance)s of the time): an earlier "
            "attack moves its armies away or wears them down",
            source=place(str(v["source"])),
            chance=percent(float(v["chance"])),  # type: ignore[arg-type]
        )
    if advice.kind == "thin_border":
        values = {
            "source": place(str(v["source"])),
            "target": place(str(v["target"])),
            "chance": percent(float(v["chance"])),  # type: ignore[arg-type]
            "threat": _threat(v["threat"]),
        }
        if v["move"] == ALL:
            return _(
                'move = "all" (the default) moves all but 1 army out of %(source)s when it '
                "takes %(target)s (%(chance)s of the time), next to %(threat)s; "
                'move = "min" or a number keeps more behind',
                **values,
            )
        move = f'"{v["move"]}"' if isinstance(v["move"], str) else str(v["move"])
        return _(
            "move = %(move)s moves all but 1 army out of %(source)s when it takes %(target)s "
            '(%(chance)s of the time), next to %(threat)s; move = "min" or a number keeps more '
            "behind",
            move=move,
            **values,
        )
    if advice.kind == "fortify_thin":
        return _(
            "the fortification leaves %(source)s with 1 army next to %(threat)s",
            source=place(str(v["source"])),
            threat=_threat(v["threat"]),
        )
    raise ValueError(f"no sentence for the warning {advice.kind!r}")


def advice_line(advice: Advice) -> str:
    """A warning as `pbem check` prints it: "warning: line 12: ..."."""
    if advice.line:
        return _(
            "warning: line %(line)s: %(message)s", line=advice.line, message=advice_text(advice)
        )
    return _("warning: %(message)s", message=advice_text(advice))


def forecast_lines(state: GameState, orders: Orders | None) -> list[str]:
    """The forecast of accepted orders as lines, in the language spoken."""
    if orders is None:
        return []
    return plan_lines(forecast_plan(state, orders))


def forecast_with_warnings(state: GameState, orders: Orders | None) -> list[str]:
    """The forecast of accepted orders, then their warnings ("warning: line 12: ...")."""
    if orders is None:
        return []
    state, unknown = fog.as_known(state, orders.player)  # (under fog, what the player knows)
    plan = forecast_plan(state, orders, unknown=unknown)
    return plan_lines(plan) + [advice_line(w) for w in warnings(state, orders, plan)]


def odds_summary(attackers: int, defenders: int, stop_at: int, dice: int | None) -> str:
    """What `pbem odds` and the kit's `odds` print, in the language spoken: "10 against 10:
    takes it 48.0% of the time; expected left: attacker 4.2, defender 1.9"."""
    from pbem.core import odds
    from pbem.errors import PbemError

    if attackers + defenders > odds.LARGEST:
        raise PbemError(f"exact odds are computed for up to {odds.LARGEST} armies in all")
    found = odds.forecast(attackers, defenders, stop_at, dice)
    terms = []
    if stop_at > 1:
        terms.append(_("stopping at %(stop)s", stop=stop_at))
    if dice is not None:
        terms.append(n_("at most %(num)s die", "at most %(num)s dice", dice))
    sides = _("%(attackers)s against %(defenders)s", attackers=attackers, defenders=defenders) + (
        f" ({', '.join(terms)})" if terms else ""
    )
    return _(
        "%(sides)s: takes it %(chance)s of the time; expected left: attacker %(attacker)s, "
        "defender %(defender)s",
        sides=sides,
        chance=percent(found.win),
        attacker=decimal(float(found.expected_attackers_left)),
        defender=decimal(float(found.expected_defenders_left)),
    )
