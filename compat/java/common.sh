# Sourced by the scripts in compat/java: where things are, and the harness jar (the pinned
# kafka-streams classes and our runners), built when missing or older than its sources.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
jar="$here/target/kstreams-compat.jar"

ensure_jar() {
    if [[ ! -f "$jar" ]] || [[ -n "$(find "$here/pom.xml" "$here/src" -newer "$jar" -print -quit)" ]]; then
        echo "building $jar" >&2
        mvn -q -B -Dstyle.color=never -f "$here/pom.xml" package -DskipTests >&2
    fi
}
