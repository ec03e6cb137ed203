"""The machine a benchmark ran on, as its figures name it."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu() -> str:
    """The processor's model name as Linux gives it (platform.processor() is often empty or
    only the architecture there), else platform.processor(), else the architecture."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "(processor unknown)"
