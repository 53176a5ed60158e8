"""Start-up of the command line: `factory --version` and `factory --help` beside `python -c pass`.

Each command runs `--rounds` times, alternating with the baseline, in fresh processes; the
medians and their ratio are printed. The goal (issue 19): `factory --version` under 1 s here.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "factory --version": [sys.executable, "-m", "factory.cli", "--version"],
    "factory --help": [sys.executable, "-m", "factory.cli", "--help"],
}


def seconds(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.rounds):
        for name, command in COMMANDS.items():
            times[name].append(seconds(command))
    base = statistics.median(times["python -c pass"])
    print(f"command-line start-up (median of {args.rounds}; baseline: python -c pass)")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<20} {median * 1000:7.0f} ms   ratio {median / base:5.1f}")


if __name__ == "__main__":
    main()
