#!/usr/bin/env bash
# The HTML reports in a real browser: `simulate --html` (one run), `simulate --compare --html`
# (a few scenarios, and the whole suite), `simulate --compare --protocol both --html` and
# `assign --html` (the fixture group, and the rebalance after scale-out's join, replayed from
# `simulate --inputs`) are written under target/html-reports/ beside the `--json` or JSON output
# of the same run; headless Chromium (compat/e2e/html_reports_check.py over the DevTools
# protocol) opens each page from disk (file://) and checks its DOM against that JSON, that the
# page made no request but for the file itself and logged no error, and writes screenshots
# target/html-*.png.
#
#   compat/e2e/html-reports.sh        exit 0 when every check holds
#
# Builds nothing: KSTREAMS_ASSIGNOR_BIN names the binary (default target/release/kstreams-assignor),
# CHROMIUM the browser (default /usr/bin/chromium).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${KSTREAMS_ASSIGNOR_BIN:-$root/target/release/kstreams-assignor}"
chromium="${CHROMIUM:-/usr/bin/chromium}"
out="$root/target/html-reports"
started=$SECONDS

[[ -x "$bin" ]] || { echo "no binary at $bin (cargo build --release, or set KSTREAMS_ASSIGNOR_BIN)" >&2; exit 1; }
[[ -x "$chromium" ]] || { echo "no browser at $chromium (apt-get install chromium)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/inputs"

# Each page beside the JSON of the same run; standard error kept for a failure's reader.
"$bin" simulate scale-out --html "$out/simulate.html" --json "$out/simulate.json" --inputs "$out/inputs" >/dev/null 2>"$out/simulate.err"
"$bin" simulate --compare --seeds 3 --html "$out/compare.html" --json "$out/compare.json" >/dev/null 2>"$out/compare.err"
"$bin" simulate --compare --html "$out/compare-suite.html" --json "$out/compare-suite.json" >/dev/null 2>"$out/compare-suite.err"
"$bin" simulate --compare --protocol both --seeds 3 --html "$out/protocols.html" --json "$out/protocols.json" >/dev/null 2>"$out/protocols.err"
cp "$root/fixtures/assign/group.json" "$out/assign-input.json"
"$bin" assign --input "$out/assign-input.json" --html "$out/assign.html" >"$out/assign.json" 2>"$out/assign.err"
# The rebalance of scale-out where the fourth instance joins (round-1: the first after the start).
cp "$out/inputs/round-1.json" "$out/assign-join-input.json"
"$bin" assign --input "$out/assign-join-input.json" --html "$out/assign-join.html" >"$out/assign-join.json" 2>"$out/assign-join.err"
echo "ok: wrote $(ls "$out"/*.html | wc -l) pages under target/html-reports/ in $((SECONDS - started)) s"

python3 "$here/html_reports_check.py" --dir "$out" --chromium "$chromium" --screenshots "$root/target"
echo "html reports: all checks hold in $((SECONDS - started)) s; screenshots target/html-*.png"
