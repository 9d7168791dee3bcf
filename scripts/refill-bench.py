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
import sys
import tempfile
from pathlib import Path

from alternate import alternate, until_line


def first_round(binary, config, piece, run, err):
    """Seconds from the start of `binary loop` to its first round's line, and that line."""
    args = [binary, "loop", "--config", config, "--run", run, "--from", piece, "--iterations", "1000000"]
    line, seconds, status = until_line(args, "iter ", err)
    if line is None:
        sys.exit(f"{binary} ended before its first round (exit {status}); its stderr is in {err.name}")
    return seconds, line


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

    def one(binary, run, err):
        seconds, line = first_round(binary, config, str(cut), str(run), err)
        err.flush()
        said = [l.strip() for l in open(err.name) if "refilled" in l]
        return seconds, f"{seconds:.1f} s to the first round | {line[:80]} | {said}"

    times = alternate(old, new, rounds, "refill-bench-", one)
    for r in range(rounds):
        o, n = times["old"][r], times["new"][r]
        print(f"pair {r}: old {o:.1f} s, new {n:.1f} s, old/new {o / n:.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
