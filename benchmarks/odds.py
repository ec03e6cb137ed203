"""How long the exact battle odds take: forecasts of N against N, computed afresh.

Usage: python benchmarks/odds.py   (prints figures; nothing is asserted)
"""

from __future__ import annotations

import platform
import time

from pbem.core.odds import forecast


def main() -> None:
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    for n in (10, 50, 100, 200):
        forecast.cache_clear()
        start = time.perf_counter()
        result = forecast(n, n)
        took = time.perf_counter() - start
        print(f"{n} against {n}: {took * 1000:8.1f} ms  (takes it {float(result.win):.4f})")


if __name__ == "__main__":
    main()
