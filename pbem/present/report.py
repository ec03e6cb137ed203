"""Reports: what each player is sent after a resolution, rendered from their view.

One Jinja2 environment per game directory (the game's own `templates/` before the built-in
ones), with StrictUndefined so a typo in a template fails loudly, and autoescaping for HTML.
Templates only format: this module hands them ready values (the story told from the events,
the board by continent, the map's shapes, the hand's sets, the dice check), all computed from
the player's view of the state, so that nothing secret can reach a template by another road.
"""

from __future__ import annotations

import contextlib
import functools
import gettext
import traceback
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.core.events import (
    Event,
)
from pbem.core.orders import Orders
from pbem.core.tallies import Tallies
from pbem.errors import PbemError
from pbem.languages import i18n
from pbem.languages.numbering import Undone
from pbem.present.bounds import bounded_story
from pbem.present.bytecode import template_cache
from pbem.present.context import (
    KIT_COMMAND,
    deadline_iso,
    deadline_text,
    dice_section,
    piles_context,
    report_context,
)
from pbem.present.json_text import indented_json
from pbem.present.secret_check import secret_hash
from pbem.present.sentences import narrate
from pbem.present.skeleton import next_turn_of, order_skeleton
from pbem.present.stats import Story, signed, story_after, without_battles
from pbem.present.story import armies_before, tell
from pbem.present.svgmap import draw_territories, map_shapes, player_colours
from pbem.present.talk import press_items, press_view
from pbem.present.text import WIDTH, wrap
from pbem.present.view import game_view
from pbem.records.press import Press
from pbem.records.store import Game
from pbem.terminal import printable, quoted

if TYPE_CHECKING:  # Jinja2 is loaded when a report is rendered, not by every command
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = [
    "MODERATOR",
    "TemplateProblem",
    "armies_before",
    "deadline_iso",
    "deadline_text",
    "dice_section",
    "environment",
    "map_shapes",
    "narrate",
    "next_turn_of",
    "order_skeleton",
    "piles_context",
    "player_colours",
    "render",
    "render_reports",
    "render_template",
    "report_context",
    "tell",
    "view_file",
]


class TemplateProblem(PbemError):
    """A report template that cannot be rendered: its name, line and what is wrong."""


MODERATOR = "_moderator"


def builtin_templates() -> Path:
    """The templates that ship with pbem (inside the wheel, or beside the package in a checkout)."""
    packaged = resources.files("pbem") / "templates"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "templates"


def environment(game_dir: Path | None = None, language: str = i18n.DEFAULT) -> jinja2.Environment:
    """The Jinja2 environment for a game: its own templates/ folder first, then the built-in.

    A game with templates of its own renders in Jinja2's immutable sandbox: its template can
    format what it is given but reach nothing else (no attribute that leads to Python's
    internals, no method that changes a value). A game without renders pbem's own templates
    alone, outside it. Every value a template prints goes through `printable`, so a control
    character a player wrote is shown escaped.

    Templates speak `language` through Jinja2's i18n extension (`_()`, `ngettext()`,
    `{% trans %}`, newstyle: placeholders as `%(name)s`; for pbem's own templates alone the
    same translations called directly, `_translators`), from the game's own catalogue (its
    `locale/` folder) before the built-in one (docs/languages.md)."""
    own = game_dir / "templates" if game_dir is not None else None
    return _environment(
        own if own is not None and own.is_dir() else None, i18n.own_catalogues(game_dir), language
    )


def preload() -> None:
    """Load Jinja2, the built-in templates (compiled) and the number formats into the shared
    environments of the players' default language and the moderator's: done before worker
    processes are forked, each of them finds them loaded instead of loading its own."""
    for code in dict.fromkeys((i18n.DEFAULT, i18n.moderator_language())):
        env = environment(None, code)
        for name in env.list_templates(filter_func=lambda n: n.endswith(".j2")):
            env.get_template(name)
        i18n.language(code).number(1000)


def _printable_value(value: Any, markup: type[str]) -> Any:
    if isinstance(value, markup):  # markup: markupsafe.Markup, passed in by _environment
        return markup(printable(str(value), lines=True))
    if isinstance(value, str):
        return printable(value, lines=True)
    return value


def _finalize(markup: type[str]) -> Callable[[Any], Any]:
    """`_printable_value` as the environment's `finalize`, quicker for the commonest values
    (every value a report prints goes through it)."""

    def finalize(value: Any) -> Any:
        kind = type(value)
        if kind is str:  # printable text has nothing `printable` would escape
            return value if value.isprintable() else printable(value, lines=True)
        if kind is int or (kind is markup and value.isprintable()):
            return value
        return _printable_value(value, markup)

    return finalize


