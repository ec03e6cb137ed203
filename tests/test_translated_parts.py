"""The parts of a report, mail and check that came to speak the players' languages last: the
luck line, the story of the game, the decision aids, the reasons inside events, the mission
goals and the forecast of `pbem check`. A six-player game with one player per language (the
`babel` game of test_languages) must show none of their English sentences to the others."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_languages import LANGUAGE_OF, OTHERS, RESOLUTIONS, babel  # noqa: F401

from pbem.core import missions
from pbem.core.board import load_board
from pbem.core.order_parsing import parse_orders
from pbem.errors import OrderError
from pbem.languages import i18n, reasons
from pbem.languages.i18n import language, speaking
from pbem.languages.reasons import problem_told
from pbem.present import missions as mission_view
from pbem.present import stats
from pbem.records.history import report_dir
from pbem.records.opening import read_game

ENGLISH = (
    "Your dice so far",
    "armies above expectation",
    "armies below expectation",
    "Before your next turn",
    "Continents: yours of all",
    "Your borders: your armies",
    "Attacks from your strongest borders",
    "next to it:",
    "all yours",
    "cannot attack",
    "too many to count",
    " is down to ",
    "(stop at ",
    "you do not hold ",
    "you already hold ",
    "has only 1 army",
    "must stay behind",
    "stays behind",
    "of the last roll",
    "The story of the game",
    "The game so far",
    "Who fell",
    "The biggest battles",
    "Cards traded",
    "longest losing streak",
    "Nobody yet",
    "None yet",
    "takes it ",
    "expected left",
    "too many armies for exact odds",
    "once taken",
    "occupy ",
    "conquer ",
    "eliminate ",
    "a forced trade, made by pbem",
    "whose orders traded none",
    "warning: line ",
    "will be skipped",
)
"""Sentences (and pieces of them) of the parts above that only an English reader may see."""


def english_in(text: str) -> list[str]:
    return [phrase for phrase in ENGLISH if phrase in text]


def test_no_english_sentence_in_the_other_languages_reports(babel: Path) -> None:  # noqa: F811
    shown: set[str] = set()
    dice_lines = 0
    for r in range(RESOLUTIONS):
        for player, code in LANGUAGE_OF.items():
            for kind in ("txt", "html"):
                path = report_dir(babel, r) / f"{player}.{kind}"
                text = path.read_text(encoding="utf-8")
                if code == "en":
                    shown.update(english_in(text))
                else:
                    assert english_in(text) == [], (path.name, r)
                    heading = language(code)._("Your dice so far: %(luck)s.", luck="")[:-1]
                    dice_lines += heading in text
    # these parts were in the reports, so the test saw them translated
    assert {"Before your next turn", "Your borders: your armies"} <= shown
    assert dice_lines


@pytest.mark.parametrize("code", OTHERS)
def test_the_story_of_the_game_is_told_in_each_language(babel: Path, code: str) -> None:  # noqa: F811
    numbers = stats.directory_stats(read_game(babel))
    assert any(numbers["luck"][p]["total"]["rolls"] for p in numbers["players"])
    with speaking(language(code)):
        lines = "\n".join(stats.stats_text(numbers))
    assert english_in(lines) == []
    with speaking(language("en")):
        english = "\n".join(stats.stats_text(numbers))
    assert "The game so far" in english and "longest losing streak" in english


@pytest.mark.parametrize("code", OTHERS)
def test_the_recorded_reasons_are_told_in_each_language(code: str) -> None:
    recorded = [
        "Ural is down to 1",
        "Ural is down to 3 (stop at 3)",
        "you do not hold Siam",
        "Ural has only 1 army: an attack needs 2",
        "asked to move 9, cut to 4: one army stays behind",
        "the draw pile and the discard pile are empty: every card is in a hand",
        "attack Siam from Ural",
    ]
    with speaking(language(code)):
        told = [reasons.told(text) for text in recorded]
        assert reasons.told("a reason of another version") == "a reason of another version"
    for english, text in zip(recorded, told, strict=True):
        assert text != english and english_in(text) == [], (english, text)
    assert i18n.language(code).place("Ural") in told[0]


def test_english_reasons_are_told_as_recorded() -> None:
    assert reasons.told("Ural is down to 3 (stop at 3)") == "Ural is down to 3 (stop at 3)"


@pytest.mark.parametrize("code", OTHERS)
def test_mission_goals_are_told_in_each_language(code: str) -> None:
    cards = [
        "continents:Asia,South America",
        "continents:Europe,Australia,+1",
        "territories:18,2",
        "territories:24",
        "destroy:bob",
    ]
    with speaking(language(code)):
        goals = [mission_view.goal(missions.Mission.parse(card)) for card in cards]
    with speaking(language("en")):
        english = [mission_view.goal(missions.Mission.parse(card)) for card in cards]
    assert english == [missions.Mission.parse(card).describe() for card in cards]
    for goal in goals:
        assert english_in(goal) == [], goal
    assert language(code).place("South America") in goals[0]


@pytest.mark.parametrize("code", OTHERS)
def test_mission_progress_is_told_in_each_language(babel: Path, code: str) -> None:  # noqa: F811
    state = read_game(babel).state
    first = state.players[0]
    cards = ["continents:Asia,South America,+1", "territories:18,2", f"destroy:{first.name}"]
    for card in cards:
        holder = replace(state.players[1], mission=card)
        changed = replace(state, players=(first, holder, *state.players[2:]))
        for viewer in (holder.name, None):
            with speaking(language(code)):
                text = mission_view.progress(changed, holder.name, viewer)
            with speaking(language("en")):
                english = mission_view.progress(changed, holder.name, viewer)
            assert text and text != english
            assert not any(word in text for word in (" holds ", "you hold", "territories", " of "))
        with speaking(language("en")):
            own = mission_view.progress(changed, holder.name, holder.name)
        assert own == missions.progress(changed, holder.name)  # English as before


def test_stats_from_a_view_file_speak_its_players_language(babel: Path) -> None:  # noqa: F811
    folder = report_dir(babel, RESOLUTIONS - 1)
    _numbers, lines = stats.view_stats(folder / "dan.view.json")
    assert lines[0].startswith(language("it")._("The game so far: %(turns)s.", turns="")[:10])
    assert english_in("\n".join(lines)) == []
    _numbers, lines = stats.view_stats(folder / "ann.view.json")
    assert lines[0].startswith("The game so far")


@pytest.mark.parametrize("code", OTHERS)
def test_the_rarer_problems_of_an_order_file_are_told_in_each_language(code: str) -> None:
    text = 'game = "g"\nplayer = 3\nturn = "one"\ncolour = "red"\n[[place]]\nterritory = 4\n'
    with pytest.raises(OrderError) as caught:
        parse_orders(text, load_board())
    lang = language(code)
    told = [problem_told(lang, p) for p in caught.value.problems]
    english = [problem_told(language("en"), p) for p in caught.value.problems]
    assert len(told) >= 5 and all(t != e for t, e in zip(told, english, strict=True)), told
    assert not any(
        phrase in line
        for line in told
        for phrase in ("is missing", "must be", "unknown key", "copy it from")
    )


def _recorded_by_the_engine() -> list[str]:
    """Every kind of reason, note and order text the engine records, made by the engine and the
    rules themselves (not copied), one of each."""
    from helpers import make_state, only, orders, play

    from pbem.core import rules
    from pbem.core.events import AttackStopped, Conquered, Skipped
    from pbem.core.orders import Attack, Fortify, Place
    from pbem.core.state import FortifyMode, Options

    texts: list[str] = []
    state = make_state(
        {"Ukraine": ("alice", 9), "Ural": ("alice", 1), "Siam": "alice", "Afghanistan": "alice"}
    )
    plan = orders(
        state,
        place=[("Siam", "rest")],
        attack=[
            Attack("Ural", "Siberia"),  # only 1 army
            Attack("Ukraine", "Scandinavia", stop_at=9),  # stop at
            Attack("Ukraine", "Ural"),  # already held
            Attack("Kamchatka", "Alaska"),  # not held
        ],
    )
    _, events = play(state, plan, check=False)
    texts += [e.reason for e in only(events, Skipped)] + [e.order for e in only(events, Skipped)]
    for stop in (1, 5):
        fight = make_state({"Ukraine": ("alice", 8), "Siam": "alice", "Ural": ("bob", 40)})
        attack = Attack("Ukraine", "Ural", stop_at=stop)
        _, events = play(fight, orders(fight, place=[("Siam", "rest")], attack=[attack]))
        texts += [e.reason for e in only(events, AttackStopped)]
    texts += [
        note
        for _, note in (rules.move_in(10, 3, 1), rules.move_in(5, 3, 9), rules.fortify_move(5, 9))
        if note
    ]
    texts += [note for note in (rules.attack_dice_note(2, 3), rules.attack_dice_note(3, 3)) if note]
    adjacent = make_state(
        {"Ukraine": ("alice", 3), "Ural": ("alice", 1), "Siam": "alice"},
        options=Options(fortify=FortifyMode.ADJACENT),
    )
    connected = make_state(
        {"Ukraine": ("alice", 3), "Siam": "alice", "Ural": ("alice", 1)},
        options=Options(fortify=FortifyMode.CONNECTED),
    )
    texts += [
        reason
        for reason in (
            rules.can_fortify(adjacent, "alice", "Ukraine", "Ukraine"),
            rules.can_fortify(adjacent, "alice", "Ukraine", "Egypt"),
            rules.can_fortify(adjacent, "alice", "Ural", "Ukraine"),
            rules.can_fortify(adjacent, "alice", "Ukraine", "Siam"),
            rules.can_fortify(connected, "alice", "Ukraine", "Siam"),
        )
        if reason
    ]
    texts += [
        Fortify("Ural", "Siam", 3).describe(),
        Fortify("Ural", "Siam", "all").describe(),
        Place("Siam", 3).describe(),
        Attack("Ural", "Siam").describe(),
        "the draw pile and the discard pile are empty: every card is in a hand",
        "bob was eliminated by alice",
        "bob left the game after missed turns",
    ]
    assert not [e for e in only(events, Conquered) if e.note]
    return texts


@pytest.mark.parametrize("code", OTHERS)
def test_every_reason_the_engine_records_has_a_shape(code: str) -> None:
    recorded = _recorded_by_the_engine()
    assert len(set(recorded)) >= 22, recorded
    with speaking(language(code)):
        told = [reasons.told(text) for text in recorded]
    untold = [english for english, text in zip(recorded, told, strict=True) if text == english]
    assert untold == [], "add their shapes to pbem/languages/reasons.py"
    assert not [t for t in told if t.endswith((" all", "with all"))]  # "all" is told too
