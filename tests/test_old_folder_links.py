"""A symbolic link inside an older resolution's folder (reports/NNNN-.../, orders/done/NNNN/):
the check every command makes looks inside the newest two alone (its cost does not grow with the
game), so each command that goes into an older one refuses the link on its way there, with the
sentence that names it, and nothing outside the game is read, written, removed or mailed.

Three links are planted in an older folder: a report file that is a link to a file outside the
game, one that is a link to the game file (the seed, every secret), and a link to a folder
outside, deep inside a folder of the report folder. "Nothing outside is read" is seen on the
disk: the files and folders outside are given an access time older than their change, which a
read or a listing moves (a file system mounted `noatime` moves none: then only their bytes and
the mail are compared)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
import tomli
from conftest import write_skeletons
from test_game_links import ADVICE, EVERY_COMMAND
from test_mail import GAME, PLAYERS, SEED, message, orders_for, run

from pbem import mail
from pbem.core.state import Options
from pbem.errors import GameFileError
from pbem.files import first_link
from pbem.game import processor
from pbem.records import history
from pbem.records.history import done_dir, new_report_dir, report_dir
from pbem.records.opening import read_game

SECRET = "the moderator's private key, outside every game\n"
KINDS = ["a file outside", "the game file", "a folder outside, deep inside"]

# --- the game and what is outside it ------------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game with mail whose reports were mailed after the deal and not since: three
    resolutions on, reports/ holds 0000-deal and 0001-setup-turn, older than the newest two
    (0002-turn-1, 0003-turn-2), and the mail of 0001 on is still to be built."""
    directory = tmp_path_factory.mktemp("old") / GAME
    processor.new_game(directory, PLAYERS, Options(), seed=SEED, name=GAME)
    mail.send_mail(directory)  # (the deal's reports, into outbox/: its mail has begun)
    for _ in range(3):
        write_skeletons(directory)
        processor.resolve_game(directory)
    return directory


@pytest.fixture
def game(template: Path, tmp_path: Path) -> Path:
    directory = Path(shutil.copytree(template, tmp_path / GAME, symlinks=True))
    assert sorted(p.name for p in (directory / "reports").iterdir()) == [
        "0000-deal",
        "0001-setup-turn",
        "0002-turn-1",
        "0003-turn-2",
    ]
    return directory


def old_reports(game: Path) -> Path:
    """The report folder of resolution 1, older than the newest two (named here: `report_dir`
    refuses it once it holds a link)."""
    return game / "reports" / "0001-setup-turn"


def old_done(game: Path) -> Path:
    """The order files resolution 1 used, older than the newest two."""
    return game / "orders" / "done" / "0001"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the game: a secret file in it, and another in its folder inner/."""
    folder = tmp_path / "outside"
    (folder / "inner").mkdir(parents=True)
    (folder / "secret.txt").write_text(SECRET)
    (folder / "inner" / "secret.txt").write_text(SECRET)
    return folder


def plant(folder: Path, kind: str, outside: Path, name: str = "alice.txt") -> Path:
    """A link of `kind` in `folder` (in the place of its file `name`, or deep inside it); the
    link."""
    if kind == "a folder outside, deep inside":
        (folder / "kept" / "deeper").mkdir(parents=True)
        link = folder / "kept" / "deeper" / "elsewhere"
        os.symlink(outside / "inner", link)
        return link
    link = folder / name
    link.unlink(missing_ok=True)
    game_file = next(p for p in folder.parents if (p / "game.toml").is_file()) / "game.toml"
    target = outside / "secret.txt" if kind == "a file outside" else game_file
    os.symlink(os.path.relpath(target, folder), link)
    return link


class Untouched:
    """What is outside the game, as it was: its bytes, and (where the file system keeps them)
    access times older than any read or listing since."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.bytes = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        self.paths = [folder, *folder.rglob("*")]
        for path in self.paths:
            os.utime(path, (0, os.stat(path).st_mtime))
        probe = folder / ".probe"
        probe.write_text("x")
        os.utime(probe, (0, os.stat(probe).st_mtime))
        probe.read_text()
        self.atimes = os.stat(probe).st_atime != 0  # (reads move access times here)
        probe.unlink()
        os.utime(folder, (0, os.stat(folder).st_mtime))

    def check(self) -> None:
        if self.atimes:
            read = [str(p) for p in self.paths if os.stat(p).st_atime != 0]
            assert not read, f"read or listed outside the game: {read}"
        now = {p: p.read_bytes() for p in self.folder.rglob("*") if p.is_file()}
        assert now == self.bytes


