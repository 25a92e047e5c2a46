//! A small self-contained SVG plot of runs: load spread and restoring lag per rebalance.

use std::fmt::Write;

use super::report::{Report, Round};

const W: f64 = 760.0;
const PANEL_H: f64 = 190.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const GAP: f64 = 60.0;
const COLOURS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn panel(out: &mut String, reports: &[&Report], y0: f64, title: &str, value: &dyn Fn(&Round) -> f64) {
    let rounds = reports.iter().map(|r| r.rounds.len()).max().unwrap_or(0).max(1);
    let max = reports.iter().flat_map(|r| r.rounds.iter().map(value)).fold(0.0_f64, f64::max).max(1e-9);
    let x = |i: usize| LEFT + (W - LEFT - RIGHT) * (i as f64) / (rounds.max(2) - 1) as f64;
    let y = |v: f64| y0 + PANEL_H - PANEL_H * v / max;
    let _ = writeln!(out, r#"<text x="{LEFT}" y="{}" font-size="13" font-weight="bold">{}</text>"#, y0 - 8.0, escape(title));
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{y0}" width="{}" height="{PANEL_H}" fill="none" stroke="#999"/>"##,
        W - LEFT - RIGHT
    );
    for frac in [0.0, 0.5, 1.0] {
        let v = max * frac;
        let label = if max >= 1000.0 { format!("{:.0}", v) } else { format!("{:.2}", v) };
        let _ = writeln!(out, r##"<text x="{}" y="{}" font-size="10" text-anchor="end" fill="#555">{label}</text>"##, LEFT - 6.0, y(v) + 3.0);
    }
    for (i, r) in reports.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<String> = r.rounds.iter().enumerate().map(|(k, rd)| format!("{:.1},{:.1}", x(k), y(value(rd)))).collect();
        let _ = writeln!(out, r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#, points.join(" "));
        for p in &points {
            let (px, py) = p.split_once(',').expect("point");
            let _ = writeln!(out, r#"<circle cx="{px}" cy="{py}" r="2.5" fill="{colour}"/>"#);
        }
    }
    let every = rounds.div_ceil(20).max(1);
    for k in (0..rounds).step_by(every) {
        let _ = writeln!(out, r##"<text x="{:.1}" y="{}" font-size="10" text-anchor="middle" fill="#555">{}</text>"##, x(k), y0 + PANEL_H + 13.0, k + 1);
    }
    let _ = writeln!(out, r##"<text x="{}" y="{}" font-size="10" text-anchor="end" fill="#555">rebalance</text>"##, W - RIGHT, y0 + PANEL_H + 26.0);
}

/// Plots one or more runs of the same scenario (one colour per assignor).
pub fn render_svg(reports: &[&Report]) -> String {
    let h = TOP + 3.0 * PANEL_H + 2.0 * GAP + 30.0;
    let mut out = String::new();
    let _ = writeln!(out, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif">"#);
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let title = reports.first().map_or(String::new(), |r| format!("scenario {}", r.scenario));
    let _ = writeln!(out, r#"<text x="{LEFT}" y="18" font-size="15" font-weight="bold">{}</text>"#, escape(&title));
    for (i, r) in reports.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<text x="{}" y="18" font-size="12" fill="{}">■ {}</text>"#,
            W - RIGHT - 230.0 + 120.0 * (i as f64),
            COLOURS[i % COLOURS.len()],
            escape(&r.assignor)
        );
    }
    panel(&mut out, reports, TOP, "stateful load spread (max − min stateful active tasks per thread)", &|r| r.stateful_load_spread);
    panel(&mut out, reports, TOP + PANEL_H + GAP, "lag to restore on active tasks (records)", &|r| r.restoring_lag as f64);
    panel(&mut out, reports, TOP + 2.0 * (PANEL_H + GAP), "warm-up replicas", &|r| r.warmups as f64);
    out.push_str("</svg>\n");
    out
}
