"""Compiled report templates kept between runs, so that a command does not compile them anew.

Jinja2 compiles each template to Python code on first use (a quarter of a `pbem resolve`). The
code is kept in Jinja2's per-user cache folder (in the system's temporary folder, created
private to the user, refused when anyone else owns it or may write to it), each file checked
against its template's text before use. The cache only saves time: when it cannot be read or
written (no such folder, a full disk, a damaged file), the template is compiled as before.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from pbem import __version__

if TYPE_CHECKING:
    import jinja2
    from jinja2.bccache import Bucket

PATTERN = f"__pbem-{__version__}-%s_%%s.cache"
"""pbem's own cache files, by version and kind of environment: its templates compile with
pbem's own settings, and to different code in the sandbox with its limits (a game's own
templates, "limited": loops counted) and out of it (the built-in ones alone)."""


def template_cache(
    directory: str | None = None, sandboxed: bool = True
) -> jinja2.BytecodeCache | None:
    """The cache of compiled templates (in `directory`, by default Jinja2's private folder for
    the user) for the sandbox or for the plain environment, or None when no safe folder for it
    can be had."""
    import jinja2

    class QuietCache(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # noqa: BLE001 - a damaged file: compile the template instead
                bucket.reset()

        def dump_bytecode(self, bucket: Bucket) -> None:
            with contextlib.suppress(OSError):
                super().dump_bytecode(bucket)

    try:
        return QuietCache(directory, pattern=PATTERN % ("limited" if sandboxed else "builtin"))
    except (OSError, RuntimeError):  # no private folder to be had
        return None
