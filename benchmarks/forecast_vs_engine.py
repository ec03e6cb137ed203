"""The forecast of whole plans against the engine: each plan of tests/forecast_plans.py resolved
20,000 times with different keys, every frequency compared with the forecast (within 4.5
standard errors of 20,000 samples); and how long the forecasts take.

Usage: python benchmarks/forecast_vs_engine.py [RUNS]   (prints figures; exit 1 on a mismatch)
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from forecast_plans import PLANS, compare, fifty_army_plans  # noqa: E402

from pbem.core.forecast import forecast_plan  # noqa: E402
from pbem.present.plan import forecast_lines  # noqa: E402


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    for name, state, turn in fifty_army_plans():
        start = time.perf_counter()
        forecast_lines(state, turn)
        print(f"forecast of {name}: {(time.perf_counter() - start) * 1000:.1f} ms")
    print(f"{len(PLANS)} plans, {runs} resolutions each")
    bad = 0
    for plan in PLANS:
        state = plan.state()
        start = time.perf_counter()
        forecast = forecast_plan(state, plan.orders(state))
        took = time.perf_counter() - start
        start = time.perf_counter()
        problems = compare(plan, runs)
        resolved = time.perf_counter() - start
        steps = len(forecast.attacks) + (forecast.fortify is not None)
        verdict = "agrees" if not problems else "DISAGREES"
        print(
            f"{plan.name:50} {steps} steps  forecast {took * 1000:6.1f} ms  "
            f"engine {resolved:5.1f} s  {verdict}"
        )
        for line in problems:
            print(f"    {line}")
        bad += bool(problems)
    print("every plan agrees with the engine" if not bad else f"{bad} plans disagree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
