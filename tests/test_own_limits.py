"""A game's own templates and catalogues are rendered within limits: a runaway template (a loop
of 10^10 steps, a macro that calls itself twice, a huge power, repeat or format width) and a
damaged or hostile catalogue (a huge format width, a placeholder its sentence does not give, a
plural rule that divides by zero, a truncated file, an unknown charset, a FIFO) each end the
resolution within a second with a sentence naming the file; nothing is written, and the other
games of a root are resolved."""

from __future__ import annotations

import array
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import games_of_a_root, snapshot, write_skeletons
from test_mail import run

from pbem.game import processor
from pbem.languages import own_catalogue
from pbem.languages.i18n import LANGUAGES, builtin_catalogue
from pbem.present import own_templates

CHILD = """
import sys, time
from pathlib import Path
from pbem.errors import PbemError
from pbem.game import processor
start, cpu = time.monotonic(), time.process_time()
try:
    processor.resolve_game(Path(sys.argv[1]))
    print("resolved")
except PbemError as err:
    print(err)
print(f"took {time.process_time() - cpu:.3f} {time.monotonic() - start:.3f}")
"""
"""Resolve a game in a child process and say how long it took (the test's timeout ends a
child that hangs, so a regression fails instead of stopping the suite)."""


def resolve_in_child(directory: Path) -> tuple[str, float]:
    """What resolving `directory` said, and the processor time it took: under 1 second for
    every case, however busy the machine (the time on the clock is asserted more loosely)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(directory)], capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    *lines, took = done.stdout.strip().splitlines()
    cpu, wall = (float(n) for n in took.split()[1:])
    assert wall < 10, wall
    return "\n".join(lines), cpu


RUNAWAY_TEMPLATES = {
    "a loop of 10^10 steps": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
        "more than 100,000 steps",
    ),
    "a macro calling itself twice": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
        "{{ f(40) }}\n",
        "more than 100,000 steps",
    ),
    "a huge power": ("{{ 10 ** 100000000 }}\n", "is too large a number"),
    "a huge repeat": ("{{ 'x' * 10 ** 9 }}\n", "items is too long"),
    "a huge format width": ("{{ '%999999999s' % 'x' }}\n", "items is too long"),
    "a huge width to a filter": ("{{ 'x'|center(999999999) }}\n", "center was given 999,999,999"),
    "a huge count to a filter": ("{{ [1]|slice(999999999)|list }}\n", "slice was given"),
    "a huge lipsum": ("{{ lipsum(999999999) }}\n", "lipsum was given"),
    "a huge pad": ("{{ 'x'|pad(999999999) }}\n", "pad was given"),
    "a huge width to |format": ("{{ '%999999999s'|format('x') }}\n", "items is too long"),
    "a text doubled forty times": (
        "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}{{ ns.s|length }}\n",
        "more than 256 MiB of memory",
    ),
    "a huge width given to %": ("{{ '%*s' % (999999999, 'x') }}\n", "items is too long"),
    "a huge width to .format": ("{{ '{:>999999999}'.format('x') }}\n", "too wide a field"),
    "a huge width given to .format": ("{{ '{:{}}'.format('x', 999999999) }}\n", "too wide a"),
}


@pytest.mark.parametrize("case", sorted(RUNAWAY_TEMPLATES))
def test_a_runaway_template_of_a_game_is_stopped_within_a_second(
    playing_dir: Path, case: str
) -> None:
    source, reason = RUNAWAY_TEMPLATES[case]
    (playing_dir / "templates").mkdir()
    (playing_dir / "templates" / "report.txt.j2").write_text(source)
    write_skeletons(playing_dir)
    before = snapshot(playing_dir)
    said, took = resolve_in_child(playing_dir)
    assert f"template {playing_dir / 'templates' / 'report.txt.j2'} line 1: " in said, said
    assert reason in said and "fix the template and run the command again" in said, said
    assert took < 1, took
    assert snapshot(playing_dir) == before


def test_a_template_within_the_limits_renders(playing_dir: Path) -> None:
    """The limits stop runaways only: loops, calls, powers and widths of a real report pass."""
    (playing_dir / "templates").mkdir()
    (playing_dir / "templates" / "report.txt.j2").write_text(
        "{% macro two(n) %}{{ n * 2 }}{% endmacro %}"
        "{% for i in range(300) %}{% for j in range(300) %}{% endfor %}{% endfor %}"
        "{{ two(21) }} {{ 2 ** 100 }} {{ '%-20s|' % 'x' }} {{ 'ab' * 3 }}"
        " {{ 'x'|center(5) }} {{ '{:>4}'.format(7) }} {{ 123456789|number }}\n"
    )
    write_skeletons(playing_dir)
    processor.resolve_game(playing_dir)
    text = (playing_dir / "reports").glob("0002-*/alice.txt")
    assert next(text).read_text() == f"42 {2**100} {'x':<20}| ababab   x      7 123,456,789\n"


def test_the_limits_are_those_documented() -> None:
    docs = Path(__file__).parent.parent / "docs"
    templates = " ".join((docs / "game-directory.md").read_text().split())
    assert f"at most {own_templates.STEPS:,} steps" in templates
    assert f"{own_templates.LONGEST:,} items" in templates
    assert f"no number over {own_templates.MAX_ARGUMENT:,}" in templates
    assert f"at most {own_templates.MEMORY // 1024**2} MiB more memory" in templates
    assert f"at most {own_templates.TEMPLATE_LIMIT // 1024} KiB" in templates
    languages = " ".join((docs / "languages.md").read_text().split())
    assert f"precision over {own_catalogue.WIDEST} " in languages
    assert f"larger than {own_catalogue.CATALOGUE_LIMIT // 1024 // 1024} MiB" in languages


# --- a game's own catalogue -------------------------------------------------------------------

HEADER = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"
ARMY = "%(num)s army\0%(num)s armies"


def mo_bytes(entries: dict[str, str], header: str = HEADER) -> bytes:
    """A GNU .mo file of `entries` (a plural's message and translations joined by NULs), as
    the standard library's msgfmt.py writes one."""
    messages = {k.encode(): v.encode() for k, v in sorted({"": header, **entries}.items())}
    ids = strs = b""
    places = []
    for key, value in messages.items():
        places.append((len(ids), len(key), len(strs), len(value)))
        ids += key + b"\0"
        strs += value + b"\0"
    keys_at = 7 * 4 + 16 * len(messages)
    offsets: list[int] = []
    for o1, l1, _, _ in places:
        offsets += [l1, o1 + keys_at]
    for _, _, o2, l2 in places:
        offsets += [l2, o2 + keys_at + len(ids)]
    head = struct.pack("Iiiiiii", 0x950412DE, 0, len(messages), 28, 28 + 8 * len(messages), 0, 0)
    return head + array.array("i", offsets).tobytes() + ids + strs


GOOD = mo_bytes({ARMY: "%(num)s soldier\0%(num)s soldiers"})

DAMAGED_CATALOGUES = {
    "a huge format width": (
        mo_bytes({ARMY: "%(num)999999999s soldier\0%(num)s soldiers"}),
        "a format width or precision over 100",
    ),
    "an unknown placeholder": (
        mo_bytes({ARMY: "%(cards)s soldier\0%(num)s soldiers"}),
        "%(cards) in '%(cards)s soldier', which its sentence does not give",
    ),
    "a number conversion": (
        mo_bytes({"%(player)s holds": "%(player)d holds"}),
        "the conversion %d",
    ),
    "plural=n/0": (
        mo_bytes({ARMY: "a\0b"}, HEADER.replace("(n != 1)", "n/0")),
        "its plural rule fails for 0 (ZeroDivisionError",
    ),
    "truncated": (GOOD[: len(GOOD) // 2], "is damaged"),
    "an unknown charset": (mo_bytes({}, HEADER.replace("UTF-8", "no-such-charset")), "damaged"),
    "a FIFO": (b"", "a named pipe (FIFO), not a regular file"),
}


def own_catalogue_of(directory: Path, case: str) -> Path:
    path = directory / "locale" / "en" / "LC_MESSAGES" / "pbem.mo"
    path.parent.mkdir(parents=True)
    if case == "a FIFO":
        os.mkfifo(path)
    else:
        path.write_bytes(DAMAGED_CATALOGUES[case][0])
    return path


@pytest.mark.parametrize("case", sorted(DAMAGED_CATALOGUES))
def test_a_damaged_catalogue_of_a_game_is_a_sentence_within_a_second(
    playing_dir: Path, case: str
) -> None:
    write_skeletons(playing_dir)
    path = own_catalogue_of(playing_dir, case)
    before = snapshot(playing_dir)
    said, took = resolve_in_child(playing_dir)
    assert str(path) in said and DAMAGED_CATALOGUES[case][1] in said, said
    assert took < 1, took
    assert snapshot(playing_dir) == before


def test_a_good_catalogue_of_a_game_is_used(playing_dir: Path) -> None:
    write_skeletons(playing_dir)
    path = playing_dir / "locale" / "en" / "LC_MESSAGES" / "pbem.mo"
    path.parent.mkdir(parents=True)
    path.write_bytes(GOOD)
    said, _ = resolve_in_child(playing_dir)
    assert said == "resolved"
    html = next((playing_dir / "reports").glob("0002-*/alice.html")).read_text()
    assert re.search(r"\d+ soldiers, ", html) and not re.search(r"\d+ armies, ", html)


@pytest.mark.parametrize("code", [c for c in LANGUAGES if c != "en"])
def test_pbems_own_catalogues_pass_the_checks_a_games_own_must(code: str) -> None:
    catalogue = builtin_catalogue(code)
    assert isinstance(catalogue, own_catalogue.gettext.GNUTranslations)
    assert own_catalogue.catalogue_problem(catalogue) is None


def test_a_damaged_catalogue_stops_its_game_alone_in_a_root(tmp_path: Path) -> None:
    damaged, fine = games_of_a_root(tmp_path / "root", "damaged", "fine")
    path = own_catalogue_of(damaged, "plural=n/0")
    out = run("run", tmp_path / "root", code=1)
    assert "Traceback" not in out and str(path) in out, out
    assert processor.history_count(fine) == 2 and processor.history_count(damaged) == 1


def test_conversions_are_read_as_python_formats_them() -> None:
    found = list(own_catalogue.conversions("%(a)-5.2f %% %s %(b)*d 100%"))
    assert found == [("a", 5, "f"), (None, 0, "%"), (None, 0, "s"), ("b", -1, "d")] + [
        (None, 0, "")
    ]
