"""The whole test suite run again and again on a busy machine: no test may pass or fail by luck.

Usage: python benchmarks/stress.py [--runs N] [--load K] [PYTEST ARGS...]

Runs the suite N times in a row (default 20) while K other runs of the suite (default 1) go
on beside it, started again as soon as they end, so that the machine's cores stay busy the
whole time (two cores: the suite and one more beside it). Every run is a plain pytest run, as
anyone runs the suite, in pytest's own temporary folders: a run that starts beside another
changes what they share (pytest sets /tmp/pytest-of-USER back to 0700 when it starts), and that
must break no test. The runs beside only make load: their results are not counted.
Prints each counted run's outcome as it ends (with the tests that failed), then how many of
the N runs passed; exit code 0 when every one did.

PBEM_REQUIRE_DOVECOT=1 and PBEM_REQUIRE_CHROMIUM=1 are set for every run, so that a test
server that does not start fails instead of being skipped. Arguments after the options go to
every pytest run (`-k imap`, a test file), to stress part of the suite.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pytest_command(extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra]


class Load:
    """Runs of the suite beside the counted ones, each started again when it ends."""

    def __init__(self, count: int, extra: list[str], env: dict[str, str]) -> None:
        self.extra, self.env = extra, env
        self.started = 0
        self.running: list[subprocess.Popen[bytes]] = [self._start() for _ in range(count)]

    def _start(self) -> subprocess.Popen[bytes]:
        self.started += 1
        return subprocess.Popen(
            pytest_command(self.extra),
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def keep_going(self) -> None:
        self.running = [p if p.poll() is None else self._start() for p in self.running]

    def stop(self) -> None:
        for process in self.running:
            process.terminate()
        for process in self.running:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def failed_tests(output: str) -> list[str]:
    return [line.split()[1] for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="counted runs of the suite")
    parser.add_argument("--load", type=int, default=1, help="runs of the suite beside them")
    args, extra = parser.parse_known_args()
    env = {**os.environ, "PBEM_REQUIRE_DOVECOT": "1", "PBEM_REQUIRE_CHROMIUM": "1"}
    passed = 0
    with tempfile.TemporaryDirectory(prefix="pbem-stress-") as scratch:
        folder = Path(scratch)
        load = Load(args.load, extra, env)
        try:
            for n in range(1, args.runs + 1):
                start = time.monotonic()
                log = folder / f"run-{n}.log"
                with log.open("wb") as out:  # a file, not a pipe nobody reads while it runs
                    run = subprocess.Popen(
                        pytest_command(extra),
                        cwd=ROOT,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                    while run.poll() is None:
                        load.keep_going()
                        time.sleep(1)
                output = log.read_text("utf-8", "replace")
                seconds = time.monotonic() - start
                last = output.strip().splitlines()[-1] if output.strip() else "(no output)"
                if run.returncode == 0:
                    passed += 1
                    print(f"run {n}: passed in {seconds:.0f} s ({last})", flush=True)
                else:
                    names = ", ".join(failed_tests(output)) or last
                    print(f"run {n}: FAILED in {seconds:.0f} s: {names}", flush=True)
        finally:
            load.stop()
    print(f"{passed} of {args.runs} runs passed, with {args.load} run(s) of the suite beside")
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
