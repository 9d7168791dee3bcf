#!/usr/bin/env python3
"""The loop's machine line of two `train` binaries, alternating: self-play's speed before and after.

    scripts/machine-bench.py OLD_TRAIN NEW_TRAIN CONFIG [ROUNDS]

ROUNDS times (3 by default), in alternating order, starts each binary's `train loop --config
CONFIG` in a fresh run directory, waits for the line it prints once it has measured the
machine (`machine: CPU (C cores); one core: N self-play samples/s (network batch B on BACKEND:
P positions/s, X% of the bench's Q at batch B), T training samples/s ...`), then stops it with
SIGINT. Prints every line and,
pair by pair, the ratio of the self-play samples a second. Run it alone on the machine; name
the CPU (`lscpu`) beside its figures.
"""
import re
import sys

from alternate import alternate, until_line


def machine_line(binary, config, run, err):
    """The machine line of `binary loop`, and its self-play samples a second."""
    args = [binary, "loop", "--config", config, "--run", run, "--iterations", "1000000"]
    found, _, status = until_line(args, "machine: ", err)
    if found is None:
        sys.exit(f"{binary} ended before its machine line (exit {status}); its stderr is in {err.name}")
    rate = re.search(r"([\d.]+) self-play samples/s", found)
    if rate is None:
        sys.exit(f"{binary}: a machine line without self-play samples/s: {found}")
    return found, float(rate.group(1))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old, new, config = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3

    def one(binary, run, err):
        line, rate = machine_line(binary, config, str(run), err)
        return rate, line

    rates = alternate(old, new, rounds, "machine-bench-", one)
    for r in range(rounds):
        o, n = rates["old"][r], rates["new"][r]
        print(f"pair {r}: old {o:.0f}, new {n:.0f} self-play samples/s, new/old {n / o:.2f}")


if __name__ == "__main__":
    main()
