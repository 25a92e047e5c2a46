//! What `serve` serves: `/metrics`, the home page of every group, and each group's `ui` page.
//!
//! | path | what |
//! |---|---|
//! | `/metrics` | every metric family ([`Metrics::encode`](super::metrics::Metrics::encode)): OpenMetrics when `Accept` asks for it, else the text format 0.0.4 |
//! | `/` | the home page (`home.html`, `home.js`, `ui.css`, compiled into the binary) |
//! | `/groups.json` | the home's state: a row per group |
//! | `/events` | the home's server-sent events: `snapshot`, then an `update` per row changed or removed |
//! | `/groups/NAME/` | the group's `ui` page, its `state.json` and `events` beside it (NAME percent-encoded) |
//!
//! The home's rows are [`Home`](super::home::Home)'s.

use std::sync::Arc;

use super::fleet::Fleet;
use super::home::decode_segment;
use crate::views::ui::http::{Request, Response};
use crate::views::ui::server::{Feed, GroupPage, Route, STYLE, Site};

const HOME: &str = include_str!("assets/home.html");
const HOME_SCRIPT: &str = include_str!("assets/home.js");
const HOME_STYLE: &str = include_str!("assets/home.css");

/// `serve`'s site (see the [module docs](self)).
pub struct ServeSite(pub Arc<Fleet>);

impl Site for ServeSite {
    fn route(&self, request: &Request) -> Route {
        let fleet = &self.0;
        let answer = |r| Route::Answer(r);
        match request.path.as_str() {
            "/metrics" => {
                let (text, content_type) = fleet.metrics().encode(request.header("accept"));
                answer(Response::new(200, content_type, text))
            }
            "/" | "/index.html" => answer(Response::new(200, "text/html; charset=utf-8", HOME)),
            "/home.js" => answer(Response::new(
                200,
                "text/javascript; charset=utf-8",
                HOME_SCRIPT,
            )),
            "/ui.css" => answer(Response::new(
                200,
                "text/css; charset=utf-8",
                format!("{STYLE}{HOME_STYLE}"),
            )),
            "/groups.json" => answer(Response::new(
                200,
                "application/json",
                fleet.home().snapshot().1,
            )),
            "/events" => Route::Events(fleet.home().clone()),
            path => {
                let Some(rest) = path.strip_prefix("/groups/") else {
                    return answer(not_found());
                };
                let (name, inner) = rest
                    .split_once('/')
                    .map_or((rest, None), |(n, r)| (n, Some(r)));
                let Some(page) = decode_segment(name).and_then(|g| fleet.page(&g)) else {
                    return answer(Response::text(
                        404,
                        "no such group is followed: the groups are listed at /",
                    ));
                };
                match inner {
                    // The page names its files relatively: it must be served under a slash.
                    None => answer(
                        Response::text(303, "the group's page")
                            .with_header("Location", format!("/groups/{name}/")),
                    ),
                    Some(inner) => GroupPage(page)
                        .route_relative(inner)
                        .unwrap_or_else(|| answer(not_found())),
                }
            }
        }
    }
}

fn not_found() -> Response {
    Response::text(
        404,
        "not found: the groups are at /, the metrics at /metrics",
    )
}
