"""A game's own templates: read from its `templates/` folder without following a link, and
rendered within limits, so that a template pack can neither put a file from outside the game
into a report nor keep a resolution running for ever.

The loader looks at every part of a template's path with lstat: a template that is a symbolic
link, or a `templates/` folder that is one, is refused with a sentence naming the link, and a
template that is not a regular file (a FIFO, a device) is refused without being opened.

A rendering in the sandbox counts its steps: every pass of a loop and every call (a macro, a
function, a method) is one. A rendering that takes more than `STEPS` is stopped with a sentence
naming the template; pbem's own templates take a few thousand for a report. The operators that
can make a huge value from two small ones (`**`, `*` and `+` on text or lists, `%` with a
format width) are bounded the same way, so that one expression cannot run for ever either.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.loaders import split_template_path

from pbem.errors import PbemError
from pbem.game.safety import FileProblem, link_on_the_way, link_sentence, read_bounded
from pbem.present.own_catalogue import conversions

TEMPLATE_LIMIT = 256 * 1024
"""The largest template of a game read, in bytes (pbem's largest is some 10 KiB)."""
STEPS = 100_000
"""The most steps (passes of a loop, calls) one rendering of a game's own template may take."""
LONGEST = 1_000_000
"""The longest text or list one `*` or `%` of a game's own template may make, and the largest
format width or precision it may ask for."""
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
    """The steps left to the rendering under way (`begin` starts one)."""

    def __init__(self) -> None:
        self.left = STEPS

    def begin(self) -> None:
        self.left = STEPS

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


def count_loops(template: nodes.Template) -> nodes.Template:
    """`template` with every loop reading its items through the COUNTED filter."""
    for loop in template.find_all(nodes.For):
        loop.iter = nodes.Filter(loop.iter, COUNTED, [], [], None, None, lineno=loop.lineno)
    return template


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
        length = max((width for _, width, _ in conversions(left)), default=0)
    if length > LONGEST:
        return f"a text or list of {length:,} items is too long"
    return None
