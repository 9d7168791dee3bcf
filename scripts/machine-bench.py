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
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path


def machine_line(binary, config, run, err):
    """The machine line of `binary loop`, and its self-play samples a second."""
    args = [binary, "loop", "--config", config, "--run", run, "--iterations", "1000000"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
    found = None
    for line in p.stdout:
        if line.startswith("machine: "):
            found = line.strip()
            p.send_signal(signal.SIGINT)
            break
    try:
        p.wait(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if found is None:
        sys.exit(f"{binary} ended before its machine line (exit {p.returncode}); its stderr is in {err.name}")
    rate = re.search(r".*?([\d.]+) self-play samples/s", found)
    if rate is None:
        sys.exit(f"{binary}: a machine line without self-play samples/s: {found}")
    return found, float(rate.group(1))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old, new, config = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    work = Path(tempfile.mkdtemp(prefix="machine-bench-"))
    rates = {"old": [], "new": []}
    for r in range(rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            run = work / f"{name}-{r}"
            with open(work / f"{name}-{r}.err", "w") as err:
                line, rate = machine_line(old if name == "old" else new, config, str(run), err)
            print(f"round {r} {name}: {line}", flush=True)
            rates[name].append(rate)
            shutil.rmtree(run, ignore_errors=True)
    for r in range(rounds):
        o, n = rates["old"][r], rates["new"][r]
        print(f"pair {r}: old {o:.0f}, new {n:.0f} self-play samples/s, new/old {n / o:.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
