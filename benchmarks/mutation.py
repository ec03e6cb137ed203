"""How many planted bugs the tests catch: a small mutation trial over chosen modules.

Each mutant is one small, realistic change to one module (a comparison flipped, `and` for
`or`, a constant off by one, a call statement such as `os.fsync(...)` removed, a condition
negated, a `raise` removed, a function that returns at once, `any` for `all`, a shared lock for
an exclusive one...). The tests that concern that module (the TESTS map below) run against it,
with -x and a time limit: a mutant is caught when they fail (or hang past the limit), missed
when they pass.

The trial runs in a scratch copy of the project, so the working tree is never changed.

Usage:
    python benchmarks/mutation.py [FILE ...] [--sample N] [--seed S] [--list] [--timeout SECONDS]
                                  [--line N ...]

With no FILE, every module in TESTS. `--sample N --seed S` runs a random sample of N mutants
per file (the same sample for the same seed and source); `--line N` then runs only the
sampled mutants on line N (to try again the ones missed after adding tests). Prints, per file:
mutants, caught, missed, and the missed mutants (file:line: what changed); exits 0 in any case.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TESTS: dict[str, list[str]] = {
    "pbem/game/record.py": ["tests/test_publish.py"],
    "pbem/club/site.py": ["tests/test_site.py"],
    "pbem/present/site.py": ["tests/test_site.py"],
    "pbem/club/standings.py": ["tests/test_standings.py"],
    "pbem/club/schedule.py": ["tests/test_tournament.py"],
    "pbem/club/tournament.py": ["tests/test_tournament.py"],
    "pbem/mail/press.py": ["tests/test_press.py"],
    "pbem/records/press.py": ["tests/test_press.py"],
    "pbem/present/talk.py": ["tests/test_press.py"],
    "pbem/core/teams.py": ["tests/test_teams.py"],
    "pbem/core/fog.py": ["tests/test_fog.py"],
    "pbem/core/fog_events.py": ["tests/test_fog.py"],
    "pbem/present/fog_verify.py": ["tests/test_fog.py"],
    "pbem/records/store.py": [
        "tests/test_store.py",
        "tests/test_shell_recovery.py",
        "tests/test_shell_processor.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
    ],
    "pbem/records/disk.py": [
        "tests/test_fetch_groups.py",
        "tests/test_store.py",
        "tests/test_imports.py",
        "tests/test_batch.py",
        "tests/test_shell_recovery.py",
        "tests/test_shell_processor.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
    ],
    "pbem/records/history.py": [
        "tests/test_store.py",
        "tests/test_numbering.py",
        "tests/test_game_directory.py",
        "tests/test_shell_recovery.py",
        "tests/test_shell_processor.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
    ],
    "pbem/game/processor.py": [
        "tests/test_shell_processor.py",
        "tests/test_shell_recovery.py",
        "tests/test_store.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
    ],
    "pbem/game/checking.py": [
        "tests/test_shell_processor.py",
        "tests/test_forecast.py",
        "tests/test_verify.py",
        "tests/test_kit.py",
    ],
    "pbem/game/audit.py": [
        "tests/test_shell_recovery.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
        "tests/test_undo.py",
        "tests/test_deadlines.py",
        "tests/test_game_directory.py",
    ],
    "pbem/core/rules.py": [
        "tests/test_rules.py",
        "tests/test_rare_rules.py",
        "tests/test_stop_at_rule.py",
        "tests/test_engine.py",
        "tests/test_player_turn.py",
        "tests/test_draft.py",
        "tests/test_deck.py",
        "tests/test_missions.py",
        "tests/test_orders.py",
        "tests/test_autopilot.py",
        "tests/test_advice.py",
        "tests/test_odds.py",
        "tests/test_selfplay.py",
    ],
    "pbem/game/deadlines.py": [
        "tests/test_deadlines.py",
        "tests/test_clock.py",
        "tests/test_autopilot.py",
        "tests/test_vacations.py",
        "tests/test_seats_dropped.py",
    ],
    "pbem/records/clock.py": [
        "tests/test_clock.py",
        "tests/test_deadlines.py",
    ],
    "pbem/game/undo.py": [
        "tests/test_undo.py",
    ],
    "pbem/game/players.py": [
        "tests/test_players.py",
        "tests/test_shell_mail.py",
    ],
    "pbem/records/root.py": [
        "tests/test_batch.py",
        "tests/test_batch_settings.py",
    ],
    "pbem/club/status.py": [
        "tests/test_batch.py",
    ],
    "pbem/club/batch.py": [
        "tests/test_batch.py",
        "tests/test_batch_mail.py",
    ],
    "pbem/records/settings.py": [
        "tests/test_batch_settings.py",
        "tests/test_batch_mail.py",
    ],
    "pbem/mail/route.py": [
        "tests/test_batch_mail.py",
    ],
    "pbem/mail/inbox.py": [
        "tests/test_batch_mail.py",
        "tests/test_imap.py",
        "tests/test_batch_settings.py",
        "tests/test_dead_mailbox.py",
        "tests/test_imap_drop.py",
    ],
    "pbem/mail/ahead.py": [
        "tests/test_read_ahead.py",
        "tests/test_mail_fetch.py",
        "tests/test_batch_mail.py",
    ],
    "pbem/mail/message.py": [
        "tests/test_mail_limits.py",
        "tests/test_mail_reading.py",
        "tests/test_mail_clients.py",
        "tests/test_shell_mail.py",
        "tests/test_mail_fetch.py",
        "tests/test_mail.py",
        "tests/test_mail_answers.py",
    ],
    "pbem/mail/fetch.py": [
        "tests/test_mail_reading.py",
        "tests/test_mail_clients.py",
        "tests/test_shell_mail.py",
        "tests/test_mail_fetch.py",
        "tests/test_mail.py",
        "tests/test_mail_answers.py",
    ],
    "pbem/mail/found.py": [
        "tests/test_mail_reading.py",
        "tests/test_mail_clients.py",
        "tests/test_mail_answers.py",
        "tests/test_shell_mail.py",
    ],
    "pbem/mail/quoting.py": [
        "tests/test_mail_reading.py",
        "tests/test_mail_clients.py",
        "tests/test_mail_answers.py",
        "tests/test_shell_mail.py",
    ],
    "pbem/mail/text.py": [
        "tests/test_mail_reading.py",
        "tests/test_mail_clients.py",
        "tests/test_mail_answers.py",
        "tests/test_shell_mail.py",
    ],
    "pbem/mail/told.py": [
        "tests/test_mail_reading.py",
        "tests/test_mail_clients.py",
        "tests/test_mail_answers.py",
        "tests/test_shell_mail.py",
    ],
    "pbem/mail/machine.py": [
        "tests/test_machine_mail.py",
        "tests/test_mail_clients.py",
        "tests/test_mail.py",
    ],
    "pbem/mail/tnef.py": [
        "tests/test_tnef.py",
        "tests/test_mail_reading.py",
        "tests/test_mail_clients.py",
    ],
    "pbem/records/mailstate.py": [
        "tests/test_ledger.py",
        "tests/test_damaged_state.py",
        "tests/test_mail_send.py",
        "tests/test_mail_fetch.py",
    ],
    "pbem/mail/send.py": [
        "tests/test_shell_mail.py",
        "tests/test_mail_send.py",
        "tests/test_mail.py",
        "tests/test_undo.py",
        "tests/test_game_links.py",
        "tests/test_seats.py",
    ],
    "pbem/present/svgmap.py": [
        "tests/test_map_shapes.py",
        "tests/test_report_speed.py",
        "tests/test_report.py",
        "tests/test_shell_report.py",
    ],
    "pbem/present/json_text.py": [
        "tests/test_report_speed.py",
        "tests/test_verify.py",
    ],
    "pbem/present/report.py": [
        "tests/test_shell_report.py",
        "tests/test_report.py",
        "tests/test_example.py",
        "tests/test_verify.py",
        "tests/test_report_speed.py",
        "tests/test_game_directory.py",
        "tests/test_languages.py",
    ],
    "pbem/present/view.py": [
        "tests/test_view_files.py",
        "tests/test_report.py",
        "tests/test_missions.py",
        "tests/test_deck.py",
        "tests/test_draft.py",
        "tests/test_shell_processor.py",
        "tests/test_verify.py",
    ],
    "pbem/present/missions.py": [
        "tests/test_missions.py",
        "tests/test_report.py",
        "tests/test_shell_processor.py",
    ],
    "pbem/present/verify.py": [
        "tests/test_verify.py",
        "tests/test_dice_orders.py",
        "tests/test_kit.py",
        "tests/test_missions.py",
    ],
    "pbem/core/dice.py": [
        "tests/test_dice.py",
        "tests/test_dice_orders.py",
        "tests/test_verify.py",
    ],
    "pbem/core/order_text.py": [
        "tests/test_orders.py",
        "tests/test_shell_processor.py",
    ],
    "pbem/cli/turn.py": [
        "tests/test_cli.py",
        "tests/test_undo.py",
        "tests/test_deadlines.py",
        "tests/test_seats.py",
        "tests/test_vacations.py",
        "tests/test_bot_seats.py",
        "tests/test_seats_dropped.py",
    ],
    "pbem/cli/mail.py": [
        "tests/test_mail.py",
        "tests/test_cli.py",
        "tests/test_batch_mail.py",
        "tests/test_imap_drop.py",
        "tests/test_mail_send.py",
    ],
    "pbem/cli/common.py": [
        "tests/test_cli.py",
    ],
    "pbem/cli/games.py": [
        "tests/test_batch.py",
        "tests/test_players.py",
        "tests/test_batch_settings.py",
        "tests/test_batch_mail.py",
    ],
    "pbem/cli/tools.py": [
        "tests/test_cli.py",
        "tests/test_verify.py",
        "tests/test_kit.py",
    ],
    "pbem/cli/look.py": [
        "tests/test_cli.py",
    ],
    "pbem/cli/__init__.py": [
        "tests/test_cli.py",
    ],
    # Modules split out of those above: the same tests.
    "pbem/core/validation.py": [
        "tests/test_rules.py",
        "tests/test_rare_rules.py",
        "tests/test_stop_at_rule.py",
        "tests/test_engine.py",
        "tests/test_player_turn.py",
        "tests/test_draft.py",
        "tests/test_deck.py",
        "tests/test_missions.py",
        "tests/test_orders.py",
        "tests/test_autopilot.py",
        "tests/test_advice.py",
        "tests/test_odds.py",
        "tests/test_selfplay.py",
    ],
    "pbem/game/show.py": [
        "tests/test_shell_processor.py",
        "tests/test_shell_recovery.py",
        "tests/test_store.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
    ],
    "pbem/game/readiness.py": [
        "tests/test_shell_processor.py",
        "tests/test_shell_recovery.py",
        "tests/test_store.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
    ],
    "pbem/game/outcome.py": [
        "tests/test_shell_processor.py",
        "tests/test_shell_recovery.py",
        "tests/test_store.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
    ],
    "pbem/mail/smtp.py": [
        "tests/test_shell_mail.py",
        "tests/test_mail_send.py",
        "tests/test_mail.py",
        "tests/test_undo.py",
        "tests/test_game_links.py",
        "tests/test_seats.py",
    ],
    "pbem/present/dice_record.py": [
        "tests/test_verify.py",
        "tests/test_dice_orders.py",
        "tests/test_kit.py",
        "tests/test_missions.py",
    ],
    "pbem/club/game_results.py": ["tests/test_standings.py"],
    "pbem/club/standings_text.py": ["tests/test_standings.py"],
    "pbem/club/tournament_file.py": ["tests/test_tournament.py"],
    "pbem/club/tournament_results.py": ["tests/test_tournament.py"],
    "pbem/mail/machine_markers.py": [
        "tests/test_machine_mail.py",
        "tests/test_mail_clients.py",
        "tests/test_mail.py",
    ],
    "pbem/records/undone.py": ["tests/test_records_readers.py", "tests/test_undo.py"],
    "pbem/records/deadline_changes.py": [
        "tests/test_deadlines.py",
        "tests/test_clock.py",
        "tests/test_autopilot.py",
        "tests/test_vacations.py",
        "tests/test_seats_dropped.py",
    ],
    "pbem/records/agreement.py": [
        "tests/test_shell_recovery.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
        "tests/test_undo.py",
        "tests/test_deadlines.py",
        "tests/test_game_directory.py",
    ],
    "pbem/records/opening.py": [
        "tests/test_shell_recovery.py",
        "tests/test_processor.py",
        "tests/test_old_games.py",
        "tests/test_undo.py",
        "tests/test_deadlines.py",
        "tests/test_game_directory.py",
    ],
    "pbem/records/seat_changes.py": [
        "tests/test_records_readers.py",
        "tests/test_seats.py",
        "tests/test_seats_dropped.py",
    ],
    "pbem/records/away.py": [
        "tests/test_vacations.py",
        "tests/test_vacation_mail.py",
        "tests/test_deadlines.py",
    ],
    "pbem/records/published.py": ["tests/test_publish.py", "tests/test_undo.py"],
    "pbem/core/secrets.py": ["tests/test_seats.py", "tests/test_shell_processor.py"],
    "pbem/core/battle.py": [
        "tests/test_engine.py",
        "tests/test_dice.py",
        "tests/test_old_games.py",
        "tests/test_odds.py",
    ],
}
"""The test files run against each module's mutants: those that exercise it."""