def test_a_read_or_a_listing_through_a_link_is_seen(game: Path, outside: Path) -> None:
    """(The watch of what is outside sees what it must.)"""
    reads: list[tuple[str, Callable[[Path], object]]] = [
        ("a file outside", Path.read_bytes),
        ("a folder outside, deep inside", os.listdir),
    ]
    for kind, read in reads:
        folder = old_reports(game) / "watched"
        folder.mkdir()
        link = plant(folder, kind, outside)
        untouched = Untouched(outside)
        read(link)
        if untouched.atimes:
            with pytest.raises(AssertionError, match="read or listed outside the game"):
                untouched.check()
        shutil.rmtree(folder)


def own_files(directory: Path) -> dict[str, bytes]:
    """Every file of a game (a link as where it points, never followed), but the lock."""
    out = {}
    for path in sorted(directory.rglob("*")):
        name = str(path.relative_to(directory))
        if path.is_symlink():
            out[name] = b"-> " + os.fsencode(os.readlink(path))
        elif path.is_file() and path.name != ".lock":
            out[name] = path.read_bytes()
    return out


def leaks(directory: Path) -> list[str]:
    """The files of a game's outbox/ (and its mail sent) holding the secret outside or the
    game's seed."""
    seed = tomli.loads((directory / "game.toml").read_text())["seed"]
    found = []
    outbox = directory / "outbox"
    for path in () if outbox.is_symlink() else outbox.rglob("*"):
        if path.is_file() and not path.is_symlink():
            text = path.read_bytes().decode("utf-8", "replace")
            if SECRET.strip() in text or seed in text:
                found.append(path.name)
    return found


def refused(out: str, link: Path) -> None:
    assert f"{link} is a symbolic link" in out and ADVICE in out, out
    assert "Traceback" not in out


# --- the check of every command -----------------------------------------------------------------


def test_the_check_of_every_command_looks_inside_the_newest_folders_only(
    game: Path, outside: Path
) -> None:
    plant(old_reports(game), "a folder outside, deep inside", outside)
    plant(old_done(game), "a file outside", outside, "carol.toml")
    assert first_link(game) is None  # inside older folders: left to what goes there
    for folder in (old_reports(game), old_done(game)):  # an older folder that is a link: found
        moved = outside / f"moved-{folder.name}"
        shutil.move(folder, moved)
        os.symlink(moved, folder)
        assert first_link(game) == folder
        folder.unlink()
        shutil.move(moved, folder)
    for newest in (report_dir(game, 3), done_dir(game, 3), report_dir(game, 2)):
        link = newest / "zz-elsewhere"
        os.symlink(outside, link)
        assert first_link(game) == link
        link.unlink()
    notes = game / "reports" / "notes"  # a folder not named by a resolution: looked into
    notes.mkdir()
    os.symlink(outside, notes / "elsewhere")
    assert first_link(game) == notes / "elsewhere"
    (notes / "elsewhere").unlink()
    loose = game / "reports" / "zz-file"  # every entry of reports/ is looked at
    os.symlink(outside / "secret.txt", loose)
    assert first_link(game) == loose


def test_the_check_of_every_command_lists_as_many_folders_however_long_the_game(
    game: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[str] = []
    real = os.scandir

    def counted(path: str) -> os._ScandirIterator[str]:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counted)
    first_link(game)
    short = len(listed)
    monkeypatch.undo()
    for n in range(60):  # sixty more older resolutions, each with its folders
        for top in (game / "reports", game / "orders" / "done"):
            (top / f"0001-older-{n}" / "inner").mkdir(parents=True)
    monkeypatch.setattr(os, "scandir", counted)
    listed.clear()
    first_link(game)
    assert len(listed) == short


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "command",
    [["show"], ["check"], ["dice"], ["audit"], ["stats"], ["resolve"], ["status"]],
    ids=lambda c: c[0],
)
def test_a_command_that_reads_no_older_folder_runs_and_touches_nothing_outside(
    game: Path, outside: Path, kind: str, command: list[str]
) -> None:
    write_skeletons(game)
    link = plant(old_reports(game), kind, outside)
    plant(old_done(game), kind, outside, "carol.toml")
    untouched = Untouched(outside)
    run(*command, game)
    untouched.check()
    assert os.path.islink(link)
    assert leaks(game) == []


@pytest.mark.parametrize("where", ["reports", "orders/done"])
def test_an_older_folder_that_is_a_link_stops_every_command(
    game: Path, outside: Path, tmp_path: Path, where: str
) -> None:
    eml = tmp_path / "m.eml"
    eml.write_bytes(message("alice@example.org", orders_for(game, "alice")).as_bytes())
    folder = old_reports(game) if where == "reports" else old_done(game)
    shutil.move(folder, outside / "moved")
    os.symlink(outside / "moved", folder)
    before = own_files(game)
    untouched = Untouched(outside)
    for command in EVERY_COMMAND:
        refused(run(*(a.format(d=game, m=eml) for a in command), code=1), folder)
    untouched.check()
    assert own_files(game) == before