@functools.lru_cache(maxsize=32)
def _environment(own: Path | None, game_dir: Path | None, language: str) -> jinja2.Environment:
    """The environment of the games with templates `own` and catalogues in `game_dir`/locale
    (None: the built-in ones): one for every game that has neither."""
    import jinja2
    import markupsafe

    loaders: list[jinja2.BaseLoader] = []
    if own is not None:
        from pbem.present.own_templates import OwnTemplates

        loaders.append(OwnTemplates(own.parent))
    loaders.append(jinja2.FileSystemLoader(str(builtin_templates())))
    # pbem's own templates alone need no sandbox: it guards against a game's own (a value a
    # player wrote is escaped and made printable the same way in both).
    env = (_sandbox() if own is not None else jinja2.Environment)(
        loader=jinja2.ChoiceLoader(loaders),
        finalize=_finalize(markupsafe.Markup),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(
            ["html", "htm", "xml", "svg", "html.j2", "htm.j2", "xml.j2", "svg.j2"]
        ),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=template_cache(sandboxed=own is not None),
        auto_reload=own is not None,  # pbem's own templates do not change while it runs
        extensions=["jinja2.ext.i18n"],
    )
    catalogue = i18n.translations(language, game_dir)
    env.install_gettext_translations(catalogue, newstyle=True)  # type: ignore[attr-defined]
    if own is None:  # a game's own templates keep the extension's (which they may redefine)
        env.globals.update(_translators(catalogue))
    env.globals["draw_territories"] = lambda territories: markupsafe.Markup(
        draw_territories(territories, catalogue)
    )
    env.rendered = {}  # type: ignore[attr-defined]  # pieces the same in many reports (_board_svg)
    env.filters["columns"] = columns
    env.filters["command"] = command_lines
    env.filters["signed"] = signed
    env.globals["kit"] = KIT_COMMAND  # (the macros name the player's kit too)
    env.filters["pad"] = i18n.pad
    env.filters["count"] = lambda n, width: i18n.pad("?" if n is None else str(n), width, True)
    env.filters["number"] = lambda n: i18n.language(language).number(n)
    env.globals["wrap"] = i18n.wrap
    env.globals["width"] = i18n.display_width
    if own is not None:  # every filter of a game's own templates, its numbers bounded
        from pbem.present.own_templates import bound_arguments

        bound_arguments(env)
    return env


def _translators(catalogue: gettext.NullTranslations) -> dict[str, Callable[..., str]]:
    """`_`, `gettext` and `ngettext` for templates, as Jinja2's i18n extension makes them
    (newstyle: where the template escapes HTML the translation is markup, and its %(name)s
    placeholders are filled with escaped values; `%(num)s` is the number), but called
    directly: the extension's go through three calls of the template's context each, and a
    report prints a hundred translations a page."""
    from jinja2 import pass_eval_context
    from jinja2.nodes import EvalContext
    from markupsafe import Markup

    @pass_eval_context
    def translated(context: EvalContext, message: str, /, **values: Any) -> str:
        text = catalogue.gettext(message)
        return (Markup(text) if context.autoescape else text) % values

    @pass_eval_context
    def counted(
        context: EvalContext, singular: str, plural: str, num: int, /, **values: Any
    ) -> str:
        values.setdefault("num", num)
        text = catalogue.ngettext(singular, plural, num)
        return (Markup(text) if context.autoescape else text) % values

    return {"_": translated, "gettext": translated, "ngettext": counted}


def _sandbox() -> type[ImmutableSandboxedEnvironment]:
    """Jinja2's immutable sandbox with the limits of a game's own templates (own_templates)."""
    from pbem.present.own_templates import sandbox

    return sandbox()


def columns(text: str, indent: str | int = "", more: str | int | None = None) -> str:
    """The `columns` filter: a paragraph wrapped to 78 characters for the text reports, the first
    line indented by `indent` (spaces, or their number), the others by `more` (default: the
    same)."""
    first = " " * indent if isinstance(indent, int) else indent
    rest = " " * more if isinstance(more, int) else more
    return "\n".join(wrap(str(text), first, rest))


