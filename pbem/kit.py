"""The player's kit: one file, `pbem-player.pyz`, that runs with any Python 3.10 or newer and
nothing else installed, for a player to check their orders, work out odds and verify dice.

It is a standard zipapp (`python3 -m zipapp` format) holding pbem's own modules, tomli (the
TOML reader of Python 3.10; 3.11 has it as tomllib) and `main` below, a small front door with
argparse in place of click. The kit's commands import nothing of click, Jinja2 or tomli-w.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import io
import shutil
import sys
import tempfile
import zipapp
from collections.abc import Sequence
from pathlib import Path

from pbem import __version__
from pbem.errors import PbemError

LANGUAGES = ("en", "id", "sv", "it", "nl", "gu")
"""The languages the kit speaks (pbem.languages.i18n.LANGUAGES: the kit's argument parser is
made before anything else of pbem is loaded)."""

KIT_NAME = "pbem-player.pyz"
_ENTRY = "import sys\n\nfrom pbem.kit import main\n\nsys.exit(main())\n"
_LEFT_OUT = ("__pycache__", "*.pyc", "*.so", "cli", "templates")
"""What the kit does without: compiled files and the moderator's command line."""


class KitError(PbemError):
    """The kit cannot be built."""


def kit_bytes() -> bytes:
    """The kit, as the bytes of its file."""
    with tempfile.TemporaryDirectory(prefix="pbem-kit-") as tmp:
        staging = Path(tmp)
        package = Path(__file__).resolve().parent
        shutil.copytree(package, staging / "pbem", ignore=shutil.ignore_patterns(*_LEFT_OUT))
        _copy_tomli(staging)
        (staging / "__main__.py").write_text(_ENTRY, encoding="utf-8")
        out = io.BytesIO()
        zipapp.create_archive(staging, out, interpreter="/usr/bin/env python3", compressed=True)
        return out.getvalue()


def _copy_tomli(staging: Path) -> None:
    """tomli's pure-Python source and its licence (MIT), for Python 3.10."""
    spec = importlib.util.find_spec("tomli")
    if spec is None or spec.origin is None:
        raise KitError(
            "the kit needs tomli (the TOML reader for Python 3.10): pip install tomli, "
            "then run pbem kit again"
        )
    source = Path(spec.origin).parent
    target = staging / "tomli"
    target.mkdir()
    for path in source.glob("*.py"):
        shutil.copyfile(path, target / path.name)
    licence = next(
        (
            f
            for f in importlib.metadata.distribution("tomli").files or ()
            if f.name.upper().startswith("LICENSE")
        ),
        None,
    )
    if licence is not None:
        shutil.copyfile(Path(str(licence.locate())), target / "LICENSE")


def write_kit(directory: Path) -> Path:
    """Write the kit into `directory` (created if need be); its path."""
    from pbem.records.disk import atomic_write

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / KIT_NAME
    atomic_write(path, kit_bytes())
    path.chmod(0o755)
    return path


# The front door, run as `python3 pbem-player.pyz ...`: the same answers as pbem's commands.


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 pbem-player.pyz",
        description="A player's pbem: check orders against your report's view file, "
        "work out the odds of an attack, verify the dice of a report.",
        epilog="Example: python3 pbem-player.pyz check --view alice.view.json orders.toml",
    )
    parser.add_argument("--version", action="version", version=f"pbem {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="Check order files against the view.json of your latest report.",
        description="Check order files as the moderator will (but for the secret), "
        "with the exact odds of each attack. Exit code 0 when every file is valid.",
    )
    check.add_argument("--view", required=True, help="The view.json sent with your report.")
    check.add_argument("files", nargs="+", metavar="FILE", help="Order files to check.")
    odds = commands.add_parser("odds", help="Exact odds of an attack.")
    odds.add_argument("attackers", type=_positive, help="Armies in the attacking territory.")
    odds.add_argument("defenders", type=_positive, help="Armies defending.")
    odds.add_argument(
        "--stop-at",
        type=_positive,
        default=1,
        help="Stop attacking when the attackers are down to this many armies (default 1).",
    )
    odds.add_argument("--dice", type=int, choices=(1, 2, 3), help="Most dice the attacker rolls.")
    odds.add_argument(
        "--lang",
        default="en",
        choices=LANGUAGES,
        help="The language to answer in (that of your reports: en, id, sv, it, nl, gu).",
    )
    verify = commands.add_parser(
        "verify",
        help="Check a report's dice and key chain.",
        description="Check SHA-256(KEY) = PREVIOUS_KEY and every die, from a report "
        "(--report) or from the keys and rolls.",
    )
    verify.add_argument("key", nargs="?", help="The key of the resolution (64 hex digits).")
    verify.add_argument("previous_key", nargs="?", help="The previous key.")
    verify.add_argument(
        "--dice",
        dest="rolls",
        action="append",
        default=[],
        help='One roll, attacker/defender dice as rolled: "6 3 1/5 2". Repeat, in order.',
    )
    verify.add_argument("--report", help="A report's .view.json or .txt.")
    verify.add_argument(
        "--orders", help="With --report: the order file you sent, checked against the report."
    )
    verify.add_argument(
        "--digest",
        dest="digests",
        action="append",
        default=[],
        help="With KEY: an order file's digest, as the report lists them. Repeat, in order.",
    )
    verify.add_argument("--again", help="With --digest: the salt of a turn played again.")
    verify.add_argument(
        "--previous",
        help="With --report in a game with fog: the view file of the report before it.",
    )
    return parser


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return int(text)


def _check(args: argparse.Namespace) -> tuple[list[str], bool]:
    from pbem.game import checking

    results = checking.check_with_view(Path(args.view), [Path(f) for f in args.files])
    return checking.check_lines(results)


def _odds(args: argparse.Namespace) -> tuple[list[str], bool]:
    from pbem.languages.i18n import language, speaking
    from pbem.present.plan import odds_summary

    with speaking(language(args.lang)):
        return [odds_summary(args.attackers, args.defenders, args.stop_at, args.dice)], True


def _verify(args: argparse.Namespace) -> tuple[list[str], bool]:
    from pbem.present import verify

    report = Path(args.report) if args.report else None
    orders = Path(args.orders) if args.orders else None
    previous = Path(args.previous) if args.previous else None
    given = verify.Given(
        args.key,
        args.previous_key,
        tuple(args.rolls),
        report,
        orders,
        args.digests,
        args.again,
        previous,
    )
    return verify.verify_lines(given)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the kit's command line; the exit code (0 all good, 1 a problem, 2 a usage error)."""
    from pbem.terminal import printable

    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    run = {"check": _check, "odds": _odds, "verify": _verify}[args.command]
    try:
        lines, ok = run(args)
    except PbemError as err:
        from pbem.present.verify import ArgumentsError

        print(f"Error: {printable(str(err), lines=True)}", file=sys.stderr)
        return 2 if isinstance(err, ArgumentsError) else 1
    except OSError as err:
        print(f"Error: {printable(str(err))}", file=sys.stderr)
        return 1
    for line in lines:
        print(printable(line, lines=True))
    return 0 if ok else 1
