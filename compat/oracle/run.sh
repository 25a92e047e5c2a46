#!/usr/bin/env bash
# Cross-check the min-cost flow solvers with Google OR-tools (PyPI `ortools`):
# the ignored Rust test writes random cases and this crate's answers as JSON lines,
# compat/oracle/ortools_check.py re-solves them with OR-tools and compares.
#   compat/oracle/run.sh [CASES_PER_KIND]   (default 1000; five kinds)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -c 'import ortools' 2> /dev/null || python3 -m pip install --quiet ortools==9.15.6755
out=target/flow-oracle/cases.jsonl
FLOW_ORACLE_OUT="$out" FLOW_ORACLE_CASES="${1:-1000}" \
    cargo test --quiet --test flow_oracle -- --ignored --exact export_cases_for_ortools
python3 compat/oracle/ortools_check.py "$out"