def command_lines(text: str, indent: int = 2) -> str:
    """A command for the text reports, indented by `indent`: on one line when it fits 78
    columns, else broken between words with a shell's line continuation (" \\"), the
    further lines indented two more, so that it still pastes into a terminal as it is."""
    first = " " * indent
    if i18n.display_width(first + text) <= WIDTH:
        return first + text
    lines: list[str] = []
    line = first
    for word in text.split(" "):
        fresh = not line.strip()
        candidate = line + word if fresh else f"{line} {word}"
        if not fresh and i18n.display_width(candidate) > WIDTH - 2:
            lines.append(line + " \\")
            line = " " * (indent + 2) + word
        else:
            line = candidate
    lines.append(line)
    return "\n".join(lines)


def render(
    game: Game,
    resolution: int,
    events: Sequence[Event],
    player: str | None,
    kind: str = "txt",
    rejected: Sequence[str] = (),
    orders: Sequence[Orders] = (),
    now: datetime | None = None,
    undone: Sequence[Undone] = (),
    story: Story | None = None,
    forecasts: Sequence[str] = (),
) -> str:
    """A report as text ("txt") or HTML ("html"); player None: the moderator's overview, with
    `forecasts`, what the orders carried out were forecast to do."""
    where = game.path.resolve()
    lang = player_language(game, player, where)
    context = _context(game, lang, resolution, events, player, rejected, orders, now, undone, story)
    return _render(lang, where, player, kind, context, forecasts)


def _context(
    game: Game,
    lang: i18n.Language,
    resolution: int,
    events: Sequence[Event],
    player: str | None,
    rejected: Sequence[str] = (),
    orders: Sequence[Orders] = (),
    now: datetime | None = None,
    undone: Sequence[Undone] = (),
    story: Story | None = None,
) -> dict[str, Any]:
    """The context of `player`'s reports (both kinds), in their language `lang`."""
    with i18n.speaking(lang):
        context = report_context(
            game, resolution, events, player, rejected, orders, now, undone, story
        )
    context["lang"] = lang.code
    return context


def _render(
    lang: i18n.Language,
    where: Path,
    player: str | None,
    kind: str,
    context: Mapping[str, Any],
    forecasts: Sequence[str] = (),
) -> str:
    """One of `player`'s reports from their context (`_context`), for the game at `where`."""
    name = "moderator" if player is None else "report"
    env = environment(where, lang.code)
    with i18n.speaking(lang):
        if kind == "html":
            context = {**context, "map": {**context["map"], "board_svg": _board_svg(env, context)}}
        return render_template(
            env,
            f"{name}.{kind}.j2",
            {**context, "forecasts": list(forecasts) if player is None else []},
        )


def _board_svg(env: jinja2.Environment, context: Mapping[str, Any]) -> Any:
    """The map's continents and borders (map_board.html.j2), rendered once for every report
    with the same shapes in this environment (its templates and language)."""
    import markupsafe

    shapes = context["map"]
    key = (tuple(shapes["continents"]), tuple(shapes["lines"]), tuple(shapes["edge_labels"]))
    kept: dict[object, str] = getattr(env, "rendered", {})
    if key not in kept:
        kept[key] = render_template(env, "map_board.html.j2", {"map": shapes})
    return markupsafe.Markup(kept[key])


def player_language(game: Game, player: str | None, where: Path | None = None) -> i18n.Language:
    """The language `player` reads (None: the moderator's, PBEM_LANG); `where` is the game's
    folder, resolved."""
    code = i18n.moderator_language() if player is None else game.language_of(player)
    return i18n.language(code, game.state.board.name, where or game.path.resolve())


def render_template(env: jinja2.Environment, name: str, context: Mapping[str, Any]) -> str:
    """One template rendered; any fault in it (syntax, a missing value, something the sandbox
    refuses, an error while rendering) is a TemplateProblem naming the template and line."""
    import jinja2

    fix = "fix the template and run the command again"
    steps = getattr(env, "steps", None)  # a game's own templates: rendered within limits
    try:
        with steps.rendering() if steps is not None else contextlib.nullcontext():
            return env.get_template(name).render(context)
    except PbemError as err:  # refused by the loader or stopped by a limit (own_templates)
        where = _template_line(err.__cause__ or err, name)
        raise TemplateProblem(f"template {where}: {err}") from None
    except jinja2.TemplateSyntaxError as err:
        where = f"{err.filename or err.name or name} line {err.lineno}"
        raise TemplateProblem(f"template {where}: {err.message}; {fix}") from None
    except jinja2.TemplateNotFound as err:
        raise TemplateProblem(f"template {err.name} is missing; {fix}") from None
    except Exception as err:  # noqa: BLE001 - a game's own template can raise anything
        raise TemplateProblem(
            f"template {_template_line(err, name)}: {type(err).__name__}: "
            f"{quoted(str(err), 200)}; {fix}"
        ) from None


