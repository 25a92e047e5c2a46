//! The scaling chart: CPU time per assign of `optimized` and the port of Kafka's
//! high-availability assignor over the grid of `benches/scale.rs`, drawn log-log as SVG.
//!
//! ```text
//! cargo run --release --example scale_chart -- docs/scale.svg          # the default grid
//! cargo run --release --example scale_chart -- docs/scale.svg --full   # and the large sizes
//! cargo run --release --example scale_chart -- --only 10000 1000000    # one size, optimized, with peak RSS
//! cargo run --release --example scale_chart -- --only 1000 10000 ha    # one size, the port
//! ```
//!
//! Each point is the median of three batches of assigns (one assign per batch for the large
//! sizes, the first one included where it takes a second or more), timed as the thread's CPU time (`/proc/thread-self/schedstat`, wall time where that is missing). The
//! table of the points is printed as Markdown.

use std::fmt::Write as _;
use std::time::Instant;

use kstreams_assignor::engine::{AssignmentInput, AssignorKind, assign, testdata};

/// (clients, stateful tasks): `benches/scale.rs`'s default grid.
const GRID: [(usize, usize); 5] = [(10, 1_000), (100, 1_000), (1_000, 1_000), (100, 10_000), (1_000, 10_000)];
/// The sizes `--full` adds.
const FULL: [(usize, usize); 9] = [
    (10, 10_000),
    (10, 100_000),
    (100, 100_000),
    (1_000, 100_000),
    (10_000, 10_000),
    (10_000, 100_000),
    (100, 1_000_000),
    (1_000, 1_000_000),
    (10_000, 1_000_000),
];
/// The port's largest size (clients × tasks): beyond it one assign takes minutes.
const PORT_MAX_WORK: usize = 100_000_000;

const ASSIGNORS: [(&str, AssignorKind, &str); 2] =
    [("optimized", AssignorKind::Optimized, "#1f77b4"), ("Kafka HA port", AssignorKind::HighAvailability, "#d62728")];

/// CPU time of this thread so far, in seconds.
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()))
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns as f64 / 1e9)
}

/// Median CPU seconds of one assign, over three batches of assigns that each take at least
/// 0.2 s (the clock may tick in milliseconds).
fn measure(kind: AssignorKind, clients: usize, tasks: usize) -> f64 {
    measure_input(kind, &testdata::steady_state(1, clients, 4, tasks, 1).input)
}

/// [`measure`] on a given input.
fn measure_input(kind: AssignorKind, input: &AssignmentInput) -> f64 {
    let wall = Instant::now();
    let run = |reps: usize| {
        let before = cpu_seconds(wall);
        for _ in 0..reps {
            let out = assign(kind, std::hint::black_box(input)).expect("the grid's inputs are valid");
            std::hint::black_box(out);
        }
        (cpu_seconds(wall) - before) / reps as f64
    };
    let first = run(1);
    let reps = (0.2 / first.max(1e-4)).ceil().clamp(1.0, 1_000.0) as usize;
    // A first assign of a second or more counts as one of the three.
    let mut times = if first >= 1.0 { vec![first, run(1), run(1)] } else { vec![run(reps), run(reps), run(reps)] };
    times.sort_by(f64::total_cmp);
    times[1]
}

/// Peak resident set of this process (`VmHWM`), in MB.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<f64>().ok().map(|kb| kb / 1024.0)
}

