//! Self-contained HTML reports: pages that open from disk, their style inline, nothing loaded
//! from elsewhere (no script, font or address; a content security policy forbids any fetch).
//!
//! ```
//! use kstreams_assignor::engine::AssignorKind;
//! use kstreams_assignor::{report, sim};
//!
//! let scenario = sim::builtin("scale-out", 0).unwrap();
//! let run = sim::run(AssignorKind::HighAvailability.assignor(), &scenario, &sim::SimConfig::default()).unwrap();
//! let html = report::simulate_html(&run);
//! assert!(html.starts_with("<!DOCTYPE html>") && html.contains("id=\"rounds\""));
//! assert!(!html.contains("http://") && !html.contains("https://"));
//! ```
//!
//! The files, each using only those above it:
//!
//! | file | holds |
//! | --- | --- |
//! | `html.rs` | [`escape`], the page skeleton and its style sheet (the live `ui` page's colours), table helpers |
//! | `simulate.rs` | `simulate --html`: one run ([`simulate_html`], [`streams_html`]), two assignors ([`compare_html`]), both protocols ([`protocols_html`]) |
//! | `assign.rs` | `assign --html`: the assignment as a grid against the previous owners ([`assign_html`]) |

mod assign;
mod html;
mod simulate;

pub use assign::assign_html;
pub use html::escape;
pub use simulate::{compare_html, protocols_html, simulate_html, streams_html};

#[cfg(test)]
mod tests;