VERSION_CHECK = "if sys.version_info >= (3, 11):"
TOMLI = "tomli and tomllib parse alike, and the test extra installs tomli on every version"
ARMIES = 'f"{armies.get(first.source, 0)} armies against {armies.get(first.target, 0)}."'
SKIPPED: list[tuple[str, str, tuple[str, ...], str]] = [
    (
        file,
        VERSION_CHECK,
        ("negated `if` condition", "`>=` -> `<`", "`>=` -> `>`", "11 -> 12", "11 -> 10")
        + ("3 -> 4", "3 -> 2"),
        TOMLI,
    )
    for file in ("pbem/records/root.py", "pbem/records/settings.py")
]
SKIPPED += [
    (
        "pbem/records/settings.py",
        VERSION_CHECK + "  # imported here: a game's own settings need no parser",
        ("negated `if` condition", "`>=` -> `<`", "`>=` -> `>`", "11 -> 12", "11 -> 10")
        + ("3 -> 4", "3 -> 2"),
        TOMLI,
    )
]
SKIPPED += [
    (
        "pbem/records/disk.py",
        "fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)",
        ("384 -> 385", "384 -> 383"),
        "the lock file's mode bits change nothing pbem does (only flock on it counts)",
    ),
    (
        "pbem/records/disk.py",
        "if len(written) > 1:",
        ("`>` -> `>=`", "`>` -> `<=`", "1 -> 0", "1 -> 2"),
        "files synced by a pool of threads or one by one: the same syncs, before any rename",
    ),
    (
        "pbem/records/disk.py",
        '_SYNCING = (os.getpid(), ThreadPoolExecutor(8, thread_name_prefix="pbem-sync"))',
        ("8 -> 7", "8 -> 9"),
        "how many threads sync the files: the same syncs, before any rename",
    ),
    (
        "pbem/present/svgmap.py",
        "range(1, len(words)),",
        ("1 -> 0",),
        "splitting a name before its first word is never the evenest split (the one taken)",
    ),
    (
        "pbem/present/report.py",
        "if kind is int or (kind is markup and value.isprintable()):",
        ("`or` -> `and`",),
        "the shortcut's values go the long way (`_printable_value`) to the same result",
    ),
    (
        "pbem/present/report.py",
        "@functools.lru_cache(maxsize=32)",
        ("32 -> 33", "32 -> 31"),
        "the size of the template cache changes no output",
    ),
    (
        "pbem/game/processor.py",
        '"player": record.players[0] if len(record.players) == 1 else None,',
        ("0 -> -1",),
        "with one player in the list, the first is the last",
    ),
    (
        "pbem/mail/send.py",
        "password: Callable[[], str | None] = field(default=lambda: None, compare=False)",
        ("False -> True",),
        "no code compares two servers",
    ),
    (
        "pbem/mail/send.py",
        "changed = False",
        ("False -> True",),
        "a waiting message whose addresses are those in force already is only written again as "
        "the same bytes: pbem writes its messages with the policy stamp writes them with, and "
        "one read back and written again gives the bytes it was read from",
    ),
    (
        "pbem/records/store.py",
        'return {**data, "format": 2, "options": options}',
        ("2 -> 3", "2 -> 1"),
        "the format number of migrated data is not read again (read_game goes on from the data)",
    ),
    (
        "pbem/game/processor.py",
        'lines.append(f"Reports: {outcome.reports[0].parent}")',
        ("0 -> 1", "0 -> -1"),
        "every report of a resolution is written in the same folder",
    ),
    (
        "pbem/cli/turn.py",
        'echo(f"Reports to send: {outcome.reports[0].parent}")',
        ("0 -> -1",),
        "every report of a new game is written in the same folder",
    ),
    (
        "pbem/cli/__init__.py",
        "raise KeyError(name)",
        ("removed `raise KeyError(name)` in def __getitem__",),
        "the lookup of the lazy commands just after raises the same KeyError(name) (the one of "
        "__delitem__, whose line reads the same, is not equivalent and is run)",
    ),
    (
        "pbem/cli/__init__.py",
        "self._lazy.pop(name, None)",
        ("removed call `self._lazy.pop(name, None)` in def __setitem__",),
        "a command set over a lazy one is found, listed and counted by its loaded entry first, "
        "and del takes both away (the pop of __delitem__ is not equivalent and is run)",
    ),
    (
        "pbem/game/processor.py",
        "doubled.append(with_duplicates(mine)[0].problems[0].message)",
        ("0 -> -1", "0 -> 1 in `with_duplicates(mine)[0]`"),
        "with_duplicates gives each of a player's valid files (two or more here) the one same "
        "problem, naming them all: the second's and the last's are the first's, and its only "
        "problem is its last (problems[1] would fail)",
    ),
    (
        "pbem/game/processor.py",
        "used.append(mine[0])",
        ("0 -> -1",),
        "a player's files are used only when there is exactly one: first and last agree",
    ),
    (
        "pbem/mail/fetch.py",
        "assert letter.date is not None and letter.orders is not None",
        ("`and` -> `or`",),
        "an assertion that holds either way: accept() is only reached with both",
    ),
    (
        "pbem/mail/message.py",
        r'return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"',
        ("`<` -> `<=`", "256 -> 257"),
        "no character from U+0100 to U+0101 is a control character that is escaped",
    ),
    (
        "pbem/mail/message.py",
        'return None, f"its From header is not one readable address: {values[0][:200]}"',
        ("0 -> -1",),
        "there is exactly one From header here (more were refused above): first and last agree",
    ),
    (
        "pbem/mail/message.py",
        'bare = _COMMENT.sub("", _QUOTED.sub("", values[0]))',
        ("0 -> -1",),
        "there is exactly one From header here (more were refused above): first and last agree",
    ),
    (
        "pbem/mail/message.py",
        "def read_head(raw: bytes, cut: bool = False) -> Letter:",
        ("False -> True",),
        "every caller (read_letter, the fetch, the root's routing) says whether the message was "
        "cut: the default is never used",
    ),
    (
        "pbem/mail/message.py",
        "end = 0",
        ("0 -> -1",),
        "it only differs for a message that begins with an empty line, which has no headers "
        "either way: the parser stops at that line, whatever follows it in the block",
    ),
    (
        "pbem/mail/message.py",
        'if raw.count(b"\\n--") + raw.count(b"\\r--") <= MAX_PARTS:',
        ("`<=` -> `<`",),
        "every part counted begins on one of the lines counted here: with exactly MAX_PARTS of "
        "them there are at most MAX_PARTS parts, and the count below finds none over",
    ),
    (
        "pbem/mail/message.py",
        'if len(pairs) != 1 or not _ADDRESS.match(pairs[0][1]) or bare.count("@") != 1 or "," '
        "in bare:",
        ("0 -> -1",),
        "the address is looked at only when there is exactly one: first and last agree",
    ),
    (
        "pbem/present/report.py",
        'return textwrap.wrap("; ".join(rolls), width=width, break_on_hyphens=False) if rolls '
        "else []",
        ("False -> True",),
        "rolls are written with digits, spaces and slashes only: there is no hyphen to break at",
    ),
    (
        "pbem/present/report.py",
        "i18n.language(code).number(1000)",
        ("1000 -> 1001", "1000 -> 999"),
        "any number loads the language's number format before the fork: the same warm-up",
    ),
    (
        "pbem/present/report.py",
        "lstrip_blocks=True,",
        ("True -> False",),
        "the built-in templates have no blanks before a block tag: their output is the same",
    ),
    (
        "pbem/present/report.py",
        "first = group[0]",
        ("0 -> -1",),
        "every placement of a group has the same player and reason (that is how it is grouped)",
    ),
    (
        "pbem/game/deadlines.py",
        "if game.schedule is None or resolution < 1:",
        ("`or` -> `and`", "1 -> 0"),
        "no caller asks for the deadline of resolution 0 (the setup, made by `pbem new`), and "
        "without a schedule there is no time to start from nor any recorded change: None either "
        "way",
    ),
    (
        "pbem/game/deadlines.py",
        "if TYPE_CHECKING:",
        ("negated `if` condition",),
        "the vacations module, imported for its type only, loads without this one: imported at "
        "run time as well, it changes nothing but when it is loaded",
    ),
    (
        "pbem/game/deadlines.py",
        "if resolution != game.state.resolution and resolution < history_count(directory):",
        ("`and` -> `or`",),
        "a history file of the pending resolution (an interrupted resolution, an undo under way) "
        "records as its players the pending state's `awaiting()`, which it was written from "
        "(processor.resolve_game); no caller asks for a resolution past the history but the "
        "pending one",
    ),
    (
        "pbem/game/deadlines.py",
        'if schedule is None or schedule.vacation_mode != "autopilot" or deadline is None:',
        ("`or` -> `and`",),
        "the autopilot plays only in a game with a schedule and a known deadline (missed_orders "
        "says why not otherwise), and in a game that waits for players away no awaited player "
        "is away at the deadline: it is moved past their vacations (`waiting`)",
    ),
    (
        "pbem/cli/turn.py",
        "if game.deadline is not None and game.schedule is not None:",
        ("`and` -> `or`",),
        "a new game has both a schedule and its first deadline, or neither",
    ),
    (
        "pbem/records/disk.py",
        "continue",
        ("removed `continue` in def _temporary",),
        "the `continue` is the last statement of the loop's body (the handler of a name already "
        "taken): without it the loop goes on the same",
    ),
    (
        "pbem/game/undo.py",
        "(directory / HISTORY / PENDING).unlink(missing_ok=True)",
        ("True -> False",),
        "history/undo.toml is there whenever an undo is carried out: it is written first, or it "
        "is what says an undo was interrupted",
    ),
    (
        "pbem/records/settings.py",
        "@dataclass(frozen=True)",
        ("True -> False",),
        "no code changes or hashes a Server or Settings once made",
    ),
    (
        "pbem/records/settings.py",
        "return len(found) == 1 and bool(EMAIL.match(found[0][1]))",
        ("0 -> -1",),
        "with exactly one address found, the first is the last",
    ),
    (
        "pbem/club/batch.py",
        "mail_failed: bool = False",
        ("False -> True",),
        "the one maker of a RunSummary, run_root, always says whether the mail failed",
    ),
    (
        "pbem/club/batch.py",
        "if jobs <= 1 or len(tasks) <= 1:",
        ("`or` -> `and`",),
        "with one job or one game the pool has one worker, which runs the games one after "
        "another as the loop does: the same results in the same order, only in another process",
    ),
    (
        "pbem/club/batch.py",
        "return show(pool.imap_unordered(_run_one, tasks, chunksize=1))",
        ("1 -> 2",),
        "how many games a worker takes at a time changes when they run, not what they give",
    ),
    (
        "pbem/club/batch.py",
        "@dataclass(frozen=True)",
        ("True -> False",),
        "no code changes or hashes a GameRun, RunSummary or MailRun once made",
    ),
    (
        "pbem/mail/inbox.py",
        'digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]',
        ("16 -> 17", "16 -> 15"),
        "the name of a kept message is made in this one place and reported as made: nothing "
        "reads it back by its length",
    ),
    (
        "pbem/game/audit.py",
        'whose = f"turn {record.turn}, {record.players[0]}\'s turn"',
        ("0 -> -1",),
        "with one player in the list, the first is the last",
    ),
    (
        "pbem/game/audit.py",
        "for pa, pb in zip(a[key], b[key], strict=True):",
        ("True -> False",),
        "the two lists of players are zipped only when they are as long (tested just before)",
    ),
    (
        "pbem/game/players.py",
        "@dataclass(frozen=True)",
        ("True -> False",),
        "no code changes, hashes or compares by identity an AddressChange once made",
    ),
    (
        "pbem/records/clock.py",
        "@dataclass(frozen=True)",
        ("True -> False",),
        "no code changes or hashes a Schedule once made (the game file compares them by value)",
    ),
    (
        "pbem/records/root.py",
        "@dataclass(frozen=True)",
        ("True -> False",),
        "no code changes or hashes a Root once made",
    ),
    (
        "pbem/records/root.py",
        "continue",
        ("removed `continue` in def _temporary",),
        "the subfolders of a game were just cleared: what follows sorts an empty list",
    ),
]
ONE_BOARD = (
    "every continent's name lands on the same spot of the classic map, and that is the only board "
    "pbem has (load_board knows no other): the spots are pinned by a test"
)
LABEL_CLEAR = "if not (half <= x <= board.width - half and 14 <= y <= board.height - 4):"
SKIPPED += [
    (
        "pbem/mail/send.py",
        line,
        ("`.startswith` -> `.endswith`",),
        "the records of an undone resolution's first reports are never asked for again: the "
        "resolution made in its place is another attempt, whose reports are recorded under "
        "keys of their own (`reports.remade`); taking the old records away only tidies",
    )
    for line in (
        'keep = [k for k in sent["reports"] if not str(k).startswith(mine)]',
        'skipped = [k for k in sent.get("skipped", []) if not str(k).startswith(mine)]',
    )
] + [
    (
        "pbem/mail/send.py",
        'if keep != sent["reports"] or skipped != sent.get("skipped", []):',
        ("`!=` -> `==`",),
        "whether those records of an undone resolution's first reports are taken away changes "
        "nothing mailed (the skip just above)",
    )
]
SKIPPED += [
    (
        "pbem/mail/send.py",
        line,
        ("0 -> -1", "0 -> 1"),
        "the middle of the key orders only the answers among themselves: every other message "
        "of the same first number has the same middle, whatever it is",
    )
    for line in ("return (1, 0, path.name)", "return (2, 0, path.name)")
]
SKIPPED += [
    ("pbem/present/report.py", LABEL_CLEAR, changes, ONE_BOARD)
    for changes in [
        ("`<=` -> `<`", "`-` -> `+`", "`and` -> `or`", "14 -> 15", "14 -> 13", "4 -> 5", "4 -> 3")
    ]
] + [
    (
        "pbem/present/report.py",
        "return next((c for c in candidates if clearance(c) >= 20), "
        "max(candidates, key=clearance))",
        ("`max` -> `min`", "`>=` -> `>`", "20 -> 21", "20 -> 19"),
        ONE_BOARD,
    ),
    (
        "pbem/present/report.py",
        "(t.position[0], t.position[1] + TERRITORY_RADIUS + 14) "
        "for t in board.territories.values()",
        ("14 -> 15", "14 -> 13", "`+` -> `-`"),
        ONE_BOARD,
    ),
    ("pbem/present/report.py", "dy = other[1] - spot[1] + 4", ("4 -> 5", "4 -> 3"), ONE_BOARD),
    (
        "pbem/present/report.py",
        "return min(near, min((distance(spot, o) - 25 for o in others), default=near))",
        ("25 -> 26", "25 -> 24"),
        ONE_BOARD,
    ),
    (
        "pbem/present/report.py",
        "near = min(distance(spot, o) for o in names + list(points))",
        ("`min` -> `max`",),
        ONE_BOARD,
    ),
    (
        "pbem/present/report.py",
        "(min(xs) - pad - half, cy),",
        ("`-` -> `+`", "`min` -> `max`"),
        ONE_BOARD,
    ),
    (
        "pbem/present/report.py",
        "(max(xs) + pad + half, cy),",
        ("`+` -> `-`", "`max` -> `min`"),
        ONE_BOARD,
    ),
]
EVERY_TERRITORY = (
    "the armies of a story hold every territory (from armies_before): the default of .get() "
    "is never used"
)
SKIPPED += [
    ("pbem/present/report.py", line, ("0 -> 1", "0 -> -1"), EVERY_TERRITORY)
    for line in (
        ARMIES,
        "armies[e.territory] = armies.get(e.territory, 0) - e.armies",
        "armies[e.source] = armies.get(e.source, 0) + e.attacker_losses",
        "armies[e.target] = armies.get(e.target, 0) + e.defender_losses",
        "armies[e.source] = armies.get(e.source, 0) + e.moved",
        "armies[e.source] = armies.get(e.source, 0) + e.armies",
        "armies[e.target] = armies.get(e.target, 0) - e.armies",
        "armies[event.territory] = armies.get(event.territory, 0) + event.armies",
        "armies[event.source] = armies.get(event.source, 0) - event.attacker_losses",
        "armies[event.target] = armies.get(event.target, 0) - event.defender_losses",
        "armies[event.source] = armies.get(event.source, 0) - event.moved",
        "armies[event.source] = armies.get(event.source, 0) - event.armies",
        "armies[event.target] = armies.get(event.target, 0) + event.armies",
        "armies.get(e.source, 0),",
        "armies.get(e.target, 0),",
        "left = armies.get(end.source, 0)",
        'f"with {armies.get(end.target, 0)}."',
        "note = rules.attack_dice_note(armies.get(first.source, 0), dice)",
    )
]
SKIPPED += [
    (
        "pbem/core/rules.py",
        "rolled = min(rolled, armies - max(1, stop_at))",
        ("1 -> 0 in `max(1, stop_at)`",),
        "an order's stop_at is 1 at least (an order file cannot give less), so max(0, stop_at) "
        "is stop_at as max(1, stop_at) is",
    ),
    (
        "pbem/core/validation.py",
        "def __call__(self, message: str | Problem, line: int | None = None, /) -> None: ...",
        ("`__call__` returns at once",),
        "the method of a Protocol, a type for the checker: its body is never run",
    ),
    (
        "pbem/core/validation.py",
        "placed[place.territory] = placed.get(place.territory, 0) + int(place.armies)",
        ("0 -> 1 in `placed.get(place.territory, 0)`",),
        "`placed` only serves to check that an attack's source will hold 2 armies, and a "
        "placement puts 1 at least on a territory holding 1 at least: 2 or more either way",
    ),
    (
        "pbem/core/validation.py",
        "if fixed > armies:",
        ("`>` -> `>=`",),
        "only reached when the placements do not add up (`fixed != armies`): then `>=` is `>`",
    ),
    (
        "pbem/core/rules.py",
        "return 0, 0",
        ("0 -> 1", "0 -> -1"),
        "no roll has an empty side: the battle loop rolls while the attacker has more than its "
        "stop and the target an army (one die each at least), and the exact odds refuse 0 dice",
    ),
    (
        "pbem/core/rules.py",
        "for step in range(1, n + 1):",
        ("1 -> 0 in `n + 1`",),
        "the last step comes back to `seat` itself, which is what the function gives when no "
        "other seat is alive: stopping one step sooner returns the same seat",
    ),
    (
        "pbem/core/validation.py",
        "placed[where] = placed.get(where, 0) + spare",
        ("0 -> 1",),
        '`where` is the last placement\'s territory, and without "rest" every placement has '
        "already put its territory in `placed`: the default is never used",
    ),
]
SKIPPED += [
    (
        "pbem/core/dice.py",
        "self._next_block((count - have) // 32 + 1)",
        ("`-` -> `+`",),
        "more blocks read ahead than needed: the same dice, in the same order",
    ),
    (
        "pbem/core/dice.py",
        "if blocks == 1:",
        ("1 -> 0", "1 -> 2"),
        "one block is read alone as a shortcut; joined with the others it is the same bytes",
    ),
    (
        "pbem/present/verify.py",
        "return m.group(1) if m else None",
        ("1 -> 0",),
        "the whole line is the key and its spaces, and a key is stripped before it is read",
    ),
    (
        "pbem/present/verify.py",
        "@dataclass(frozen=True)",
        ("True -> False",),
        "no code changes a record, a verdict or the arguments once made, nor hashes them",
    ),
    (
        "pbem/present/verify.py",
        "return (numbers[0] if numbers else None), m.groups()[-1]",
        ("0 -> -1",),
        "a heading of the dice check holds at most one number: the first is the last",
    ),
    (
        "pbem/mail/ahead.py",
        "size: int = 0",
        ("0 -> -1", "0 -> 1"),
        "set for every message handed to the helper; for the others it only moves the count of "
        "bytes ahead by one a message, against a bound of 16 MiB",
    ),
    (
        "pbem/mail/ahead.py",
        "if self.process is None or self.process.stdin is None:",
        ("`or` -> `and`",),
        "asked only of a helper that is ready, started with both pipes: neither is ever None",
    ),
    (
        "pbem/mail/ahead.py",
        "if self.process is None or self.process.stdout is None:",
        ("`or` -> `and`",),
        "asked only of a helper that is running, started with both pipes: neither is ever None",
    ),
    (
        "pbem/mail/ahead.py",
        "chunk = os.read(fd, 1 << 20)",
        ("20 -> 19", "20 -> 21", "1 -> 2"),
        "how much of the pipe is read at a time: the frames are put together the same",
    ),
    (
        "pbem/mail/ahead.py",
        "written = os.write(fd, view[: 1 << 16])",
        ("16 -> 15", "16 -> 17", "1 -> 2"),
        "how much is written to the pipe at a time: the rest follows in the same order",
    ),
    (
        "pbem/mail/ahead.py",
        "self.failed, self.ready = True, False",
        ("False -> True",),
        "a stopped helper has no process: every use of it (ready or not) finds that and stops",
    ),
]
"""Equivalent mutants, that cannot change what pbem does: (file, the line as written, changes,
why). They are listed, not run. A change may name the expression it is made in (`"0 -> 1 in
`x[0]`"`), where the same change elsewhere on the line is not equivalent."""
SKIP = {(file, line, change): why for file, line, changes, why in SKIPPED for change in changes}