/// One line per assignor and client count; x: stateful tasks, y: ms per assign, both log10.
fn svg(points: &[(&str, &str, usize, usize, f64)]) -> String {
    let (w, h, left, right, top, bottom) = (800.0, 480.0, 70.0, 240.0, 30.0, 50.0);
    let xs = points.iter().map(|p| (p.3 as f64).log10());
    let ys = points.iter().map(|p| (p.4 * 1e3).max(1e-3).log10());
    let (x0, x1) = (xs.clone().fold(f64::MAX, f64::min).floor(), xs.fold(f64::MIN, f64::max).ceil());
    let (y0, y1) = (ys.clone().fold(f64::MAX, f64::min).floor(), ys.fold(f64::MIN, f64::max).ceil());
    let px = |x: f64| left + (x - x0) / (x1 - x0).max(1.0) * (w - left - right);
    let py = |y: f64| h - bottom - (y - y0) / (y1 - y0).max(1.0) * (h - top - bottom);
    let mut out = String::new();
    let _ = writeln!(out, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#);
    let _ = writeln!(out, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(out, r#"<text x="{left}" y="18">CPU time per assign (1 standby, 4 threads per client), log-log</text>"#);
    for e in x0 as i32..=x1 as i32 {
        let x = px(f64::from(e));
        let _ = writeln!(out, r##"<line x1="{x}" y1="{top}" x2="{x}" y2="{}" stroke="#ddd"/>"##, h - bottom);
        let _ = writeln!(out, r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#, h - bottom + 16.0, label(10f64.powi(e)));
    }
    for e in y0 as i32..=y1 as i32 {
        let y = py(f64::from(e));
        let _ = writeln!(out, r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/>"##, w - right);
        let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="end">{} ms</text>"#, left - 6.0, y + 4.0, label(10f64.powi(e)));
    }
    let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="middle">stateful tasks</text>"#, (left + w - right) / 2.0, h - 12.0);
    let mut series: Vec<(&str, &str, usize)> = points.iter().map(|p| (p.0, p.1, p.2)).collect();
    series.sort_unstable();
    series.dedup();
    let dashes = ["", "6,3", "2,3", "10,3,2,3"];
    for (i, &(name, color, clients)) in series.iter().enumerate() {
        let mut line: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| (p.0, p.2) == (name, clients))
            .map(|p| (px((p.3 as f64).log10()), py((p.4 * 1e3).max(1e-3).log10())))
            .collect();
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        let dash = dashes[(clients.max(1).ilog10() as usize) % dashes.len()];
        let coords: Vec<String> = line.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(out, r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#, coords.join(" "));
        for (x, y) in &line {
            let _ = writeln!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#);
        }
        let ly = top + 10.0 + 18.0 * i as f64;
        let lx = w - right + 10.0;
        let _ = writeln!(out, r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#, lx + 24.0);
        let _ = writeln!(out, r#"<text x="{}" y="{}">{name}, {} clients</text>"#, lx + 30.0, ly + 4.0, label(clients as f64));
    }
    out.push_str("</svg>\n");
    out
}

/// 1,000 as "1,000"; fractions as "0.01".
fn label(v: f64) -> String {
    if v < 1.0 {
        return format!("{v}");
    }
    let digits = format!("{}", v.round() as u64);
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--only") {
        let number = |j: usize| args.get(j).and_then(|a| a.parse::<usize>().ok()).expect("--only CLIENTS TASKS");
        let (clients, tasks) = (number(i + 1), number(i + 2));
        let (name, kind) = if args.get(i + 3).is_some_and(|a| a == "ha") {
            ("Kafka HA port", AssignorKind::HighAvailability)
        } else {
            ("optimized", AssignorKind::Optimized)
        };
        let input = testdata::steady_state(1, clients, 4, tasks, 1).input;
        let built = peak_rss_mb();
        let secs = measure_input(kind, &input);
        let mb = |v: Option<f64>| v.map_or_else(|| "unknown".to_owned(), |mb| format!("{mb:.0} MB"));
        let (built, after) = (mb(built), mb(peak_rss_mb()));
        println!("{name} {clients} clients × {tasks} tasks: {:.1} ms per assign, peak RSS {after} (with the input built: {built})", secs * 1e3);
        return;
    }
    let full = args.iter().any(|a| a == "--full");
    let path = args.iter().find(|a| !a.starts_with("--")).cloned().unwrap_or_else(|| "docs/scale.svg".to_owned());
    let mut sizes: Vec<(usize, usize)> = GRID.iter().chain(if full { &FULL[..] } else { &[] }).copied().collect();
    sizes.sort_unstable();
    let mut points = Vec::new();
    println!("| clients × tasks | {} | {} | µs per task (optimized) |", ASSIGNORS[0].0, ASSIGNORS[1].0);
    println!("|---|---:|---:|---:|");
    for &(clients, tasks) in &sizes {
        let mut row = Vec::new();
        for &(name, kind, color) in &ASSIGNORS {
            if kind == AssignorKind::HighAvailability && clients * tasks > PORT_MAX_WORK {
                row.push("".to_owned());
                continue;
            }
            let secs = measure(kind, clients, tasks);
            points.push((name, color, clients, tasks, secs));
            row.push(format!("{:.2} ms", secs * 1e3));
        }
        let optimized = points.iter().rev().find(|p| p.0 == ASSIGNORS[0].0).map_or(0.0, |p| p.4);
        println!("| {} × {} | {} | {} | {:.2} |", label(clients as f64), label(tasks as f64), row[0], row[1], optimized * 1e6 / tasks as f64);
    }
    std::fs::write(&path, svg(&points)).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    println!("\nchart written to {path}");
}
