#!/usr/bin/env bash
# Builds the harness jar when it is missing or older than its sources, then runs one subcommand:
#   run.sh generate [--check] [DIR] | verify [DIR] | bench [DIR] [--quick]
# DIR defaults to the repository's fixtures/wire.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
jar="$here/target/kstreams-compat.jar"

if [[ ! -f "$jar" ]] || [[ -n "$(find "$here/pom.xml" "$here/src" -newer "$jar" -print -quit)" ]]; then
    (cd "$here" && mvn -q -B -Dstyle.color=never package) >&2
fi

exec java ${JAVA_OPTS:-} -Dkstreams.compat.fixtures="$repo/fixtures/wire" -jar "$jar" "$@"
