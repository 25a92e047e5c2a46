#!/usr/bin/env bash
# On the broker's coordinator thread: the plugin's OptimizedStreamsTaskAssignor against Kafka's
# StickyTaskAssignor (kafka-group-coordinator 4.4.0) on the GroupSpec the coordinator's own
# TargetAssignmentBuilder builds, interleaved call by call in one JVM (compat/bench-streams).
#
#   compat/bench-streams.sh [--quick | --full | --huge] [--out DIR] [--rebuild-plugin] [-- BENCH ARGS]
#       --full (default)  10x100, 100x1000, 1000x10000; 1 and 4 members per process; cold, warm,
#                         warm-offsets, and warm-own at 1000x10000; warm-up of at least 5 calls
#                         and 2 s per cell, then 21 measured calls
#       --huge            1000x100000: cold, warm, warm-offsets; 2 warm-up and 7 measured calls
#       --quick           10x100 and 100x1000, 1 and 4 per process, warm-up of 2 calls and 0.3 s,
#                         5 calls; fails unless the table is complete (the CI run)
#       BENCH ARGS        replace the preset's (see CoordinatorBench: --sizes, --per-process,
#                         --cases, --own-at, --warmup, --warmup-ms, --iterations, --first,
#                         --timeout-ms)
#     Writes DIR/<preset>.md (the table, also printed), DIR/<preset>.tsv and DIR/chart.svg (median
#     ms per size, from every DIR/*.tsv); DIR defaults to target/bench-streams. The plugin jar is
#     plugin/target/kstreams-assignor-plugin-0.1.0.jar, built when missing or with
#     --rebuild-plugin (mvn -q -B -f plugin/pom.xml package, which builds the native library);
#     KSTREAMS_PLUGIN_JAR takes another plugin jar; KSTREAMS_ASSIGNOR_NATIVE_LIBRARY points the
#     assignor at another native library.
#   compat/bench-streams.sh chart OUT.svg TSV...
#       Only the chart, from the given tables.
#   compat/bench-streams.sh jmh [JMH ARGS]
#       The same calls under JMH's own runner (AssignBenchmark: one assignor and cell at a time,
#       SampleTime percentiles, no CPU time or quality), e.g. jmh -p size=100x1000 -p kase=warm
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
module="$here/bench-streams"
jar="$module/target/kstreams-bench-streams.jar"
plugin="${KSTREAMS_PLUGIN_JAR:-$repo/plugin/target/kstreams-assignor-plugin-0.1.0.jar}"

chart() {
    local svg="$1"
    shift
    python3 - "$svg" "$@" <<'PY'
import csv, math, sys
out, files = sys.argv[1], sys.argv[2:]
rows = []
for f in files:
    with open(f) as fh:
        rows += [r for r in csv.DictReader(fh, delimiter="\t")]
sizes = sorted({(int(r["members"]), int(r["tasks"])) for r in rows}, key=lambda s: (s[1], s[0]))
shapes = sorted({int(r["per_process"]) for r in rows})
cases = [c for c in ("cold", "warm", "warm-offsets", "warm-own") if any(r["case"] == c for r in rows)]
colors = {"sticky": "#c0392b", "optimized": "#2471a3"}
dashes = {"cold": "6,4", "warm": "2,3", "warm-offsets": "", "warm-own": "10,3,2,3"}
vals = [float(r["median_ms"]) for r in rows if float(r["median_ms"]) > 0]
lo = 10 ** math.floor(math.log10(min(vals)))
hi = 10 ** math.ceil(math.log10(max(vals)))
pw, ph, ml, mt, mb = 330, 230, 58, 34, 46
W = ml + len(shapes) * (pw + 20) + 190
H = mt + ph + mb
def y(v):
    return mt + ph - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * ph
def fmt(n):
    return f"{n:,}"
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
       f'<rect width="{W}" height="{H}" fill="white"/>']
