"""The shortcuts that make reports quick give the same answers as the long way round."""

from __future__ import annotations

import json
import os
import shutil
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import jinja2
import pytest
from conftest import new_game, write_skeletons
from hypothesis import given
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

from pbem.club import batch
from pbem.core.state import Options
from pbem.game import processor
from pbem.languages import i18n
from pbem.present import json_text, report, stats, svgmap
from pbem.records.history import history_count, report_dir
from pbem.records.opening import read_game

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


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
    ours = report._sandbox()(undefined=jinja2.StrictUndefined)
    stock = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
    for obj in SUBJECTS:
        assert outcome(ours, obj, attribute) == outcome(stock, obj, attribute), (obj, attribute)


def test_the_sandbox_still_refuses_what_changes_a_value(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()  # a game with templates of its own
    env = report.environment(tmp_path)
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


def test_preloading_puts_every_builtin_template_in_the_shared_environment() -> None:
    report.preload()
    env = report.environment(None)
    loaded = {name for _, name in env.cache} if env.cache is not None else set()
    assert {"report.html.j2", "report.txt.j2", "moderator.html.j2", "macros.html.j2"} <= loaded


def _root_of_games(root: Path, count: int) -> list[Path]:
    games = []
    for i in range(count):
        directory = root / f"g{i}"
        processor.new_game(
            directory,
            processor.parse_player_list(["ann", "bob", "cy"]),
            Options(),
            seed=bytes([i]) * 32,
            name=f"g{i}",
        )
        write_skeletons(directory)
        games.append(directory)
    return games


def test_two_jobs_fork_their_workers_with_the_templates_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = _root_of_games(tmp_path / "games", 2)
    calls: list[int] = []
    real = report.preload
    monkeypatch.setattr(report, "preload", lambda: calls.append(os.getpid()) or real())
    runs = batch.resolve_due(games, NOW, jobs=2)
    assert [r.result for r in runs] == [batch.Result.RESOLVED] * 2
    assert calls == [os.getpid()]  # in this process, before the workers were forked
    batch.resolve_due(games, NOW, jobs=1)
    assert len(calls) == 1  # one job forks nothing


def test_two_jobs_write_every_file_as_one_job_does(tmp_path: Path) -> None:
    one = _root_of_games(tmp_path / "one", 4)
    two = [Path(shutil.copytree(g, tmp_path / "two" / g.name)) for g in one]
    batch.resolve_due(one, NOW, jobs=1)
    batch.resolve_due(two, NOW, jobs=2)
    for a, b in zip(one, two, strict=True):
        files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
        assert any(f.parts[0] == "reports" and f.name.endswith(".html") for f in files)
        for f in files:
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_the_history_is_counted_up_to_its_first_gap(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    assert history_count(tmp_path) == 0
    for name in ("0000.toml", "0001.toml", "0003.toml", "0002.tmp", "notes.txt"):
        (folder / name).write_text("")
    assert history_count(tmp_path) == 2


def test_the_story_reads_the_history_up_to_its_first_gap_or_stranger(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    write_skeletons(directory)
    processor.resolve_game(directory)
    assert [r for r, _, _ in stats.recorded_resolutions(directory, 5)] == [0, 1]
    moved = directory / "history" / "0001.toml"
    moved.rename(directory / "aside.toml")
    moved.mkdir()  # a folder where a file should be is no record
    assert [r for r, _, _ in stats.recorded_resolutions(directory, 5)] == [0]


def test_the_maps_continents_and_borders_are_rendered_once_for_every_report(
    tmp_path: Path,
) -> None:
    directory = new_game(tmp_path / "game", "alice,bob,carol,dave")
    env = report.environment(directory.resolve())
    env.rendered.clear()  # type: ignore[attr-defined]
    write_skeletons(directory)
    processor.resolve_game(directory)
    assert len(env.rendered) == 1  # type: ignore[attr-defined]
    folder = report_dir(directory, 1)
    for name in ("alice.html", "dave.html", "_moderator.html"):
        html = (folder / name).read_text()
        assert html.count('<g class="continents">') == 1
        assert html.count("<line x1=") > 80  # every border of the classic board


def _resolved_with_own(tmp_path: Path, template: str, source: str, report_file: str) -> str:
    """`report_file` of a game's first resolution, the game having its own `template`."""
    directory = new_game(tmp_path / "game")
    (directory / "templates").mkdir()
    (directory / "templates" / template).write_text(source)
    write_skeletons(directory)
    processor.resolve_game(directory)
    return (report_dir(directory, 1) / report_file).read_text()


def test_a_game_can_draw_the_maps_board_its_own_way(tmp_path: Path) -> None:
    html = _resolved_with_own(
        tmp_path,
        "map_board.html.j2",
        '  <g class="mine">{{ map.continents|length }} continents</g>',
        "alice.html",
    )
    assert '  <g class="mine">6 continents</g>\n  <g class="territories"' in html
    assert '<g class="continents">' not in html


def test_text_that_python_calls_printable_needs_no_escape() -> None:
    from pbem.terminal import printable

    for code in range(0x110000):
        ch = chr(code)
        if ch.isprintable():
            assert printable(ch, lines=True) == ch, hex(code)
    for ch in ("\x1b", "\u202e", "\u2028", "\t", "\n", "\x85"):
        assert not ch.isprintable()


def test_a_context_without_the_rendered_board_draws_the_same_map(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    write_skeletons(directory)
    processor.resolve_game(directory)
    game = read_game(directory)
    context = report.report_context(game, 1, (), "alice")
    assert "board_svg" not in context["map"]
    html = report.environment(directory.resolve()).get_template("report.html.j2").render(context)
    written = (report_dir(directory, 1) / "alice.html").read_text()

    def svg(page: str) -> str:
        return page.split('<div class="map">')[1].split("</svg>")[0]

    assert svg(html) == svg(written)
    assert '<g class="continents">' in svg(html)


def test_preload_compiles_every_builtin_template_before_workers_are_forked() -> None:
    env = report.environment(None, i18n.DEFAULT)
    assert env.cache is not None
    env.cache.clear()  # as a new process finds it
    report.preload()
    assert report.environment(None, i18n.DEFAULT) is env
    names = set(env.list_templates(filter_func=lambda n: n.endswith(".j2")))
    assert names
    compiled = {key[1] for key in env.cache.keys()}  # noqa: SIM118 - an LRU cache, not a dict
    assert names <= compiled


TERRITORY_LOOP = """{% for t in map.territories %}
    <g>
      <title>{{ t.label|join(" ") }}: {{ t.owner }}, {{ ngettext("%(num)s army", "%(num)s armies", t.armies) }}{% if t.taken %}, {{ _("taken this turn") }}{% endif %}</title>
{% if t.taken %}
      <circle cx="{{ t.x }}" cy="{{ t.y }}" r="{{ t.r + 6 }}" fill="none" stroke="#1c1c1c" stroke-width="2" stroke-dasharray="4 3"/>
{% endif %}
      <circle data-territory="{{ t.name }}" cx="{{ t.x }}" cy="{{ t.y }}" r="{{ t.r }}" fill="{{ t.fill }}"{% if t.mine %} stroke="#1c1c1c" stroke-width="3.5"{% else %} stroke="#ffffff" stroke-width="1.5"{% endif %}/>
      <text x="{{ t.x }}" y="{{ t.y }}" dy="0.36em" text-anchor="middle" font-size="14" font-weight="700" fill="{{ t.ink }}">{{ t.armies }}</text>
      <text x="{{ t.x }}" y="{{ t.label_y }}" text-anchor="middle" font-size="10" fill="#2d2d2d" stroke="#ffffff" stroke-opacity="0.75" stroke-width="2.5" paint-order="stroke" stroke-linejoin="round">
{% for part in t.label %}
        <tspan x="{{ t.x }}" dy="{{ 0 if loop.first else 11 }}">{{ part }}</tspan>
{% endfor %}
      </text>
    </g>
{% endfor %}
"""  # noqa: E501 - the template's own lines
"""The territories as the reports' template drew them, before they were drawn in Python."""


@pytest.mark.parametrize("code", ["en", "sv", "gu"])
def test_the_territories_drawn_in_python_are_those_the_template_drew(code: str) -> None:
    odd = ["Alaska", 'Fort "Q" & <co>', "Nord\x1bkap", "\u202eevil", "Ünïcödé"]
    territories = [
        svgmap.MapTerritory(
            name=name,
            x=10 * i,
            y=20 + i,
            r=17,
            fill="#3a6fb7",
            ink="#ffffff" if i % 2 else '"><x',
            owner=["alice", "o'brien & co", "carl\x07"][i % 3],
            armies=[1, 2, 1000, 0, 5][i],
            mine=i % 2 == 0,
            taken=i in (1, 3),
            label=svgmap._label_lines(name + " Peninsula" * (i % 2)),
            label_y=48 + i,
        )
        for i, name in enumerate(odd)
    ]
    assert any(len(t.label) > 1 for t in territories)
    env = report._environment.__wrapped__(None, None, code)
    drew = env.from_string(TERRITORY_LOOP).render(map={"territories": territories})
    svgmap._DRAWN.clear()
    drawn = svgmap.draw_territories(territories, i18n.translations(code))
    assert drawn == drew
    assert svgmap.draw_territories(territories, i18n.translations(code)) == drew  # kept
    assert "&#34;&gt;&lt;x" in drawn and "\\x1b" in drawn


def test_the_finalize_shortcuts_print_every_value_as_the_long_way_does() -> None:
    from markupsafe import Markup

    env = report.environment(None)
    assert env.finalize is not None
    values: list[Any] = ["plain", "a\x1bb", "two\nlines", Markup("<b>bold</b>"), 7, 2.5, None]
    values += [Markup("<b>\x1b[2J</b>"), Markup("row\n"), ["x\x07"], True]
    for value in values:
        short = env.finalize(value)
        long = report._printable_value(value, Markup)
        assert short == long and type(short) is type(long), repr(value)
    assert env.finalize(Markup("<b>\x1b</b>")) == Markup("<b>\\x1b</b>")


def test_a_games_own_template_changed_between_two_resolutions_of_one_run_is_read_again(
    tmp_path: Path,
) -> None:
    """pbem's own templates are read once in a process; a game's own are looked at again
    (a long `pbem run` may meet a template the moderator just edited)."""
    assert not report.environment(None).auto_reload
    directory = new_game(tmp_path / "game")
    (directory / "templates").mkdir()
    mine = directory / "templates" / "report.txt.j2"
    for word in ("first", "second"):
        mine.write_text(f"{word} {{{{ player }}}}\n")
        os.utime(mine, (1_000_000 + len(word), 1_000_000 + len(word)))
        write_skeletons(directory)
        processor.resolve_game(directory)
        folder = report_dir(directory, history_count(directory) - 1)
        assert (folder / "alice.txt").read_text() == f"{word} alice\n"


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_indented_json_is_what_the_standard_library_writes(value: Any) -> None:
    assert json_text.indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "value",
    [{1: "a"}, {"x": float("nan")}, [float("-inf")], {"n": Decimal("1.5")}, OrderedDict(a=[])],
    ids=["int key", "nan", "infinity", "decimal", "dict subclass"],
)
def test_indented_json_leaves_what_it_does_not_know_to_the_standard_library(value: Any) -> None:
    try:
        expected = json.dumps(value, indent=2, ensure_ascii=False)
    except TypeError as err:
        with pytest.raises(TypeError, match=str(err)):
            json_text.indented_json(value)
    else:
        assert json_text.indented_json(value) == expected


def test_indented_json_writes_every_json_value_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> str:
        raise AssertionError("the slow way")

    monkeypatch.setattr(json_text, "_standard", refused)
    value = {"flags": [True, False, None], "n": -3, "x": 2.5, "s": 'é\n"', "t": (), "d": {}}
    assert json_text.indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_view_file_is_written_without_the_standard_librarys_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = new_game(tmp_path / "game", "alice,bob,carol,dave")
    write_skeletons(directory)
    processor.resolve_game(directory)
    written = (report_dir(directory, 1) / "bob.view.json").read_text()
    assert written == json.dumps(json.loads(written), indent=2, ensure_ascii=False) + "\n"

    def refused(*args: object, **kwargs: object) -> str:
        raise AssertionError("the slow way")

    monkeypatch.setattr(json_text, "_standard", refused)
    game = read_game(directory)
    events = processor.read_history(directory, 1).events
    assert report.view_file(game, 1, events, "bob") == written


TRANSLATED = [
    '{{ _("Player") }}',
    '{{ _("held by %(player)s", player=name) }}',
    '{{ ngettext("%(num)s army", "%(num)s armies", n) }}',
    '{{ ngettext("%(num)s turn", "%(num)s turns", 1) }}|{{ gettext("you") }}',
    '{{ _("100%% sure: %(x)s", x=name) }}',
    '{% autoescape false %}{{ _("held by %(player)s", player=name) }}{% endautoescape %}',
    '{{ _("%(what)s over time", what=name|upper) }}',
    "{% trans %}Nothing happened.{% endtrans %}",
    "{% trans count=n %}{{ count }} roll{% pluralize %}{{ count }} rolls{% endtrans %}",
]


@pytest.mark.parametrize("code", ["en", "sv", "gu", "id"])
@pytest.mark.parametrize("autoescape", [True, False])
def test_the_templates_translations_are_those_of_jinja2s_i18n_extension(
    code: str, autoescape: bool
) -> None:
    catalogue = i18n.translations(code)
    stock = jinja2.Environment(extensions=["jinja2.ext.i18n"], autoescape=autoescape)
    stock.install_gettext_translations(catalogue, newstyle=True)  # type: ignore[attr-defined]
    ours = jinja2.Environment(extensions=["jinja2.ext.i18n"], autoescape=autoescape)
    ours.install_gettext_translations(catalogue, newstyle=True)  # type: ignore[attr-defined]
    ours.globals.update(report._translators(catalogue))
    for source in TRANSLATED:
        for n in (0, 1, 2, 1000):
            values = {"name": "<o'brien & co>", "n": n}
            expected = stock.from_string(source).render(values)
            assert ours.from_string(source).render(values) == expected, (source, n)
    assert report.environment(None, code).globals["ngettext"].__name__ == "counted"


def test_preload_loads_the_number_formats_before_workers_are_forked() -> None:
    """Numbers from a thousand up are Babel's: its locale data is loaded once, before the
    fork, not by every worker."""
    i18n._number.cache_clear()
    report.preload()
    assert ("en", 1000) in {key[:2] for key in _cached_numbers()}


def _cached_numbers() -> list[tuple[object, ...]]:
    """The (language, number) pairs `i18n._number` has worked out, through a probe of its
    cache: a hit on a pair asked before leaves the count of misses as it was."""
    seen = []
    for key in [("en", 1000), ("en", 1001)]:
        misses = i18n._number.cache_info().misses
        i18n._number(*key)
        if i18n._number.cache_info().misses == misses:
            seen.append(key)
    return seen


def test_the_map_board_is_drawn_once_a_resolution_not_again_in_each_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = new_game(tmp_path / "game", "alice,bob,carol,dave")
    env = report.environment(directory.resolve())
    env.rendered.clear()  # type: ignore[attr-defined]
    asked: list[str] = []
    real = env.get_template

    def get_template(name: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(str(name))
        return real(name, *args, **kwargs)

    monkeypatch.setattr(env, "get_template", get_template)
    write_skeletons(directory)
    processor.resolve_game(directory)
    assert asked.count("report.html.j2") == 4  # so the test can fail
    assert asked.count("map_board.html.j2") == 1


def test_a_games_own_template_may_translate_with_trans_blocks(tmp_path: Path) -> None:
    source = (
        "{% trans who=player %}Hello {{ who }}{% endtrans %}|"
        '{% trans %}Nothing happened.{% endtrans %}|{{ _("you") }}\n'
    )
    text = _resolved_with_own(tmp_path, "report.txt.j2", source, "alice.txt")
    assert text == "Hello alice|Nothing happened.|you\n"


def test_a_players_language_is_found_with_the_games_own_catalogue(tmp_path: Path) -> None:
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo

    directory = new_game(tmp_path / "game")
    folder = directory / "locale" / "en" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    own = Catalog(locale="en")
    own.add("The board", "The battlefield")
    with (folder / "pbem.mo").open("wb") as f:
        write_mo(f, own)
    game = read_game(directory)
    i18n.language.cache_clear()  # the deal's reports were rendered before the catalogue was
    try:
        lang = report.player_language(game, "alice")  # the game's folder found from the game
        assert lang._("The board") == "The battlefield"
        assert lang == report.player_language(game, "alice", directory.resolve())
    finally:
        i18n.language.cache_clear()


def test_a_games_own_template_may_redefine_gettext_as_jinja2_allows(tmp_path: Path) -> None:
    """The direct translations serve pbem's own templates alone: in a game's own, `_` calls
    whatever `gettext` the template has, as Jinja2's i18n extension does."""
    source = '{% macro gettext(s) %}mine: {{ s }}{% endmacro %}{{ _("Player") }}\n'
    assert _resolved_with_own(tmp_path, "report.txt.j2", source, "alice.txt") == "mine: Player\n"


def test_a_json_value_inside_itself_is_refused_as_the_standard_library_refuses_it() -> None:
    looped: list[Any] = [1]
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        json_text.indented_json({"a": looped})
