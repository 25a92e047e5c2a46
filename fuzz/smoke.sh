#!/usr/bin/env bash
# Every cargo-fuzz target for a few seconds each (FUZZ_SECONDS, default 8), from the seeded corpus.
# Needs a nightly toolchain; installs cargo-fuzz (pinned) if it is missing. By hand: the nightly
# sanitizer build takes several minutes on 2 cores, so CI runs tests/fuzz_smoke.rs instead (the
# same checks on the fixtures, their mutations and random bytes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${FUZZ_SECONDS:-8}"
cargo +nightly --version > /dev/null
command -v cargo-fuzz > /dev/null || cargo install cargo-fuzz --locked --version 0.13.2
./seed-corpus.sh
# Every target built at once (the runs below then only run them).
cargo +nightly fuzz build -O 2>&1 | tail -1
for target in $(cargo +nightly fuzz list); do
    extra=()
    # Broker responses: a reservation from a count the frame cannot hold is a crash here.
    case "$target" in response | streams_group_describe | streams_group_heartbeat) extra=(-malloc_limit_mb=64) ;; esac
    cargo +nightly fuzz run -O "$target" -- -max_total_time="$seconds" -max_len=8192 "${extra[@]}" 2>&1 | tail -1
done