for i, pp in enumerate(shapes):
    x0 = ml + i * (pw + 20)
    svg.append(f'<text x="{x0 + pw / 2}" y="16" text-anchor="middle" font-weight="bold">{pp} member{"s" if pp > 1 else ""} per process: median ms per assign() call</text>')
    svg.append(f'<rect x="{x0}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    d = lo
    while d <= hi * 1.0001:
        yy = y(d)
        svg.append(f'<line x1="{x0}" y1="{yy:.1f}" x2="{x0 + pw}" y2="{yy:.1f}" stroke="#ddd"/>')
        if i == 0:
            svg.append(f'<text x="{x0 - 4}" y="{yy + 4:.1f}" text-anchor="end">{d:g}</text>')
        d *= 10
    def x(k):
        return x0 + (k + 0.5) * pw / len(sizes)
    for k, (m, t) in enumerate(sizes):
        svg.append(f'<text x="{x(k):.1f}" y="{mt + ph + 16}" text-anchor="middle">{fmt(m)} ×</text>')
        svg.append(f'<text x="{x(k):.1f}" y="{mt + ph + 30}" text-anchor="middle">{fmt(t)}</text>')
    for a in ("sticky", "optimized"):
        for c in cases:
            pts = []
            for k, s in enumerate(sizes):
                for r in rows:
                    if (int(r["members"]), int(r["tasks"])) == s and int(r["per_process"]) == pp and r["case"] == c and r["assignor"] == a and float(r["median_ms"]) > 0:
                        pts.append((x(k), y(float(r["median_ms"])), int(r["failed"]) > 0))
            if not pts:
                continue
            dash = f' stroke-dasharray="{dashes[c]}"' if dashes[c] else ""
            svg.append(f'<polyline fill="none" stroke="{colors[a]}" stroke-width="1.6"{dash} points="' + " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in pts) + '"/>')
            for px, py, failed in pts:
                if failed:
                    svg.append(f'<path d="M{px - 5:.1f},{py - 5:.1f}L{px + 5:.1f},{py + 5:.1f}M{px - 5:.1f},{py + 5:.1f}L{px + 5:.1f},{py - 5:.1f}" stroke="{colors[a]}" stroke-width="2"/>')
                else:
                    svg.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.2" fill="{colors[a]}"/>')
lx = ml + len(shapes) * (pw + 20)
ly = mt + 6
for a in ("sticky", "optimized"):
    for c in cases:
        dash = f' stroke-dasharray="{dashes[c]}"' if dashes[c] else ""
        svg.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 26}" y2="{ly}" stroke="{colors[a]}" stroke-width="1.6"{dash}/>')
        svg.append(f'<text x="{lx + 32}" y="{ly + 4}">{a}, {c}</text>')
        ly += 16
svg.append(f'<text x="{lx}" y="{ly + 10}" fill="#555">log scale, ms</text>')
if any(int(r["failed"]) > 0 for r in rows):
    svg.append(f'<text x="{lx}" y="{ly + 28}" fill="#555">×: calls failed (past the</text>')
    svg.append(f'<text x="{lx}" y="{ly + 42}" fill="#555">deadline), timed until then</text>')
svg.append("</svg>")
with open(out, "w") as fh:
    fh.write("\n".join(svg) + "\n")
PY
}

build() {
    if [[ ! -f "$plugin" ]]; then
        echo "building $plugin" >&2
        mvn -q -B -Dstyle.color=never -f "$repo/plugin/pom.xml" package >&2
    fi
    if [[ ! -f "$jar" ]] || [[ -n "$(find "$module/pom.xml" "$module/src" -newer "$jar" -print -quit)" ]]; then
        echo "building $jar" >&2
        mvn -q -B -Dstyle.color=never -f "$module/pom.xml" package -DskipTests >&2
    fi
    classpath="$jar:$(cat "$module/target/classpath.txt"):$plugin"
}

