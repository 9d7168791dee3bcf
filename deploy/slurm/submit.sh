#!/bin/bash
# Submit a run's roles to Slurm: WORKERS self-play array tasks, one trainer, one rater and one
# gatekeeper, all sharing the run directory RUN (on a filesystem every node mounts: NFS,
# Lustre, CephFS).
#
#   deploy/slurm/submit.sh CONFIG RUN [WORKERS]
#
# Environment: LIFELINE_BIN (directory of the selfplay, train and eval binaries; default:
# found on PATH), GAMES (games per shard, 64), RATIO (samples trained per sample generated,
# 4), DEVICE (the trainer's, cuda), PROMOTE (gate: the gatekeeper promotes what passes its
# gate; newest: every checkpoint at once, and no gatekeeper), SBATCH_EXTRA (more sbatch
# options, e.g. --partition=x).
# Follow the run with `train status --run RUN`; stop it with `scancel --name=lz-selfplay` etc.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
CONFIG=$(realpath "$1")
RUN=$(realpath -m "$2")
WORKERS=${3:-4}
HERE=$(dirname "$(realpath "$0")")
export CONFIG RUN PROMOTE=${PROMOTE:-gate}
mkdir -p "$RUN"
# shellcheck disable=SC2086 # SBATCH_EXTRA is a list of options
submit() { sbatch --parsable --export=ALL --chdir="$RUN" ${SBATCH_EXTRA:-} "$@"; }
trainer=$(submit "$HERE/trainer.sbatch")
workers=$(submit --array=0-$((WORKERS - 1)) "$HERE/selfplay.sbatch")
rater=$(submit "$HERE/rater.sbatch")
line="trainer job $trainer, self-play array $workers ($WORKERS workers), rater job $rater"
if [ "${PROMOTE:-gate}" = gate ]; then
  gatekeeper=$(submit "$HERE/gatekeeper.sbatch")
  line="$line, gatekeeper job $gatekeeper"
fi
echo "$line"
echo "follow it with: train status --run $RUN"
