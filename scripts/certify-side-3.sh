#!/usr/bin/env bash
# Certify Lifeline side 3 with df-pn (`engine solve openings`) under the strong pie and the komi
# pie at komi 3 and 4 (the fair komi lies between them), check every certificate from its file
# without search (`engine solve check`), and compare the answers with the alpha-beta solver's:
# the 13 strong-pie openings White should swap (eval/tests/truth.rs checks the balance studies
# against the same list) and c3 as Black's only winning first stone at komi 3, none at komi 4.
# The weak pie is proved and compared class by class in engine/tests/proofs.rs (CI runs it
# with --release after this script).
# Usage: scripts/certify-side-3.sh [OUT]   (after `cargo build --release -p engine`)
set -euo pipefail
cd "$(dirname "$0")/.."
engine="${ENGINE:-target/release/engine}"
out="${1:-target/proofs-side-3}"
prove() {
  "$engine" solve openings --game "$1" --out "$out/$2" --threads 2 --table-mib 512 | tail -n 1
}
prove '{"game":"lifeline","options":{"size":3,"balance":"strong"}}' strong
for k in 3 4; do
  prove "{\"game\":\"lifeline\",\"options\":{\"size\":3,\"balance\":\"komi\",\"komi\":$k}}" "komi-$k"
done
"$engine" solve check "$out"/*/*.proof
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def summary(name):
    with open(f"{out}/{name}/summary.json") as f:
        return json.load(f)
strong = summary("strong")
expected_swap = ["a1+c1", "a1+d2", "a1+c3", "a1+e3", "a1+e4", "a1+e5", "b1+a2", "b1+b3",
                 "b1+c3", "b1+b4", "b1+c4", "b1+d5", "b2+d3"]
assert len(strong["classes"]) == 17, "17 strong-pie classes"
assert sorted(strong["swap"]) == sorted(expected_swap), strong["swap"]
assert summary("komi-3")["winning_openings"] == ["c3"], summary("komi-3")["winning_openings"]
assert summary("komi-4")["winning_openings"] == [], summary("komi-4")["winning_openings"]
for name in ["strong", "komi-3", "komi-4"]:
    s = summary(name)
    assert all(c["status"] in ("proved", "resumed") for c in s["classes"]), name
print("side 3 certified: strong pie swaps 13 of 17 classes; komi 3 won by c3 only; komi 4 lost")
PY