if [[ "${1:-}" == chart ]]; then
    shift
    [[ $# -ge 2 ]] || { sed -n '2,26p' "$0" >&2; exit 2; }
    chart "$@"
    exit 0
fi
if [[ "${1:-}" == jmh ]]; then
    shift
    build
    exec java -cp "$classpath" org.openjdk.jmh.Main AssignBenchmark "$@"
fi

preset=full
out="$repo/target/bench-streams"
rebuild=0
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) preset=quick; shift ;;
        --full) preset=full; shift ;;
        --huge) preset=huge; shift ;;
        --out) out="$2"; shift 2 ;;
        --rebuild-plugin) rebuild=1; shift ;;
        --) shift; extra=("$@"); break ;;
        *) sed -n '2,26p' "$0" >&2; exit 2 ;;
    esac
done

case "$preset" in
    quick) args=(--sizes 10x100,100x1000 --per-process 1,4 --cases cold,warm,warm-offsets --own-at none
                 --warmup 2 --warmup-ms 300 --iterations 5 --first 2); heap=1g ;;
    full) args=(--sizes 10x100,100x1000,1000x10000 --per-process 1,4 --cases cold,warm,warm-offsets
                --own-at 1000x10000 --warmup 5 --warmup-ms 2000 --iterations 21 --first 5); heap=4g ;;
    huge) args=(--sizes 1000x100000 --per-process 1,4 --cases cold,warm,warm-offsets --own-at none
                --warmup 2 --iterations 7 --first 2); heap=8g ;;
esac
if [[ ${#extra[@]} -gt 0 ]]; then
    args=("${extra[@]}")
fi

if [[ "$rebuild" == 1 ]]; then
    rm -f "$plugin"
fi
if [[ -n "${KSTREAMS_PLUGIN_JAR:-}" && ! -f "$plugin" ]]; then
    echo "no plugin jar at $plugin" >&2
    exit 2
fi
build

mkdir -p "$out"
native=()
if [[ -n "${KSTREAMS_ASSIGNOR_NATIVE_LIBRARY:-}" ]]; then
    native=("-Dkstreams.assignor.native.library=$KSTREAMS_ASSIGNOR_NATIVE_LIBRARY")
fi
{
    echo "plugin jar $plugin of $(date -u -r "$plugin" '+%Y-%m-%d %H:%M UTC'); this tree at commit $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- src bridge plugin Cargo.toml Cargo.lock || echo ' (engine files modified)'); $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
    echo
} > "$out/$preset.md.head"
java "-Xmx$heap" "${native[@]}" -cp "$classpath" io.kstreamsassignor.bench.streams.CoordinatorBench \
    "${args[@]}" --out "$out/$preset.md.body" --tsv "$out/$preset.tsv" > /dev/null
cat "$out/$preset.md.head" "$out/$preset.md.body" > "$out/$preset.md"
echo >> "$out/$preset.md"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" >> "$out/$preset.md"
rm -f "$out/$preset.md.head" "$out/$preset.md.body"
cat "$out/$preset.md"
chart "$out/chart.svg" "$out"/*.tsv
echo "wrote $out/$preset.md, $out/$preset.tsv and $out/chart.svg" >&2

if [[ "$preset" == quick ]]; then
    # The CI check: every row there, each with its median (2 sizes x 2 shapes x 3 cases x 2 assignors).
    rows=$(grep -cE '^\| [0-9,]+ × [0-9,]+ \| [0-9]+ \| (cold|warm|warm-offsets) \| (sticky|optimized) \| [0-9.]+' "$out/quick.md" || true)
    if [[ "$rows" != 24 ]]; then
        echo "bench-streams: expected 24 complete rows, found $rows" >&2
        exit 1
    fi
    if [[ "$(tail -n +2 "$out/quick.tsv" | wc -l)" != 24 ]]; then
        echo "bench-streams: expected 24 rows in $out/quick.tsv" >&2
        exit 1
    fi
    echo "bench-streams: the table is complete (24 rows)" >&2
fi
