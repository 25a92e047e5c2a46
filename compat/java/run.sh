#!/usr/bin/env bash
# Builds the harness jar when it is missing or older than its sources, then runs one subcommand:
#   run.sh generate [--check] [DIR] | verify [DIR] | bench [DIR] [--quick]
# DIR defaults to the repository's fixtures/wire.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_jar

exec java ${JAVA_OPTS:-} -Dkstreams.compat.fixtures="$repo/fixtures/wire" -jar "$jar" "$@"