# --- what goes into an older folder -------------------------------------------------------------


def test_the_folders_of_a_resolution_are_given_once_no_link_is_there(
    game: Path, outside: Path
) -> None:
    assert report_dir(game, 1).name == "0001-setup-turn"
    assert done_dir(game, 1).name == "0001"
    folder = game / "reports" / "0009-turn-8"  # a folder not made yet: no link there
    assert new_report_dir(game, history.played_in(read_game(game), 9, 8)) == folder
    for kind in KINDS:
        link = plant(old_reports(game), kind, outside)
        for find in (lambda: report_dir(game, 1), lambda: new_report_dir_of(game, 1)):
            with pytest.raises(GameFileError, match=f"{link} is a symbolic link"):
                find()
        link.unlink()
        if kind == "a folder outside, deep inside":
            shutil.rmtree(old_reports(game) / "kept")
        link = plant(old_done(game), kind, outside, "carol.toml")
        with pytest.raises(GameFileError, match=f"{link} is a symbolic link"):
            done_dir(game, 1)
        link.unlink()
        if kind == "a folder outside, deep inside":
            shutil.rmtree(old_done(game) / "kept")


def new_report_dir_of(game: Path, resolution: int) -> Path:
    turn = history.read_history(game, resolution).turn
    return new_report_dir(game, history.played_in(read_game(game), resolution, turn))


def refused_and_untouched(
    game: Path, outside: Path, link: Path, command: Callable[[], str], changed: bool = False
) -> None:
    """`command` (its output) refuses the link; nothing outside is read or written, nothing of
    the game changes (unless `changed`: the mail state of what was built before), and no
    message carries the secret or the seed."""
    before = own_files(game)
    untouched = Untouched(outside)
    refused(command(), link)
    untouched.check()
    if not changed:
        assert own_files(game) == before
    assert leaks(game) == []


@pytest.mark.parametrize("kind", KINDS)
def test_mail_send_refuses_a_link_in_the_older_folder_of_reports_it_mails(
    game: Path, outside: Path, kind: str
) -> None:
    link = plant(old_reports(game), kind, outside)
    refused_and_untouched(game, outside, link, lambda: run("mail", "send", game, code=1))
    assert not any(p.name.startswith("r0001") for p in (game / "outbox").iterdir())
    link.unlink()  # replaced by a real file: the reports go
    if kind == "a folder outside, deep inside":
        shutil.rmtree(old_reports(game) / "kept")
    else:
        (old_reports(game) / "alice.txt").write_text("the report, a real file\n")
    run("mail", "send", game)
    assert any(p.name.startswith("r0001-setup-turn-alice") for p in (game / "outbox").iterdir())


@pytest.mark.parametrize("kind", KINDS)
def test_mail_send_all_refuses_a_link_in_an_older_folder_a_first_send_passes_over(
    game: Path, outside: Path, kind: str
) -> None:
    """A game whose mail begins three resolutions on: the first send mails the latest reports
    alone, and goes into no older folder; with --all it mails the older ones too."""
    shutil.rmtree(game / "mail")
    shutil.rmtree(game / "outbox")
    link = plant(old_reports(game), kind, outside)
    untouched = Untouched(outside)
    assert "r0003-turn-2-alice.eml" in run("mail", "send", game, "--dry-run")
    untouched.check()
    for args in (["--all", "--dry-run"], ["--all"]):
        sent = partial(run, "mail", "send", game, *args, code=1)
        refused_and_untouched(game, outside, link, sent, changed=True)
    assert not any(p.name.startswith("r0001") for p in (game / "outbox").iterdir())


@pytest.mark.parametrize("kind", KINDS)
def test_a_report_resent_from_an_older_folder_refuses_a_link_there(
    game: Path, outside: Path, kind: str
) -> None:
    link = plant(old_reports(game), kind, outside)
    refused_and_untouched(
        game,
        outside,
        link,
        lambda: run("mail", "resend", game, "--player", "alice", "--turn", "0", code=1),
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_fetch_that_compares_with_every_ready_file_refuses_a_link_in_reports(
    game: Path, outside: Path, tmp_path: Path, kind: str
) -> None:
    """Orders mailed in are compared with every ready order file pbem mailed (so that one sent
    back unchanged is known): the fetch reads every report folder's, and stops at a link."""
    eml = tmp_path / "m.eml"
    awaited = read_game(game).state.awaiting()[0]
    eml.write_bytes(message(f"{awaited}@example.org", orders_for(game, awaited)).as_bytes())
    link = plant(old_reports(game), kind, outside, f"{awaited}.orders.toml")
    refused_and_untouched(game, outside, link, lambda: run("mail", "fetch", game, eml, code=1))
    assert not (game / "orders" / f"{awaited}.toml").exists()


@pytest.fixture
def strays(game: Path) -> Path:
    """Two folders of the moderator's in reports/ and orders/done/, numbered past the game: the
    check of every command looks into those as the newest, and no longer into the game's
    latest resolution's own."""
    for top in (game / "reports", game / "orders" / "done"):
        for name in ("9998-kept", "9999-kept"):
            (top / name).mkdir()
    return game


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["reports", "orders/done"])
def test_undo_refuses_a_link_in_the_folders_it_empties_before_changing_anything(
    strays: Path, outside: Path, kind: str, where: str
) -> None:
    game = strays
    folder = game / ("reports/0003-turn-2" if where == "reports" else "orders/done/0003")
    name = "alice.txt" if where == "reports" else next(p.name for p in folder.iterdir())
    link = plant(folder, kind, outside, name)
    assert first_link(game) is None  # (the strays are the newest by number)
    refused_and_untouched(
        game, outside, link, lambda: run("undo", game, "--why", "a mistake", code=1)
    )