COMPARISONS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
SYMBOLS: dict[type[ast.AST], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.And: "and",
    ast.Or: "or",
    ast.Add: "+",
    ast.Sub: "-",
}
NAMES = {"any": "all", "all": "any", "min": "max", "max": "min"}
ATTRIBUTES = {"LOCK_EX": "LOCK_SH", "lower": "upper", "startswith": "endswith"}


@dataclass(frozen=True)
class Mutant:
    file: str
    index: int
    """The node's position in `ast.walk` order of the parsed module."""
    kind: str
    variant: int
    line: int
    source: str
    """The mutated line as `ast.unparse` writes it (the skip list's key)."""
    change: str
    within: str = ""
    """The expression the changed node is part of (for a skip that names it)."""
    function: str = ""
    """The function the changed node is in (for a skip of a line whose text comes again in
    another function, where the same change is not equivalent)."""

    def label(self) -> str:
        return f"{self.file}:{self.line}: {self.change}  [{self.source}]"


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """Nodes inside annotations (never evaluated under `from __future__ import annotations`)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        for name in ("annotation", "returns"):
            sub = getattr(node, name, None)
            if isinstance(sub, ast.AST):
                out |= {id(n) for n in ast.walk(sub)}
    return out


def _line_text(lines: list[str], node: ast.AST) -> str:
    return lines[node.lineno - 1].strip() if hasattr(node, "lineno") else ""


def _returns_value(func: ast.FunctionDef) -> bool:
    for node in ast.walk(func):
        if node is not func and isinstance(node, (ast.FunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
    return False


def _short(node: ast.AST, width: int = 50) -> str:
    text = ast.unparse(node)
    return text if len(text) <= width else text[: width - 3] + "..."


def _changes(node: ast.AST, parent: ast.AST | None) -> Iterator[tuple[str, int, str]]:
    """(kind, variant, description) for every mutation of this node."""
    if isinstance(node, ast.Compare):
        for k, op in enumerate(node.ops):
            for v, new in enumerate(COMPARISONS.get(type(op), ())):
                yield f"cmp{k}", v, f"`{SYMBOLS[type(op)]}` -> `{SYMBOLS[new]}`"
    elif isinstance(node, ast.BoolOp):
        other = "or" if isinstance(node.op, ast.And) else "and"
        yield "bool", 0, f"`{SYMBOLS[type(node.op)]}` -> `{other}`"
    elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        other = "-" if isinstance(node.op, ast.Add) else "+"
        yield "binop", 0, f"`{SYMBOLS[type(node.op)]}` -> `{other}`"
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "bool-const", 0, f"{node.value} -> {not node.value}"
    elif isinstance(node, ast.Constant) and isinstance(node.value, int):
        yield "int", 0, f"{node.value} -> {node.value + 1}"
        yield "int", 1, f"{node.value} -> {node.value - 1}"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not", 0, "removed `not`"
    elif isinstance(node, ast.If):
        yield "if", 0, "negated `if` condition"
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        yield "drop", 0, f"removed call `{_short(node.value)}`"
    elif isinstance(node, (ast.Raise, ast.Break, ast.Continue)):
        yield "drop", 0, f"removed `{_short(node)}`"
    elif isinstance(node, ast.FunctionDef) and not _returns_value(node):
        yield "return", 0, f"`{node.name}` returns at once"
    elif isinstance(node, ast.Name) and node.id in NAMES and isinstance(parent, ast.Call):
        yield "name", 0, f"`{node.id}` -> `{NAMES[node.id]}`"
    elif isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES:
        yield "attr", 0, f"`.{node.attr}` -> `.{ATTRIBUTES[node.attr]}`"


def mutants(file: str) -> list[Mutant]:
    text = (ROOT / file).read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines()
    parents = _parents(tree)
    annotations = _annotation_nodes(tree)
    out: list[Mutant] = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in annotations or "pragma: no cover" in _line_text(lines, node):
            continue
        parent = parents.get(id(node))
        if isinstance(node, ast.Constant) and isinstance(parent, ast.Expr):
            continue  # a docstring
        for kind, variant, change in _changes(node, parent):
            line = getattr(node, "lineno", 0)
            source = _line_text(lines, node)
            within = _short(parent, 200) if isinstance(parent, ast.expr) else ""
            function = _function_of(parents, node)
            out.append(Mutant(file, index, kind, variant, line, source, change, within, function))
    return out


def _function_of(parents: dict[int, ast.AST], node: ast.AST) -> str:
    """The name of the innermost function `node` is in ("" at module level)."""
    parent = parents.get(id(node))
    while parent is not None:
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return parent.name
        parent = parents.get(id(parent))
    return ""


def _replace(parents: dict[int, ast.AST], node: ast.AST, new: ast.AST) -> None:
    parent = parents[id(node)]
    for field, value in ast.iter_fields(parent):
        if value is node:
            setattr(parent, field, new)
            return
        if isinstance(value, list) and any(v is node for v in value):
            value[[i for i, v in enumerate(value) if v is node][0]] = new
            return
    raise AssertionError("node not found in its parent")


def apply(mutant: Mutant, text: str) -> str:
    """The module's source with the mutant planted."""
    tree = ast.parse(text)
    parents = _parents(tree)
    node = list(ast.walk(tree))[mutant.index]
    kind = mutant.kind
    if kind.startswith("cmp"):
        assert isinstance(node, ast.Compare)
        k = int(kind[3:])
        node.ops[k] = COMPARISONS[type(node.ops[k])][mutant.variant]()
    elif kind == "bool":
        assert isinstance(node, ast.BoolOp)
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "binop":
        assert isinstance(node, ast.BinOp)
        node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
    elif kind == "bool-const":
        assert isinstance(node, ast.Constant)
        node.value = not node.value
    elif kind == "int":
        assert isinstance(node, ast.Constant) and isinstance(node.value, int)
        node.value = node.value + (1 if mutant.variant == 0 else -1)
    elif kind == "not":
        assert isinstance(node, ast.UnaryOp)
        _replace(parents, node, node.operand)
    elif kind == "if":
        assert isinstance(node, ast.If)
        node.test = ast.UnaryOp(ast.Not(), node.test)
    elif kind == "drop":
        _replace(parents, node, ast.Pass())
    elif kind == "return":
        assert isinstance(node, ast.FunctionDef)
        body = node.body
        start = (
            1
            if body
            and isinstance(body[0], ast.Expr)
            and isinstance(getattr(body[0], "value", None), ast.Constant)
            else 0
        )
        body.insert(start, ast.Return(None))
    elif kind == "name":
        assert isinstance(node, ast.Name)
        node.id = NAMES[node.id]
    elif kind == "attr":
        assert isinstance(node, ast.Attribute)
        node.attr = ATTRIBUTES[node.attr]
    else:
        raise AssertionError(kind)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _skip_reason(mutant: Mutant) -> str | None:
    for (file, line, change), reason in SKIP.items():
        if (file, line) != (mutant.file, mutant.source):
            continue
        named = (
            mutant.change,
            f"{mutant.change} in `{mutant.within}`",
            f"{mutant.change} in def {mutant.function}",
        )
        if change in named:
            return reason
    return None


