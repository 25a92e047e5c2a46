//! The pieces every report page is made of: escaping, the page skeleton with its inline style
//! sheet, and small table helpers. Nothing here loads anything: a page is one file that opens
//! from disk, its style inline, no script, and a content security policy that forbids any fetch.

use std::fmt::Write;

/// `text` safe to put between tags or inside a quoted attribute value: `&`, `<`, `>`, `"` and
/// `'` become character references.
///
/// ```
/// use kstreams_assignor::report::escape;
///
/// assert_eq!(escape(r#"<a href="x">Tom & 'Jerry'</a>"#), "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The style sheet: the colours and cell classes of the live `ui` page (`src/views/ui/assets`),
/// for a page that does not change.
const CSS: &str = r#"
:root {
  --active: #2563eb; --standby: #64748b; --warmup: #d97706; --moved: #16a34a; --bad: #dc2626;
  --bg: #f8fafc; --panel: #fff; --line: #e2e8f0; --text: #0f172a; --muted: #64748b;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
header { display: flex; align-items: center; justify-content: space-between; gap: 1em;
  padding: .6em 1em; background: #0f172a; color: #f8fafc; }
h1 { font-size: 1.2em; margin: 0; font-weight: 600; }
h2 { font-size: 1em; margin: 0 0 .5em; }
.kind { font-size: .75em; font-weight: 400; padding: .1em .5em; border-radius: 1em; background: #334155; margin-left: .4em; }
.status { color: #cbd5e1; font-size: .85em; }
main { display: block; padding: 1em; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .8em; margin-bottom: 1em;
  max-width: 100%; overflow-x: auto; }
.legend { color: var(--muted); margin-bottom: .6em; display: flex; flex-wrap: wrap; align-items: center; gap: .3em .5em; }
.figures { display: flex; flex-wrap: wrap; gap: .5em 1.5em; margin: 0; }
.figures div { min-width: 9em; }
.figures dt { color: var(--muted); font-size: .85em; }
.figures dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; }
table.data { font-size: .92em; }
table.data th, table.data td { border-bottom: 1px solid var(--line); padding: .2em .4em; text-align: right; white-space: nowrap;
  font-variant-numeric: tabular-nums; }
table.data thead th { background: #f1f5f9; font-weight: 600; white-space: normal; vertical-align: bottom; }
table.data th.name, table.data td.name { text-align: left; }
table.data tfoot td, table.data tfoot th { font-weight: 600; border-top: 2px solid var(--text); }
table.data td.better, .legend .better { background: #dcfce7; }
table.data td.worse, .legend .worse { background: #fee2e2; }
.legend .better, .legend .worse { padding: 0 .3em; border-radius: 3px; }
#rounds td.name { white-space: normal; min-width: 12em; }
table.data tr.probe td.probe { color: var(--warmup); font-weight: 600; }
.bar { display: inline-block; height: .55em; background: var(--active); border-radius: 2px; margin-right: .3em; vertical-align: middle; }
.bar.lag { background: var(--warmup); }
#grid th, #grid td { border: 1px solid var(--line); padding: 0; text-align: center; }
#grid thead th { background: #f1f5f9; font-weight: 600; padding: .2em .3em; }
#grid thead tr:nth-child(2) th { font-weight: 400; color: var(--muted); }
#grid th.who { text-align: left; padding: .15em .5em; font-weight: 400; white-space: nowrap; background: #fff; }
#grid td.total { padding: 0 .4em; color: var(--muted); min-width: 2.2em; }
#grid tfoot td, #grid tfoot th { color: var(--muted); font-size: .85em; }
.cell { display: inline-block; position: relative; width: 1.7em; height: 1.5em; line-height: 1.5em; text-align: center;
  font-size: .8em; font-weight: 600; border-radius: 3px; color: #fff; overflow: hidden; vertical-align: middle; }
#grid td .cell { margin: 1px; }
.role-active { background: var(--active); }
.role-standby { background: var(--standby); }
.role-spare { background: #cbd5e1; color: #334155; }
.role-warmup { background: #fde68a; color: #78350f; }
.cell.moved { outline: 2px solid var(--moved); outline-offset: -2px; }
.legend .cell.moved { background: var(--active); }
.cell.fresh { box-shadow: inset 0 -4px 0 var(--warmup); }
.cell.was-active { outline: 2px dashed var(--active); outline-offset: -1px; }
.cell.left { background: none; color: var(--active); border: 1px dashed var(--active); }
.cell.missing { background: var(--bad); }
.note { color: var(--muted); font-size: .9em; margin: .4em 0; }
ul.targets { list-style: none; padding: 0; margin: 0; }
ul.targets li { padding: .15em 0; }
.holds { color: var(--moved); font-weight: 600; } .fails { color: var(--bad); font-weight: 600; }
svg { max-width: 100%; height: auto; }
footer { color: var(--muted); padding: 0 1em 1em; font-size: .85em; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
"#;

/// A whole page: `title` (plain text) in the head and the header, `kind` (plain text) as the
/// header's badge, `body` (HTML) in `<main>`.
pub(super) fn page(title: &str, kind: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + CSS.len() + 1024);
    let title = escape(title);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // Nothing to fetch: no script, no font, no image but inline ones.
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{title} · kstreams-assignor</title>");
    out.push_str("<link rel=\"icon\" href=\"data:,\">\n<style>");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n");
    let _ = writeln!(
        out,
        "<header><h1>{title} <span class=\"kind\">{}</span></h1><div class=\"status\">kstreams-assignor {}</div></header>",
        escape(kind),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("<main>\n");
    out.push_str(body);
    out.push_str(
        "</main>\n<footer>A static report of kstreams-assignor: one file, nothing loaded from elsewhere.</footer>\n</body>\n</html>\n",
    );
    out
}

/// An SVG document of [`render_svg`](crate::sim::render_svg) as an element of an HTML page: HTML
/// needs no namespace declaration on inline SVG, and the page then names no address at all.
pub(super) fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

/// `<section class="panel">` with a heading (plain text) around `inner` (HTML); `id` names it.
pub(super) fn panel(id: &str, heading: &str, inner: &str) -> String {
    format!("<section class=\"panel\" id=\"{}\">\n<h2>{}</h2>\n{inner}</section>\n", escape(id), escape(heading))
}

/// A list of figures: each a label (plain text), its `data-key` and its value (plain text).
pub(super) fn figures(items: &[(&str, &str, String)]) -> String {
    let mut out = String::from("<dl class=\"figures\">\n");
    for (label, key, value) in items {
        let _ = writeln!(out, "<div><dt>{}</dt><dd data-key=\"{}\">{}</dd></div>", escape(label), escape(key), escape(value));
    }
    out.push_str("</dl>\n");
    out
}

/// A number cell: `text` shown, `value` in `data-value` for a script to read, `key` in
/// `data-key`, `class` (may be empty) on the cell.
pub(super) fn num_cell(key: &str, value: impl std::fmt::Display, text: &str, class: &str) -> String {
    let class = if class.is_empty() { String::new() } else { format!(" class=\"{}\"", escape(class)) };
    format!("<td data-key=\"{}\" data-value=\"{}\"{class}>{}</td>", escape(key), escape(&value.to_string()), escape(text))
}

/// A horizontal bar `fraction` (0 to 1) of 6em wide, before a number.
pub(super) fn bar(fraction: f64, class: &str) -> String {
    if fraction.is_nan() || fraction <= 0.0 {
        return String::new();
    }
    let em = (fraction.min(1.0) * 6.0).max(0.15);
    format!("<i class=\"bar {}\" style=\"width:{em:.2}em\"></i>", escape(class))
}