def test_an_interrupted_undo_is_finished_only_once_no_link_is_in_the_game(
    game: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The undo's steps after the first run again; the outbox they clear of the undone
    reports, linked elsewhere meanwhile, is refused."""
    from pbem.game import undo

    run("mail", "send", game)

    def crash(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(undo, "withdraw_reports", crash)
        run("undo", game, "--why", "a mistake", code=1)  # (click: "Aborted!")
    assert (game / "history" / "undo.toml").is_file()
    shutil.move(game / "outbox", outside / "outbox")
    os.symlink(outside / "outbox", game / "outbox")
    refused_and_untouched(
        game, outside, game / "outbox", lambda: run("undo", game, "--why", "x", code=1)
    )
    (game / "outbox").unlink()
    shutil.move(outside / "outbox", game / "outbox")
    assert "Finished the interrupted undo" in run("undo", game, "--why", "x")


@pytest.mark.parametrize("way", ["a file outside", "a folder outside, deep inside", ".."])
def test_a_report_named_for_the_audit_through_a_link_in_the_game_is_refused(
    game: Path, outside: Path, way: str
) -> None:
    view = old_reports(game) / "alice.view.json"
    shutil.copy(view, outside / "inner" / "alice.view.json")
    shutil.copy(view, outside / "alice.view.json")
    if way == "a file outside":
        link = plant(old_reports(game), way, outside, "alice.view.json")
        os.unlink(link)
        os.symlink(outside / "alice.view.json", link)
        named = link
    else:
        link = plant(old_reports(game), "a folder outside, deep inside", outside)
        named = link / "alice.view.json" if way != ".." else link / ".." / "alice.view.json"
    refused_and_untouched(
        game, outside, link, lambda: run("audit", game, "--report", named, code=1)
    )
    out = run("audit", game, "--report", report_dir(game, 2) / "alice.view.json")
    assert "Traceback" not in out


@pytest.mark.parametrize("command", ["check", "resolve"])
@pytest.mark.parametrize("kind", ["a file outside", "a folder outside, deep inside"])
def test_an_order_file_named_through_a_link_in_an_older_folder_is_refused(
    game: Path, outside: Path, command: str, kind: str
) -> None:
    (outside / "inner" / "carol.toml").write_text(SECRET)
    link = plant(old_done(game), kind, outside, "carol.toml")
    named = link if kind == "a file outside" else link / "carol.toml"
    refused_and_untouched(game, outside, link, lambda: run(command, game, named, code=1))


# --- the public record and the club's pages (they read the history, never a report) --------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_publish import play

    return play(tmp_path_factory.mktemp("finished") / "over", Options(), 7)


@pytest.mark.parametrize("kind", KINDS)
def test_the_public_record_and_the_clubs_pages_touch_nothing_outside(
    finished: Path, game: Path, outside: Path, tmp_path: Path, kind: str
) -> None:
    root = tmp_path / "club"
    root.mkdir()
    over = Path(shutil.copytree(finished, root / "over", symlinks=True))
    running = Path(shutil.move(game, root / GAME))
    for directory in (over, running):
        plant(sorted((directory / "reports").iterdir())[1], kind, outside)
        used = directory / "orders" / "done" / "0001"
        plant(used, kind, outside, sorted(p.name for p in used.iterdir())[0])
        assert first_link(directory) is None
    untouched = Untouched(outside)
    run("publish", over, tmp_path / "record")
    run("audit", tmp_path / "record")
    run("publish", root, tmp_path / "pages")
    untouched.check()
    seeds = [tomli.loads((d / "game.toml").read_text())["seed"] for d in (over, running)]
    for path in [*(tmp_path / "record").rglob("*"), *(tmp_path / "pages").rglob("*")]:
        if path.is_file():
            text = path.read_bytes().decode("utf-8", "replace")
            assert SECRET.strip() not in text and not any(seed in text for seed in seeds), path