def _scratch() -> Path:
    """A copy of the project (sources, tests, templates, games) to plant mutants in."""
    target = Path(tempfile.mkdtemp(prefix="pbem-mutation-"))
    ignore = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.pyc", ".pytest_cache")
    for name in ("pbem", "tests", "templates", "games", "docs", "pyproject.toml", "README.md"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        elif source.exists():
            shutil.copy2(source, target / name)
    return target


def _run_tests(scratch: Path, tests: list[str], timeout: float) -> tuple[bool, float]:
    """Whether the tests pass in the scratch copy, and how long they took."""
    env = dict(os.environ, PYTHONPATH=str(scratch), PYTHONDONTWRITEBYTECODE="1")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        f"--timeout={int(timeout)}",
        *[t for t in tests if (scratch / t).exists()],
    ]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=scratch,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout + 30,
        )
    except subprocess.TimeoutExpired:
        return False, time.perf_counter() - started
    return done.returncode == 0, time.perf_counter() - started


@dataclass
class FileResult:
    file: str
    run: int = 0
    caught: int = 0
    missed: list[Mutant] | None = None
    skipped: list[tuple[Mutant, str]] | None = None
    total: int = 0


def drawn(file: str, every: list[Mutant], sample: int | None, seed: int) -> list[Mutant]:
    """The mutants of `file` a trial runs: `sample` of them drawn with `seed` (every one when
    None), in the order of the source."""
    return sorted(
        random.Random(f"{seed}/{file}").sample(every, sample)
        if sample is not None and sample < len(every)
        else every,
        key=lambda m: (m.line, m.index, m.variant),
    )


