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

/// The style sheet: the pages' shared style (`page.css`, which the live `ui` page also serves)
/// and the reports' own rules.
const CSS: [&str; 2] = [include_str!("page.css"), include_str!("report.css")];

/// A whole page: `title` (plain text) in the head and the header, `kind` (plain text) as the
/// header's badge, `body` (HTML) in `<main>`.
pub(super) fn page(title: &str, kind: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + CSS[0].len() + CSS[1].len() + 1024);
    let title = escape(title);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // Nothing to fetch: no script, no font, no image but inline ones.
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{title} · kstreams-assignor</title>");
    out.push_str("<link rel=\"icon\" href=\"data:,\">\n<style>");
    CSS.iter().for_each(|css| out.push_str(css));
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

/// Header cells, one `<th>` per heading (plain text), appended to `out`.
pub(super) fn header_cells(out: &mut String, headings: &[&str]) {
    for h in headings {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
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
