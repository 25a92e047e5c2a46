#!/usr/bin/env bash
# Decode/encode throughput of the large v11 fixtures: our codec (criterion) and the Java classes
# (JMH, compat/java) in one run, with the ratio. Usage: compat/bench-wire.sh [--quick]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
quick=()
crit=()
if [[ "${1:-}" == "--quick" ]]; then quick=(--quick); crit=(--warm-up-time 1 --measurement-time 2); fi

cargo bench --bench wire -- "${crit[@]}" >&2
java_out="$(compat/java/run.sh bench "${quick[@]}")"

python3 - "$java_out" <<'PY'
import json, sys, pathlib
java = {j["bench"]: j for j in map(json.loads, filter(None, sys.argv[1].splitlines()))}
# Java's decode builds its maps as it reads (SubscriptionInfo's task map on the first accessor
# call); ours reads into the message (wire order kept) and builds the views on demand. Each of
# our rows is one caller's path, all against Java's one decode: the leader and `describe` read
# the sorted offset sums, `describe` the standby task ids, a member the standby map and the
# hosts; the last row builds every map Java builds.
rows = [("subscription_decode", "subscription_v11_large/decode_wire_only", "subscription decode"),
        ("subscription_decode", "subscription_v11_large/decode", "  + leader's, describe's view"),
        ("subscription_decode", "subscription_v11_large/decode_btree_map", "  + as a BTreeMap"),
        ("subscription_encode", "subscription_v11_large/encode", "subscription encode"),
        ("assignment_decode", "assignment_v11_large/decode_wire_only", "assignment decode"),
        ("assignment_decode", "assignment_v11_large/decode_standby_ids", "  + standby ids (describe)"),
        ("assignment_decode", "assignment_v11_large/decode_standby_map", "  + standby map"),
        ("assignment_decode", "assignment_v11_large/decode_member", "  + member's on_assignment"),
        ("assignment_decode", "assignment_v11_large/decode", "  + every map"),
        ("assignment_encode", "assignment_v11_large/encode", "assignment encode")]
print(f"{'benchmark':24} {'bytes':>7} {'rust µs':>9} {'rust MB/s':>10} {'java µs':>9} {'java MB/s':>10} {'speed-up':>9}")
for jname, cname, label in rows:
    est = json.loads(pathlib.Path(f"target/criterion/{cname}/new/estimates.json").read_text())
    rust_ns = est["mean"]["point_estimate"]
    j = java[jname]
    size = j["bytes"]
    print(f"{label:24} {size:7d} {rust_ns/1e3:9.1f} {size/rust_ns*1e3:10.1f} {j['nsPerOp']/1e3:9.1f} {j['mbPerSec']:10.1f} {j['nsPerOp']/rust_ns:8.1f}x")
PY