def trial(
    file: str,
    sample: int | None,
    seed: int,
    timeout: float | None,
    lines: frozenset[int] = frozenset(),
) -> FileResult:
    text = (ROOT / file).read_text(encoding="utf-8")
    every = mutants(file)
    chosen = drawn(file, every, sample, seed)
    if lines:  # only the sample's mutants on these lines (to try again the ones missed)
        chosen = [m for m in chosen if m.line in lines]
    result = FileResult(file, missed=[], skipped=[], total=len(every))
    tests = TESTS[file]
    scratch = _scratch()
    try:
        ok, baseline = _run_tests(scratch, tests, timeout or 600)
        if not ok:
            raise SystemExit(f"{file}: the tests fail without any mutant; fix them first")
        limit = timeout or max(60.0, 3 * baseline)
        target = scratch / file
        for number, mutant in enumerate(chosen, 1):
            reason = _skip_reason(mutant)
            if reason is not None:
                assert result.skipped is not None
                result.skipped.append((mutant, reason))
                continue
            target.write_text(apply(mutant, text), encoding="utf-8")
            passed, _ = _run_tests(scratch, tests, limit)
            target.write_text(text, encoding="utf-8")
            result.run += 1
            if passed:
                assert result.missed is not None
                result.missed.append(mutant)
            else:
                result.caught += 1
            verdict = "missed" if passed else "caught"
            print(f"  [{number}/{len(chosen)}] {verdict} {mutant.label()}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="modules to mutate (default: every one mapped)")
    parser.add_argument("--sample", type=int, help="run N mutants per file, chosen at random")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--timeout", type=float, help="seconds per mutant's test run")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument(
        "--line",
        type=int,
        action="append",
        default=[],
        help="run only the (sampled) mutants on this line; may be repeated",
    )
    args = parser.parse_args()
    files = args.files or list(TESTS)
    for file in files:
        if file not in TESTS:
            raise SystemExit(f"no tests are mapped for {file}: add it to TESTS in {__file__}")
    if args.list:  # with --sample: the mutants a trial with the same --seed runs
        for file in files:
            for mutant in drawn(file, mutants(file), args.sample, args.seed):
                reason = _skip_reason(mutant)
                print(mutant.label() + (f"  (skipped: {reason})" if reason else ""))
        return
    results = []
    for file in files:
        print(f"{file}: {len(mutants(file))} mutants", flush=True)
        results.append(trial(file, args.sample, args.seed, args.timeout, frozenset(args.line)))
    sample = f", a sample of {args.sample} per file, seed {args.seed}" if args.sample else ""
    print(f"\nmutation trial{sample}:")
    print(f"{'file':<28} {'mutants':>7} {'run':>5} {'caught':>6} {'missed':>6} {'caught %':>8}")
    for r in results:
        assert r.missed is not None and r.skipped is not None
        share = f"{100 * r.caught / r.run:.0f}%" if r.run else "-"
        print(f"{r.file:<28} {r.total:>7} {r.run:>5} {r.caught:>6} {len(r.missed):>6} {share:>8}")
    for r in results:
        assert r.missed is not None and r.skipped is not None
        for mutant in r.missed:
            print(f"missed:  {mutant.label()}")
        for mutant, reason in r.skipped:
            print(f"skipped: {mutant.label()} (equivalent: {reason})")


if __name__ == "__main__":
    main()
