"""A game's own templates: read from its `templates/` folder without following a link, and
rendered within limits, so that a template pack can neither put a file from outside the game
into a report nor keep a resolution running for ever.

The loader looks at every part of a template's path with lstat: a template that is a symbolic
link, or a `templates/` folder that is one, is refused with a sentence naming the link, and a
template that is not a regular file (a FIFO, a device) is refused without being opened.

A rendering in the sandbox counts its steps: every pass of a loop and every call (a macro, a
function, a method) is one. A rendering that takes more than `STEPS` is stopped with a sentence
naming the template; pbem's own templates take a few hundred for a report. What can make a
huge value from small ones is bounded too: `**`, `*`, `+` and `%` (and `str.format`) may not
make a text or list over LONGEST, a filter or `lipsum()` is given no number over MAX_ARGUMENT,
and a rendering may take at most MEMORY more bytes of memory (on Linux, through the process's
address-space limit, set for the rendering and restored after it).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import jinja2
from jinja2 import nodes
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment

from pbem.errors import PbemError
from pbem.files import FileProblem, link_on_the_way, link_sentence, read_bounded
from pbem.languages.own_catalogue import conversions

TEMPLATE_LIMIT = 256 * 1024
"""The largest template of a game read, in bytes (pbem's largest is some 10 KiB)."""
STEPS = 100_000
"""The most steps (passes of a loop, calls) one rendering of a game's own template may take."""
MAX_ARGUMENT = 10_000
"""The largest number a filter or function of a game's own template is given (a width, a
count); the value a filter is applied to may be any number."""
LONGEST = 1_000_000
"""The longest text or list one `*` or `%` of a game's own template may make, and the largest
format width or precision it may ask for."""
MEMORY = 256 * 1024**2
"""The most memory, in bytes, one rendering of a game's own template may take."""
COUNTED = "pbem_counted"
"""The filter every loop of a game's own template is read through (added when compiled)."""

FIX = "fix the template and run the command again"


class TemplateRefused(PbemError):
    """A game's own template that pbem will not read or render further: its name and why."""


class OwnTemplates(jinja2.BaseLoader):
    """The templates in `game`/templates, read without following links (see the module)."""

    def __init__(self, game: Path) -> None:
        self.game = game
        self.folder = game / "templates"

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        path = self.folder.joinpath(*split_template_path(template))
        link = link_on_the_way(self.game, path)
        if link is not None:
            raise TemplateRefused(f"template {template}: {link_sentence(link)}")
        if not os.path.lexists(path):
            raise jinja2.TemplateNotFound(template)
        try:
            source = read_bounded(path, TEMPLATE_LIMIT, follow=False).decode("utf-8")
            mtime = os.lstat(path).st_mtime_ns
        except FileProblem as err:
            raise TemplateRefused(f"template {path}: {err}") from None
        except UnicodeDecodeError as err:
            raise TemplateRefused(f"template {path} is not UTF-8 text ({err}); {FIX}") from None
        except OSError as err:
            raise TemplateRefused(f"cannot read template {path}: {err.strerror or err}") from None

        def uptodate() -> bool:
            try:
                return os.lstat(path).st_mtime_ns == mtime
            except OSError:
                return False

        return source, str(path), uptodate


class Steps:
    """The steps left to the rendering under way (`rendering` starts one)."""

    def __init__(self) -> None:
        self.left = STEPS

    @contextlib.contextmanager
    def rendering(self) -> Iterator[None]:
        """One rendering: STEPS steps, and at most MEMORY more bytes of memory."""
        self.left = STEPS
        try:
            with memory_bound():
                yield
        except MemoryError as err:
            raise TemplateRefused(
                f"the template needed more than {MEMORY // 1024**2} MiB of memory and was "
                f"stopped; a report needs a few megabytes: {FIX}"
            ) from err

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise TemplateRefused(
                f"the template took more than {STEPS:,} steps (passes of a loop, calls) and was "
                f"stopped; a report needs far fewer: {FIX}"
            )

    def counted(self, items: Iterable[Any]) -> Iterator[Any]:
        """`items`, a step taken for each."""
        for item in items:
            self.take()
            yield item


@contextlib.contextmanager
def memory_bound() -> Iterator[None]:
    """At most MEMORY more bytes of address space for the process while it renders a game's
    own template (where the system sets such a limit: Linux), so that a template that doubles
    a text forty times meets MemoryError instead of taking the machine's memory."""
    limit = None
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm", encoding="ascii") as statm:
            size = int(statm.read().split()[0]) * resource.getpagesize()
        wanted = size + MEMORY
        if (soft == resource.RLIM_INFINITY or soft > wanted) and (
            hard == resource.RLIM_INFINITY or hard >= wanted
        ):
            resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
            limit = (soft, hard)
    except (ImportError, OSError, ValueError):
        pass  # no such limit here: the steps still bound the time
    try:
        yield
    finally:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, limit)


