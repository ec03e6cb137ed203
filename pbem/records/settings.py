"""Mail settings: the moderator's address, the servers, in layers that override each other.

A setting comes from, in order of precedence: a command-line flag; the game file's `[mail]`
table; the `[mail]` table of a `pbem.toml` in the game's folder or any folder above it (the
nearest wins); the environment (`PBEM_FROM`); the default. Settings are resolved when they are
used (a message is sent, a mailbox read), so a changed setting applies to everything from then
on. No password is ever stored: it comes from an environment variable or a prompt.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from pbem.errors import PbemError
from pbem.files import FileProblem, read_regular

ROOT_FILE = "pbem.toml"
COMMAND_LINE = "the command line"
TABLE = "mail"
DEFAULT_FROM = "pbem@localhost"
FROM_ENV = "PBEM_FROM"
SMTP_PASSWORD_ENV = "PBEM_SMTP_PASSWORD"
IMAP_PASSWORD_ENV = "PBEM_IMAP_PASSWORD"
EMAIL = re.compile(r"^[^@\s<>,;\"]+@[^@\s<>,;\"]+$")
HOST = re.compile(r"^[A-Za-z0-9._:\[\]-]{1,253}$")


class Security(Enum):
    """How a connection to a mail server is protected."""

    NONE = "none"
    STARTTLS = "starttls"
    SSL = "ssl"


class SettingsError(PbemError):
    """A mail setting that cannot be used; says which and what to write instead."""


@dataclass(frozen=True)
class Key:
    """One setting: its name, what kind of value it takes and what it means."""

    name: str
    kind: str  # "address", "host", "port", "security", "text", "path", "choice", "count"
    help: str
    choices: tuple[str, ...] = ()
    """The values a "choice" takes."""
    largest: int = 0
    """The largest value of a "count"."""


PRESS_KINDS = ("none", "public", "private", "all")
"""What the `press` setting allows: nothing, messages to everyone only, messages to chosen
players only, or both."""
DEFAULT_PRESS = "all"
DEFAULT_PRESS_SIZE = 4000
"""The longest message relayed, in characters (the `press_size` setting)."""
LARGEST_PRESS_SIZE = 10_000
"""(A message is read up to 20,000 characters of its own text: a longer one is refused, not cut.)"""
DEFAULT_PRESS_PER_TURN = 10
"""How many messages a player may send while one turn is pending (`press_per_turn`)."""
LARGEST_PRESS_PER_TURN = 1000
PRESS_WHEN_OUT = ("none", "public")
"""What a player out of the game (eliminated, or dropped for missed turns) may send."""


@dataclass(frozen=True)
class PressRules:
    """What a game allows (from its settings, `press_rules`)."""

    kind: str = DEFAULT_PRESS
    anonymous: bool = False
    size: int = DEFAULT_PRESS_SIZE
    per_turn: int = DEFAULT_PRESS_PER_TURN
    when_out: str = "none"

    @property
    def public(self) -> bool:
        return self.kind in ("public", "all")

    @property
    def private(self) -> bool:
        return self.kind in ("private", "all")


def press_rules(values: Mapping[str, object]) -> PressRules:
    """The rules of the settings in force (pbem.records.settings checked each value when set)."""

    def number(name: str, default: int) -> int:
        value = values.get(name)
        return default if value is None else int(str(value))

    return PressRules(
        kind=str(values.get("press") or DEFAULT_PRESS),
        anonymous=str(values.get("press_anonymous") or "no") == "yes",
        size=number("press_size", DEFAULT_PRESS_SIZE),
        per_turn=number("press_per_turn", DEFAULT_PRESS_PER_TURN),
        when_out=str(values.get("press_when_out") or "none"),
    )


KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        Key("from", "address", "the moderator's address, which pbem mails from"),
        Key("reply_to", "address", "where players' replies go (default: the from address)"),
        Key("bcc", "address", "an address that gets a copy of every report"),
        Key(
            "moderator",
            "address",
            "the moderator's own address, for summaries and players' questions (default: from)",
        ),
        Key("smtp_host", "host", "the SMTP server that sends the mail"),
        Key("smtp_port", "port", "its port (default 465 with ssl, 587 with starttls, else 25)"),
        Key("smtp_security", "security", "none, starttls or ssl (default none)"),
        Key("smtp_user", "text", "the SMTP login (password: PBEM_SMTP_PASSWORD or a prompt)"),
        Key("imap_host", "host", "the IMAP server that `pbem run --fetch` reads"),
        Key("imap_port", "port", "its port (default 993 with ssl, else 143)"),
        Key("imap_security", "security", "none, starttls or ssl (default ssl)"),
        Key("imap_user", "text", "the IMAP login (password: PBEM_IMAP_PASSWORD or a prompt)"),
        Key("imap_folder", "text", "the folder to read (default INBOX)"),
        Key(
            "remind",
            "durations",
            "before the deadline, when `pbem run --send` reminds the players without orders "
            '(e.g. "24h, 2h")',
        ),
        Key(
            "resolve",
            "resolve",
            "when `pbem run` resolves a turn: when-ready (the default: once every awaited "
            "player's orders are in) or at-deadline",
        ),
        Key(
            "grace",
            "duration",
            "with when-ready: how long after the last awaited orders came in to wait for a "
            "correction (e.g. 30m)",
        ),
        Key("maildir", "path", "a Maildir that `pbem run --fetch` reads"),
        Key("mbox", "path", "an mbox file that `pbem run --fetch` reads"),
        Key(
            "press",
            "choice",
            "the table talk players may mail each other: all (the default), public (to "
            "everyone only), private (to chosen players only) or none",
            choices=PRESS_KINDS,
        ),
        Key(
            "press_anonymous",
            "choice",
            "yes: press reaches its readers without the sender's name (the moderator knows it)",
            choices=("no", "yes"),
        ),
        Key(
            "press_size",
            "count",
            "the longest message of table talk relayed, in characters "
            f"(default {DEFAULT_PRESS_SIZE})",
            largest=LARGEST_PRESS_SIZE,
        ),
        Key(
            "press_per_turn",
            "count",
            "how many messages of table talk a player may send while a turn is pending "
            f"(default {DEFAULT_PRESS_PER_TURN})",
            largest=LARGEST_PRESS_PER_TURN,
        ),
        Key(
            "press_when_out",
            "choice",
            "what a player out of the game may send: none (the default) or public press",
            choices=PRESS_WHEN_OUT,
        ),
    )
}
RESOLVE_WHEN = ("when-ready", "at-deadline")
SECRET_WORDS = ("password", "pass", "secret", "smtp_password", "imap_password")

Value = str | int
Table = tuple[tuple[str, Value], ...]


def known(name: str) -> Key:
    """The setting called `name`, or SettingsError naming the ones there are."""
    if name.lower() in SECRET_WORDS:
        raise SettingsError(
            "passwords are never stored: set PBEM_SMTP_PASSWORD (or PBEM_IMAP_PASSWORD) in the "
            "environment, or type it when pbem asks"
        )
    key = KEYS.get(name)
    if key is None:
        raise SettingsError(
            f"there is no mail setting '{name}': the settings are {', '.join(KEYS)}"
        )
    return key


def one_address(text: str) -> bool:
    """Whether `text` is one address, with or without a display name."""
    if any(c in text for c in "\r\n\0"):
        return False
    from email.utils import getaddresses  # (and socket, calendar...) only when one is given

    found = getaddresses([text])
    return len(found) == 1 and bool(EMAIL.match(found[0][1]))


def check_value(name: str, value: object) -> Value:
    """A setting's value as stored, or SettingsError saying what is wrong with it."""
    key = known(name)
    if key.kind == "port":
        text = str(value).strip()
        if isinstance(value, bool) or not text.isdigit() or not 0 < int(text) < 65536:
            raise SettingsError(f"{name} must be a port number from 1 to 65535, not '{value}'")
        return int(text)
    if key.kind == "count":
        text = str(value).strip()
        if isinstance(value, bool) or not text.isdigit() or not 0 < int(text) <= key.largest:
            raise SettingsError(f"{name} must be a number from 1 to {key.largest}, not '{value}'")
        return int(text)
    if key.kind == "choice" and isinstance(value, bool) and "yes" in key.choices:
        value = "yes" if value else "no"  # `press_anonymous = true` in a file
    if not isinstance(value, str):
        raise SettingsError(f"{name} must be text, not {value!r}")
    text = value.strip()
    if key.kind == "address" and not one_address(text):
        raise SettingsError(
            f"{name} must be one email address like games@example.org or "
            f"'Risk club <games@example.org>', not '{text}'"
        )
    if key.kind == "host" and not HOST.match(text):
        raise SettingsError(f"{name} must be a host name like mail.example.org, not '{text}'")
    if key.kind == "security" and text not in {s.value for s in Security}:
        raise SettingsError(f"{name} must be none, starttls or ssl, not '{text}'")
    if key.kind == "choice" and text not in key.choices:
        raise SettingsError(f"{name} must be {', '.join(key.choices)}, not '{text}'")
    if key.kind == "resolve" and text not in RESOLVE_WHEN:
        raise SettingsError(f"{name} must be {' or '.join(RESOLVE_WHEN)}, not '{text}'")
    if key.kind == "duration":
        from pbem.records.clock import parse_duration

        try:
            parse_duration(text)
        except PbemError:
            raise SettingsError(f"{name} must be a duration like 30m or 2h, not '{text}'") from None
    if key.kind == "durations":
        from pbem.records.clock import parse_duration

        try:
            parts = [parse_duration(part.strip()) for part in text.split(",") if part.strip()]
        except PbemError:
            parts = []
        if not parts:
            raise SettingsError(
                f'{name} must be durations before the deadline like 24h or "24h, 2h", '
                f"not '{text}'"
            )
    if key.kind in ("text", "path") and (not text or any(c in text for c in "\r\n\0")):
        raise SettingsError(f"{name} must be one line of text, not '{text}'")
    return text


