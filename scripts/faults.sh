#!/usr/bin/env bash
# The fault suite alone (docs/reliability.md): the run on S3 that meets eight faults in turn
# (train/tests/faults.rs), the bucket's fencing tests (train/tests/bucket.rs), a loop killed at
# every rename and a disk full at any write (train/tests/loop_e2e.rs), and the lease tests
# (run/src/lease.rs). moto's S3 server comes from a venv of its own, made here if missing
# ($TMPDIR/lifeline-moto-venv, as CI makes it).
#
#   scripts/faults.sh [--repeat N]    (default: once; N runs of the S3 run, each its own seed)
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=1
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "faults.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
venv="${TMPDIR:-/tmp}/lifeline-moto-venv"
if ! "$venv/bin/python" -c 'import moto.server' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet 'moto[server]'
fi
export LIFELINE_MOTO_PYTHON="$venv/bin/python" LIFELINE_REQUIRE_MOTO=1
# The worker of the S3 run is the selfplay binary, built beside train's.
cargo build --quiet -p selfplay --bins
cargo test --quiet -p run --lib lease
cargo test --quiet -p train --test integration bucket::
cargo test --quiet -p train --test integration -- killed_at_any_rename disk_fills
for i in $(seq "$repeat"); do
  echo "S3 run $i of $repeat:"
  cargo test --quiet -p train --test integration faults:: -- --nocapture 2>&1 |
    grep -E '^(random moments|[0-9]+ faults|  |held|BROKEN|test result)'
done
