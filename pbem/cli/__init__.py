"""The command line: each command reads its arguments, calls one library function, prints.

Every `PbemError` becomes a one-line message (or one line per problem) and exit code 1
(`pbem.cli.common.reports_errors`).

The commands live in one module per group of commands and are loaded lazily (click's
"lazily loading subcommands" pattern): `pbem check` imports the module of the turn's commands
and nothing of the others, so a command starts as fast as the code it needs allows.

- `pbem.cli.turn`: a game's turn (new, check, resolve, deadline, undo, release);
- `pbem.cli.look`: reading a game (show, dice, audit, stats, press);
- `pbem.cli.tools`: no game needed (map, odds, verify, kit);
- `pbem.cli.mail`: the mail group (fetch, send);
- `pbem.cli.games`: many games (status, run, config);
- `pbem.cli.club`: what spans a root's games (standings);
- `pbem.cli.tournament`: the tournament group (new, show, list, advance);
- `pbem.cli.publish`: a finished game's public record and the club's pages (publish).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import click

from pbem import __version__

COMMANDS = {
    "new": "pbem.cli.turn:new",
    "check": "pbem.cli.turn:check",
    "resolve": "pbem.cli.turn:resolve",
    "deadline": "pbem.cli.turn:deadline",
    "undo": "pbem.cli.turn:undo_command",
    "release": "pbem.cli.turn:release_command",
    "substitute": "pbem.cli.turn:substitute_command",
    "vacation": "pbem.cli.turn:vacation_command",
    "seat": "pbem.cli.turn:seat_command",
    "show": "pbem.cli.look:show",
    "dice": "pbem.cli.look:dice_command",
    "audit": "pbem.cli.look:audit",
    "press": "pbem.cli.look:press_command",
    "stats": "pbem.cli.look:stats_command",
    "map": "pbem.cli.tools:map_command",
    "odds": "pbem.cli.tools:odds_command",
    "verify": "pbem.cli.tools:verify_command",
    "kit": "pbem.cli.tools:kit_command",
    "mail": "pbem.cli.mail:mail_group",
    "status": "pbem.cli.games:status",
    "run": "pbem.cli.games:run",
    "config": "pbem.cli.games:config",
    "standings": "pbem.cli.club:standings_command",
    "publish": "pbem.cli.publish:publish_command",
    "tournament": "pbem.cli.tournament:tournament_command",
}
"""Each command's name and where it is defined: MODULE:ATTRIBUTE."""


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name, each imported from its module the first time it is looked
    up. Listing the names imports nothing; `pbem --help` and completion look every command
    up (their modules import only click)."""

    def __init__(self, lazy: Mapping[str, str], loaded: Mapping[str, click.Command]) -> None:
        self._lazy = dict(lazy)
        self._loaded = dict(loaded)

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            if name not in self._lazy:
                raise KeyError(name)
            module, _, attribute = self._lazy[name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command) or command.name != name:
                raise TypeError(f"{self._lazy[name]} is not the command '{name}'")
            self._loaded[name] = command
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._lazy.pop(name, None)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._loaded and name not in self._lazy:
            raise KeyError(name)
        self._loaded.pop(name, None)
        self._lazy.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._loaded
        yield from (name for name in self._lazy if name not in self._loaded)

    def __len__(self) -> int:
        return len(self._loaded.keys() | self._lazy.keys())


class LazyGroup(click.Group):
    """A group whose commands (`lazy_subcommands`: name to MODULE:ATTRIBUTE) are imported only
    when used. click's own lookups (`get_command`, `list_commands`, the suggestions for a
    mistyped name) and anything reading `group.commands` see every command."""

    def __init__(self, *args: Any, lazy_subcommands: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(lazy_subcommands, self.commands)


@click.group(
    cls=LazyGroup,
    lazy_subcommands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
)
@click.version_option(__version__, prog_name="pbem")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Run games of Risk by email: check orders, resolve turns, write reports, audit dice.

    \b
    Example, a whole turn:
      pbem new games/spring --players alice,bob,carol
      pbem check games/spring games/spring/orders/*.toml
      pbem resolve games/spring

    \b
    Shell completion (for zsh or fish, write zsh_source or fish_source):
      eval "$(_PBEM_COMPLETE=bash_source pbem)"
    """
    if ctx.invoked_subcommand is None:  # bare `pbem`: the help, and success
        click.echo(ctx.get_help())