def from_table(table: object, where: str) -> Table:
    """A `[mail]` table as read from a file, checked; sorted so that it writes back the same."""
    if not isinstance(table, Mapping):
        raise SettingsError(f"{where} must be a table of settings")
    out: list[tuple[str, Value]] = []
    for name, value in table.items():
        try:
            out.append((str(name), check_value(str(name), value)))
        except SettingsError as err:
            raise SettingsError(f"{where}: {err}; correct it with 'pbem config'") from None
    return tuple(sorted(out))


def changed(table: Table, assignments: Mapping[str, str]) -> Table:
    """`table` with `key=value` assignments applied; an empty value removes the key."""
    values = dict(table)
    for name, value in assignments.items():
        if value.strip() == "":
            known(name)
            values.pop(name, None)
        else:
            values[name] = check_value(name, value)
    return tuple(sorted(values.items()))


def parse_assignments(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`key=value` arguments into a mapping; raises SettingsError on one without '='."""
    out: dict[str, str] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals:
            raise SettingsError(f"'{item}' is not key=value (write e.g. from=games@example.org)")
        out[name.strip()] = value
    return out


def split_host(spec: str, what: str) -> tuple[str, str | None]:
    """`HOST` or `HOST:PORT` (`[::1]:993` for IPv6) into the host and the port, if given."""
    text = spec.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, None
    if not host or not HOST.match(host) or (port is not None and not port.isdigit()):
        raise SettingsError(f"{what} must be HOST or HOST:PORT, e.g. mail.example.org:993")
    return host, port


# ---------------------------------------------------------------------------------------------
# pbem.toml


def read_root_file(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: a game's own settings need no parser
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    if not path.exists():
        return {}
    try:
        return tomllib.loads(read_regular(path).decode("utf-8"))
    except (FileProblem, UnicodeDecodeError) as err:
        raise SettingsError(f"cannot read {path}: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise SettingsError(f"{path} is not valid TOML: {err}; correct it") from None
    except RecursionError:
        raise SettingsError(f"{path} nests tables too deeply; correct it") from None


def root_table(folder: Path) -> Table:
    """The `[mail]` table of `folder/pbem.toml` (empty when there is none)."""
    path = folder / ROOT_FILE
    return from_table(read_root_file(path).get(TABLE, {}), f"{path} [{TABLE}]")


def write_root_table(folder: Path, table: Table) -> Path:
    """Replace the `[mail]` table of `folder/pbem.toml`, keeping anything else in it."""
    import tomli_w

    from pbem.records.disk import atomic_write

    path = folder / ROOT_FILE
    doc = read_root_file(path)
    doc[TABLE] = dict(table)
    atomic_write(path, tomli_w.dumps(doc))
    return path


def inherited(directory: Path) -> list[tuple[Path, Table]]:
    """The pbem.toml tables that apply to a game or root folder, the nearest first."""
    out: list[tuple[Path, Table]] = []
    folder = directory.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / ROOT_FILE).is_file():
            out.append((candidate / ROOT_FILE, root_table(candidate)))
    return out


# ---------------------------------------------------------------------------------------------
# The settings in force


@dataclass(frozen=True)
class Server:
    """A mail server to connect to: host, port, protection and login name."""

    host: str
    port: int
    security: Security
    user: str | None

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Settings:
    """The mail settings in force for one game (or root), each with where it came from."""

    values: Mapping[str, Value]
    origins: Mapping[str, str]

    def get(self, name: str) -> Value | None:
        return self.values.get(name)

    def text(self, name: str) -> str | None:
        value = self.values.get(name)
        return None if value is None else str(value)

    @property
    def sender(self) -> str:
        return self.text("from") or DEFAULT_FROM

    @property
    def reply_to(self) -> str:
        return self.text("reply_to") or self.sender

    @property
    def bcc(self) -> str | None:
        return self.text("bcc")

    @property
    def resolve_when(self) -> str:
        """When `pbem run` resolves a turn: "when-ready" (the default) or "at-deadline"."""
        return self.text("resolve") or RESOLVE_WHEN[0]

    @property
    def grace(self) -> timedelta:
        """How long after the last awaited orders came in a ready turn waits (0: none)."""
        from pbem.records.clock import parse_duration

        text = self.text("grace")
        return parse_duration(text) if text else timedelta(0)

    @property
    def remind(self) -> list[timedelta]:
        """How long before the deadline players without orders are reminded, longest first."""
        from pbem.records.clock import parse_duration

        text = self.text("remind") or ""
        return sorted(
            (parse_duration(p.strip()) for p in text.split(",") if p.strip()), reverse=True
        )

    @property
    def moderator(self) -> str:
        """Where the moderator reads what pbem could not answer alone (summaries, players'
        questions): their own address, so that it does not land in the mailbox pbem reads."""
        return self.text("moderator") or self.sender

    @property
    def press(self) -> PressRules:
        """The table talk the game allows (pbem.records.press)."""
        return press_rules(self.values)

    def server(self, kind: str) -> Server | None:
        """The SMTP (`kind="smtp"`) or IMAP (`kind="imap"`) server, or None when unset."""
        host = self.text(f"{kind}_host")
        if host is None:
            return None
        default = Security.SSL if kind == "imap" else Security.NONE
        security = Security(self.text(f"{kind}_security") or default.value)
        port = self.get(f"{kind}_port")
        if port is None:
            port = DEFAULT_PORTS[kind][security]
        return Server(host, int(port), security, self.text(f"{kind}_user"))

    def location(self, name: str, directory: Path) -> Path | None:
        """A path setting (`maildir`, `mbox`): a relative one is taken from the folder of the
        pbem.toml that set it, from the current folder when given on the command line, or
        else from `directory` (the game's)."""
        value = self.text(name)
        if value is None:
            return None
        path = Path(value).expanduser()
        origin = self.origins.get(name, "")
        if path.is_absolute():
            return path
        if origin.endswith(ROOT_FILE):
            return Path(origin).parent / path
        return (Path.cwd() if origin == COMMAND_LINE else directory) / path

    def lines(self) -> list[str]:
        """Every setting in force and where it comes from, for `pbem config`."""
        out = []
        for name in KEYS:
            if name in self.values:
                out.append(f"{name} = {self.values[name]}  ({self.origins[name]})")
        return out


DEFAULT_PORTS = {
    "smtp": {Security.NONE: 25, Security.STARTTLS: 587, Security.SSL: 465},
    "imap": {Security.NONE: 143, Security.STARTTLS: 143, Security.SSL: 993},
}


def in_force(
    directory: Path, own: Table = (), flags: Mapping[str, Value | None] | None = None
) -> Settings:
    """The settings for a game (its own table `own`) or a root folder, with `flags` from the
    command line over them; resolved now, from the files as they are now."""
    values: dict[str, Value] = {}
    origins: dict[str, str] = {}
    sender = os.environ.get(FROM_ENV)
    if sender:
        values["from"] = check_value("from", sender)
        origins["from"] = f"the environment ({FROM_ENV})"
    for path, table in reversed(inherited(directory)):
        for name, value in table:
            values[name] = value
            origins[name] = str(path)
    for name, value in own:
        values[name] = value
        origins[name] = "the game file"
    for name, flag in (flags or {}).items():
        if flag is not None:
            values[name] = check_value(name, flag)
            origins[name] = COMMAND_LINE
    return Settings(values, origins)


def password(kind: str, user: str, ask: Any = None) -> str:
    """A server password: from PBEM_SMTP_PASSWORD / PBEM_IMAP_PASSWORD, else `ask()`."""
    env = SMTP_PASSWORD_ENV if kind == "smtp" else IMAP_PASSWORD_ENV
    value = os.environ.get(env)
    if value is None and ask is not None:
        value = ask()
    if value is None:
        raise SettingsError(f"no {kind.upper()} password for {user}: set {env}")
    return str(value)
