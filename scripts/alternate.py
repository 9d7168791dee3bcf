"""Two binaries measured in alternating rounds, for the benchmark scripts beside this file.

`until_line(args, prefix, err)` starts a command, waits for the first line of its standard
output that starts with PREFIX, then stops it with SIGINT (as a user would) and waits for it to
end; it returns that line (None if the command ended without one), the seconds from the start to
it, and the command's exit status.

`alternate(old, new, rounds, prefix, one)` calls `one(binary, run, err)` ROUNDS times for each
binary, old first in even rounds and new first in odd ones (so that a machine drifting over the
sitting weighs on both alike), each time with a fresh run directory and a file for its stderr
in one scratch folder; `one` returns (figure, line), the line is printed as it comes, and the
figures come back as {"old": [...], "new": [...]} in round order. The scratch folder goes at
the end.
"""
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path


def until_line(args, prefix, err):
    t0 = time.time()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
    found, seconds = None, None
    for line in p.stdout:
        if line.startswith(prefix):
            found, seconds = line.strip(), time.time() - t0
            p.send_signal(signal.SIGINT)
            break
    try:
        p.wait(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return found, seconds, p.returncode


def alternate(old, new, rounds, prefix, one):
    work = Path(tempfile.mkdtemp(prefix=prefix))
    figures = {"old": [], "new": []}
    for r in range(rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            run = work / f"{name}-{r}"
            with open(work / f"{name}-{r}.err", "w") as err:
                figure, line = one(old if name == "old" else new, run, err)
            print(f"round {r} {name}: {line}", flush=True)
            figures[name].append(figure)
            shutil.rmtree(run, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return figures
