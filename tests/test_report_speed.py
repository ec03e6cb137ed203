"""The shortcuts that make reports quick give the same answers as the long way round."""

from __future__ import annotations

import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pytest
from conftest import new_game
from jinja2.sandbox import ImmutableSandboxedEnvironment

from pbem.core.state import Options
from pbem.game import processor
from pbem.game.store import read_game
from pbem.present import i18n, report, svgmap


@dataclass(frozen=True)
class Shape:
    x: int
    label: str
    parts: tuple[str, ...]
    _hidden: str = "secret"

    def area(self) -> int:
        return self.x * self.x


SUBJECTS: list[Any] = [
    {"name": "alice", "items": 3},
    {},
    OrderedDict(name="bob"),
    Shape(3, "Alaska", ("North", "Africa")),
    "a {0} string",
    [1, 2],
    (1, 2),
    7,
    None,
    report.columns,
]
ATTRIBUTES = [
    "name",
    "items",
    "keys",
    "get",
    "clear",
    "update",
    "pop",
    "append",
    "x",
    "label",
    "parts",
    "_hidden",
    "area",
    "format",
    "format_map",
    "upper",
    "__class__",
    "__dict__",
    "__globals__",
    "mro",
    "real",
    "missing",
]


def outcome(env: jinja2.Environment, obj: Any, attribute: str) -> Any:
    """What a template reading `obj.attribute` gets, in a form two environments can compare."""
    value = env.getattr(obj, attribute)
    if isinstance(value, jinja2.Undefined):
        return ("undefined", type(value).__name__, value._undefined_hint)
    if callable(value) and attribute in ("format", "format_map"):
        args = ({"0": "x"},) if attribute == "format_map" else ("x",)
        try:
            return ("formatted", value(*args))
        except Exception as err:  # noqa: BLE001 - the same error either way
            return ("refused", type(err).__name__)
    return ("value", value)


@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_the_sandbox_shortcuts_answer_as_the_jinja2_sandbox_does(attribute: str) -> None:
    ours = report.environment(None)
    stock = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
    for obj in SUBJECTS:
        assert outcome(ours, obj, attribute) == outcome(stock, obj, attribute), (obj, attribute)


def test_the_sandbox_still_refuses_what_changes_a_value() -> None:
    env = report.environment(None)
    with pytest.raises(jinja2.exceptions.SecurityError):
        env.from_string("{{ d.clear() }}").render(d={"a": 1})
    with pytest.raises(jinja2.exceptions.SecurityError):
        env.from_string("{{ s._hidden }}").render(s=Shape(1, "a", ()))


def test_ascii_text_is_as_wide_as_it_is_long() -> None:
    def long_way(text: str) -> int:
        width = 0
        for ch in text:
            if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
                continue
            width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        return width

    every_ascii = "".join(chr(i) for i in range(128))
    for text in (every_ascii, "Kamchatka", "", "\t\n", "Ürdün", "ગુજરાત", "日本"):
        assert i18n.display_width(text) == long_way(text)


def test_a_number_is_written_the_same_from_the_cache() -> None:
    from babel.numbers import format_decimal

    for code in i18n.LANGUAGES:
        for n in (0, 7, 1234, 1234567, -4500):
            assert i18n.language(code).number(n) == str(format_decimal(n, locale=code))


def test_games_without_their_own_templates_or_catalogues_share_one_environment(
    tmp_path: Path,
) -> None:
    first, second = new_game(tmp_path / "a" / "one"), new_game(tmp_path / "b" / "two")
    assert report.environment(first.resolve()) is report.environment(second.resolve())
    (second / "templates").mkdir()
    assert report.environment(first.resolve()) is not report.environment(second.resolve())


def test_a_game_with_its_own_catalogue_keeps_its_own_environment(tmp_path: Path) -> None:
    first, second = new_game(tmp_path / "a" / "one"), new_game(tmp_path / "b" / "two")
    (second / "locale" / "it" / "LC_MESSAGES").mkdir(parents=True)
    assert i18n.own_catalogues(first.resolve()) is None
    assert i18n.own_catalogues(second.resolve()) == second.resolve()
    shared = report.environment(first.resolve(), "it")
    assert report.environment(second.resolve(), "it") is not shared


def test_the_map_shapes_of_a_board_are_made_once_per_language(tmp_path: Path) -> None:
    directory = tmp_path / "game"
    processor.new_game(
        directory,
        processor.parse_player_list(["ann:it", "bob"]),
        Options(),
        seed=bytes(32),
        languages={"ann": "it"},
    )
    state = read_game(directory).state
    with i18n.speaking(i18n.language("it", state.board.name)):
        italian = svgmap.map_shapes(state, "ann")
        again = svgmap.map_shapes(state, "bob")
    english = svgmap.map_shapes(state, "ann")
    assert italian["lines"] == again["lines"] and italian["lines"] is not again["lines"]
    assert italian["continents"][0] is again["continents"][0]
    assert italian["continents"] != english["continents"]  # the names differ
    assert [c.label for c in english["continents"]][0].startswith("North America")


def test_each_player_gets_their_own_map_from_the_shared_shapes(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    state = read_game(directory).state
    mine = {t.name for t in svgmap.map_shapes(state, "alice")["territories"] if t.mine}
    assert mine == set(state.owned("alice"))
    assert not any(t.mine for t in svgmap.map_shapes(state, None)["territories"])