def count_loops(template: nodes.Template) -> nodes.Template:
    """`template` with every loop reading its items through the COUNTED filter."""
    for loop in template.find_all(nodes.For):
        loop.iter = nodes.Filter(loop.iter, COUNTED, [], [], None, None, lineno=loop.lineno)
    return template


def bounded(name: str, function: Callable[..., Any], *, filter: bool = True) -> Callable[..., Any]:
    """A filter (or, not `filter`, a global function) of the sandbox that refuses a number
    argument over MAX_ARGUMENT (a width, a count: `'x'|center(10 ** 9)`, `lipsum(10 ** 9)`)
    and, as `format`, a format too wide; the value a filter is applied to may be any number."""
    from jinja2.utils import _PassArg

    skip = (_PassArg.from_obj(function) is not None) + filter  # the context, the value

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for value in (*args[skip:], *kwargs.values()):
            if type(value) is int and abs(value) > MAX_ARGUMENT:
                raise TemplateRefused(
                    f"{name} was given {value:,}: a filter or function of a template is given "
                    f"no number over {MAX_ARGUMENT:,}; {FIX}"
                )
        if name == "format" and len(args) >= skip and isinstance(args[skip - 1], str):
            problem = bounded_binop("%", args[skip - 1], tuple(args[skip:]))
            if problem is not None:
                raise TemplateRefused(f"{problem}; {FIX}")
        return function(*args, **kwargs)

    return checked


def bound_arguments(environment: jinja2.Environment) -> None:
    """Every filter of `environment`, and its `lipsum`, made `bounded`."""
    for name, function in list(environment.filters.items()):
        if name != COUNTED:
            environment.filters[name] = bounded(name, function)
    lipsum = cast("Callable[..., Any]", environment.globals["lipsum"])
    environment.globals["lipsum"] = bounded("lipsum", lipsum, filter=False)


def bounded_format(text: str, args: Iterable[Any]) -> str | None:
    """Why `text.format(*args)` would make too long a text, or None: a width or precision in
    a field's format over LONGEST, or one given as an argument (`'{:{}}'`) over LONGEST."""
    specs = re.findall(r"\{[^{}]*?:([^{}]*)", text)
    widths = [len(n) >= 10 or int(n) > LONGEST for spec in specs for n in re.findall(r"\d+", spec)]
    nested = re.search(r"\{[^{}]*:[^{}]*\{", text) is not None
    if any(widths) or nested and any(type(a) is int and abs(a) > LONGEST for a in args):
        return f"the format {text[:40]!r} asks for too wide a field"
    return None


def bounded_str_format(
    method: Any, wrapped: Callable[..., str] | None
) -> Callable[..., str] | None:
    """The sandbox's `str.format` (or `format_map`) of a text, `wrapped`, refusing a field too
    wide (`bounded_format`); None when `method` is no such method."""
    if wrapped is None:
        return None
    text = str(method.__self__)

    def checked(*args: Any, **kwargs: Any) -> str:
        mapped = [v for m in args if isinstance(m, dict) for v in m.values()]
        problem = bounded_format(text, [*args, *kwargs.values(), *mapped])
        if problem is not None:
            raise TemplateRefused(f"{problem}; {FIX}")
        return wrapped(*args, **kwargs)

    return checked


