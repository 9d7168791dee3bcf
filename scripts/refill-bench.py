#!/usr/bin/env python3
"""How soon a run going on from a piece takes its first round: two `train` binaries alternating.

    scripts/refill-bench.py OLD_TRAIN NEW_TRAIN PIECE CONFIG [WINDOW] [ROUNDS]

A run that goes on from a piece (`train loop --from PIECE`) makes the replay window its piece
left again before the trainer's next step (docs/loop.md, "A run in pieces"). This copies PIECE
with its window cut to WINDOW samples (30,000 by default, so that a round takes a minute, not
twenty), then, ROUNDS times (3 by default) in alternating order, starts each binary on it in a
fresh run directory and times it from its start to its first round's line on stdout (so each
time holds the loop's machine measurement, the refill and one training round), then stops it
with SIGINT. Prints each time, the refill line of binaries that say one, and the ratio pair by
pair. Run it alone on the machine; name the CPU (`lscpu`) beside its figures.
"""
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def first_round(binary, config, piece, run, err):
    """Seconds from the start of `binary loop` to its first round's line, and that line."""
    t0 = time.time()
    args = [binary, "loop", "--config", config, "--run", run, "--from", piece, "--iterations", "1000000"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
    seconds, line = None, ""
    for line in p.stdout:
        if line.startswith("iter "):
            seconds = time.time() - t0
            p.send_signal(signal.SIGINT)
            break
    try:
        p.wait(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if seconds is None:
        sys.exit(f"{binary} ended before its first round (exit {p.returncode}); its stderr is in {err.name}")
    return seconds, line.strip()


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    old, new, piece, config = sys.argv[1:5]
    window = int(sys.argv[5]) if len(sys.argv) > 5 else 30000
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    work = Path(tempfile.mkdtemp(prefix="refill-bench-"))
    cut = work / "piece"
    shutil.copytree(piece, cut)
    state = json.loads((cut / "piece.json").read_text())
    state["window"] = min(window, state["window"])
    (cut / "piece.json").write_text(json.dumps(state, indent=2) + "\n")
    times = {"old": [], "new": []}
    for r in range(rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            run = work / f"{name}-{r}"
            with open(work / f"{name}-{r}.err", "w") as err:
                seconds, line = first_round(old if name == "old" else new, config, str(cut), str(run), err)
            said = [l.strip() for l in open(work / f"{name}-{r}.err") if "refilled" in l]
            print(f"round {r} {name}: {seconds:.1f} s to the first round | {line[:80]} | {said}", flush=True)
            times[name].append(seconds)
            shutil.rmtree(run, ignore_errors=True)
    for r in range(rounds):
        o, n = times["old"][r], times["new"][r]
        print(f"pair {r}: old {o:.1f} s, new {n:.1f} s, old/new {o / n:.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