def _template_line(err: BaseException, name: str) -> str:
    """The template file and line an error was raised at (Jinja2 puts them in the traceback)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not f.filename.endswith(".py")]
    if not frames:
        return name
    return f"{frames[-1].filename} line {frames[-1].lineno}"


def render_text(game: Game, resolution: int, events: Sequence[Event], player: str | None) -> str:
    return render(game, resolution, events, player, "txt")


def view_file(
    game: Game,
    resolution: int,
    events: Sequence[Event],
    player: str,
    story: Story | None = None,
) -> str:
    """The player's view (docs/views.md) with this resolution's dice check, the story of the
    game so far (public, for `pbem stats --view`) and the hash of the player's own secret, as
    sent with a report."""
    view = game_view(game.state, player, game.commitment, deadline_iso(game))
    return _view_file(
        game,
        player,
        view,
        dice_section(game, resolution, events, player),
        story if story is not None else _story(game, resolution, events),
    )


def _view_file(
    game: Game,
    player: str,
    view: Mapping[str, Any],
    dice: Mapping[str, Any],
    story: Story,
    press: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The view file from the player's view and the resolution's dice check and story, and
    the table talk they sent or were sent while it was pending (only when there is some)."""
    out = {**view, "dice": dice}
    if press:
        out["press"] = list(press)
    if game.language_of(player) != i18n.DEFAULT:
        out["language"] = game.language_of(player)
    reg = game.registration(player)
    if reg is not None:
        out["secret_check"] = secret_hash(game.seed, player, reg.secret).to_dict()
    out["stats"] = bounded_story(without_battles(story.told(game.state, player)))
    return indented_json(out) + "\n"


def render_reports(
    game: Game,
    resolution: int,
    events: Sequence[Event],
    rejected: Sequence[str] = (),
    orders: Sequence[Orders] = (),
    now: datetime | None = None,
    undone: Sequence[Undone] = (),
    forecasts: Sequence[str] = (),
    away: Sequence[Mapping[str, str]] = (),
    press: Sequence[Press] = (),
    tallies: Tallies | None = None,
) -> dict[str, str]:
    """Every player's report (text, HTML, view file, order file) and the moderator's, by file
    name, rendered in memory: the caller writes them (store.write_files) once all succeeded.
    `orders` are those the resolution carried out (for notes on what they asked); `forecasts`
    what they were forecast to do (for the moderator's overview); `away` the players' vacations
    not yet over (player, from, to); `press` the table talk sent while the resolution was
    pending (each player's report lists what they sent or were sent). Only the players the
    pending turn awaits get an order file.

    <player>.txt is the mail body, .html the same report to open (with the map), .view.json
    the player's view for `pbem check --view` and `pbem verify`, .orders.toml the ready order
    file alone (to attach)."""
    files: dict[str, str] = {}
    story = _story(game, resolution, events, tallies)
    where = game.path.resolve()
    for p in game.state.players:
        lang = player_language(game, p.name, where)
        context = _context(game, lang, resolution, events, p.name, (), orders, now, undone, story)
        context["away"] = _days(away, lang)
        context["press"] = press_items(press, p.name, lang)
        for kind in ("txt", "html"):
            files[f"{p.name}.{kind}"] = _render(lang, where, p.name, kind, context)
        files[f"{p.name}.view.json"] = _view_file(
            game, p.name, context["view"], context["dice"], story, press_view(press, p.name)
        )
        if context["skeleton"] is not None:  # the players the next turn awaits
            files[f"{p.name}.orders.toml"] = context["skeleton"]
    lang = player_language(game, None, where)
    context = _context(game, lang, resolution, events, None, rejected, orders, now, undone, story)
    context["away"] = _days(away, lang)
    context["press"] = press_items(press, None, lang)
    for kind in ("txt", "html"):
        files[f"{MODERATOR}.{kind}"] = _render(lang, where, None, kind, context, forecasts)
    return files


def _days(away: Sequence[Mapping[str, str]], lang: i18n.Language) -> list[dict[str, str]]:
    """The players' vacations with their first and last days as the reader writes days."""
    return [{**a, "from_day": lang.day(a["from"]), "to_day": lang.day(a["to"])} for a in away]


def _story(
    game: Game, resolution: int, events: Sequence[Event], tallies: Tallies | None = None
) -> Story:
    players = [p.name for p in game.state.players]
    return story_after(game.path, resolution, events, players, tallies)