def bounded_binop(operator: str, left: Any, right: Any) -> str | None:
    """Why `left operator right` would make a value too large to make, or None."""
    if operator == "**":
        ints = isinstance(left, int) and isinstance(right, int)
        if ints and abs(left) > 1 and right * abs(left).bit_length() > 10_000:
            return f"{left} ** {right} is too large a number"
        return None
    sized = (str, list, tuple)
    length = 0
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, sized) and isinstance(times, int):
                length = len(seq) * times
    elif operator == "+" and isinstance(left, sized) and isinstance(right, sized):
        length = len(left) + len(right)
    elif operator == "%" and isinstance(left, str):
        widths = [width for _, width, _ in conversions(left)]
        values = right if isinstance(right, tuple) else (right,)
        given = [abs(v) for v in values if type(v) is int] if -1 in widths else []
        length = max([*widths, *given], default=0)
    if length > LONGEST:
        return f"a text or list of {length:,} items is too long"
    return None


@functools.cache
def sandbox() -> type[ImmutableSandboxedEnvironment]:
    """Jinja2's immutable sandbox, its verdict on an attribute remembered by the type of the
    object and the attribute's name, the only things the verdict depends on (a report reads
    a thousand attributes, of a dozen kinds)."""

    class Sandbox(ImmutableSandboxedEnvironment):
        """The sandbox, with the limits of a game's own templates (own_templates): loops and
        calls counted, the operators that can make huge values bounded."""

        intercepted_binops = frozenset({"**", "*", "%", "+"})

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.verdicts: dict[tuple[type[Any], str], bool] = {}
            self.steps = Steps()
            self.filters[COUNTED] = self.steps.counted

        def _parse(self, source: str, name: str | None, filename: str | None) -> Any:
            return count_loops(super()._parse(source, name, filename))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
            __self.steps.take()
            return super().call(__context, __obj, *args, **kwargs)

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            return bounded_str_format(value, super().wrap_str_format(value))

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            problem = bounded_binop(operator, left, right)
            if problem is not None:
                raise TemplateRefused(f"{problem}; {FIX}")
            return super().call_binop(context, operator, left, right)

        def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
            key = (type(obj), attr)
            verdict = self.verdicts.get(key)
            if verdict is None:
                verdict = self.verdicts[key] = super().is_safe_attribute(obj, attr, value)
            return verdict

        def getattr(self, obj: Any, attribute: str) -> Any:
            """The sandbox's `getattr`, with shortcuts that give the same answers: a name that
            is no attribute of a plain dict is a key; a plain value (no method) needs only the
            verdict on its attribute."""
            kind = type(obj)
            if kind is dict and attribute not in _DICT_ATTRIBUTES:
                try:
                    return obj[attribute]
                except KeyError:
                    return self.undefined(obj=obj, name=attribute)
            try:
                value = getattr(obj, attribute)
            except AttributeError:
                try:
                    return obj[attribute]
                except (TypeError, LookupError):
                    return self.undefined(obj=obj, name=attribute)
            if type(value) not in _PLAIN_VALUES:
                wrapped = self.wrap_str_format(value)
                if wrapped is not None:
                    return wrapped
            if self.is_safe_attribute(obj, attribute, value):
                return value
            return self.unsafe_undefined(obj, attribute)

    return Sandbox


_DICT_ATTRIBUTES = frozenset(dir(dict))
"""Every attribute a plain dict has (its methods): any other name read from a dict is a key."""
_PLAIN_VALUES = frozenset({str, int, float, bool, type(None), tuple, list, dict})
"""Values that are never a bound `str.format`, which the sandbox wraps."""
