use super::assign::{Previous, assign_html};
use super::html::escape;
use super::simulate::{Sums, compare_html, protocols_html, simulate_html};
use crate::engine::{self, AssignmentInput, AssignorKind};
use crate::sim::{self, SimConfig};
use crate::wire::TaskId;

/// The `data-value`s of `key` in `html`, in order.
fn values(html: &str, key: &str) -> Vec<f64> {
    let needle = format!("data-key=\"{key}\" data-value=\"");
    html.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

/// Nothing a browser would fetch: no address, and every `src`/`href` a `data:` one.
fn loads_nothing(html: &str) {
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("<script"));
    for attr in ["src=\"", "href=\""] {
        for (i, _) in html.match_indices(attr) {
            assert!(html[i + attr.len()..].starts_with("data:"), "{}", &html[i..i + 40]);
        }
    }
}

#[test]
fn escaping_covers_markup_and_both_quotes() {
    assert_eq!(escape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    assert_eq!(escape("0_1 · ünïcode"), "0_1 · ünïcode");
    assert_eq!(escape("&amp;"), "&amp;amp;", "escaped once more, never taken as markup");
}

#[test]
fn a_named_topology_or_a_client_tag_with_markup_comes_out_escaped() {
    let client = engine::ClientInput::new(crate::wire::ProcessId::NIL, 1).with_client_tags([("zone", "<script>\"'")]);
    let input = AssignmentInput::new().with_client(client).with_stateless_tasks([TaskId::named("<b>x</b>", 3, 0)]);
    let out = engine::assign(AssignorKind::HighAvailability, &input).unwrap();
    let html = assign_html(&input, &out);
    assert!(html.contains("&lt;b&gt;x&lt;/b&gt; · sub-topology 3") && !html.contains("<b>x</b>"), "{html}");
    assert!(html.contains("zone=&lt;script&gt;&quot;&#39;") && !html.contains("<script"));
    loads_nothing(&html);
}

fn group() -> AssignmentInput {
    serde_json::from_str(include_str!("../../fixtures/assign/group.json")).unwrap()
}

#[test]
fn the_grid_marks_the_task_that_moved_and_where_it_was() {
    // Two clients ran 0_0..0_3; a third, empty one joins and takes its share.
    let input: AssignmentInput = serde_json::from_str(
        r#"{
        "configs": {"num.standby.replicas": 0},
        "clients": [
            {"processId": "00000000-0000-0000-0000-000000000001", "capacity": 1, "taskOffsetSums": {"0_0": -2, "0_1": -2}},
            {"processId": "00000000-0000-0000-0000-000000000002", "capacity": 1, "taskOffsetSums": {"0_2": -2, "0_3": -2}},
            {"processId": "00000000-0000-0000-0000-000000000003", "capacity": 1}
        ],
        "statelessTasks": ["0_0", "0_1", "0_2", "0_3", "1_0"],
        "changelogEndOffsetSums": {}
    }"#,
    )
    .unwrap();
    let out = engine::assign(AssignorKind::HighAvailability, &input).unwrap();
    let previous = Previous::of(&input);
    let moved: Vec<(String, String)> = out
        .clients
        .iter()
        .flat_map(|c| {
            c.active_tasks.iter().filter(|t| previous.moved_here(&c.process_id, t)).map(|t| (c.process_id.to_string(), t.to_string()))
        })
        .collect();
    assert!(!moved.is_empty(), "the new client takes a task that ran elsewhere");
    let html = assign_html(&input, &out);
    let body = &html[html.find("<tbody>").unwrap()..html.find("</tbody>").unwrap()];
    assert_eq!(body.matches("class=\"cell role-active moved\"").count(), moved.len());
    let left = body.matches("class=\"cell left\"").count() + body.matches(" was-active").count();
    assert_eq!(left, moved.len(), "each moved task leaves a mark where it was");
    // 1_0 ran nowhere: active somewhere, not marked as moved.
    let new = out.clients.iter().find(|c| c.active_tasks.contains(&TaskId::new(1, 0))).unwrap();
    let row = &html[html.find(&format!("data-process-id=\"{}\"", new.process_id)).unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains(
            "data-task=\"1_0\" data-role=\"active\"><span class=\"cell role-active\" title=\"task 1_0: active (no client ran it before)\""
        ),
        "{row}"
    );
    assert_eq!(html.matches("<tr class=\"member\"").count(), 3);
    assert!(html.contains(&format!("data-key=\"moved\">{}</dd>", moved.len())));
    loads_nothing(&html);
}

#[test]
fn the_grid_shows_every_copy_of_the_fixture_group() {
    let input = group();
    let out = engine::assign(AssignorKind::HighAvailability, &input).unwrap();
    let html = assign_html(&input, &out);
    for c in &out.clients {
        let row = &html[html.find(&format!("data-process-id=\"{}\"", c.process_id)).unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert_eq!(row.matches("data-role=\"active\"").count(), c.active_tasks.len());
        assert_eq!(row.matches("data-role=").count(), c.active_tasks.len() + c.standby_tasks.len());
        assert_eq!(row.matches("data-role=\"warmup\"").count(), c.warmup_tasks.len());
    }
    assert!(html.contains(">sub-topology 0<") || html.contains(">sub-topology 0</th>"));
}

fn two_scenarios() -> sim::Comparison {
    let scenarios = vec![sim::builtin("scale-out", 0).unwrap(), sim::builtin("rolling-bounce", 0).unwrap()];
    let (a, b) = (AssignorKind::HighAvailability.assignor(), AssignorKind::Optimized.assignor());
    sim::compare(a, b, &scenarios, &SimConfig::default()).unwrap()
}

#[test]
fn the_compare_sum_row_is_the_sum_of_the_scenario_rows() {
    let cmp = two_scenarios();
    let html = compare_html(&cmp);
    let foot = &html[html.find("<tfoot>").unwrap()..];
    let body = &html[..html.find("<tfoot>").unwrap()];
    let keys = ["movedA", "movedB", "warmupsA", "warmupsB", "probingA", "probingB", "convergeA", "convergeB", "restoringLagA", "restoringLagB"];
    for key in keys.into_iter().chain(["downtimeA", "downtimeB"]) {
        let rows = values(body, key);
        assert_eq!(rows.len(), 2, "{key}");
        assert_eq!(values(foot, key), [rows.iter().sum::<f64>()], "{key}");
    }
    let sums = Sums::of(&cmp);
    let moved: usize = cmp.rows.iter().map(|r| r.baseline.tasks_moved).sum();
    assert_eq!(sums.moved.0, moved);
    assert_eq!(values(foot, "movedA"), [moved as f64]);
    assert!(html.contains("id=\"targets\"") && html.contains("scale-out") && html.contains("rolling-bounce"));
    assert_eq!(html.matches("<tr class=\"scenario\"").count(), 2);
    loads_nothing(&html);
}

#[test]
fn a_single_run_has_a_row_per_rebalance_and_the_totals() {
    let scenario = sim::builtin("scale-out", 0).unwrap();
    let r = sim::run(AssignorKind::HighAvailability.assignor(), &scenario, &SimConfig::default()).unwrap();
    let html = simulate_html(&r);
    assert_eq!(html.matches("<tr class=\"round").count(), r.rounds.len());
    let moved = values(&html, "moved");
    assert_eq!(moved.len(), r.rounds.len() + 1);
    assert_eq!(moved.last().copied(), Some(r.total_tasks_moved as f64));
    assert_eq!(moved[..r.rounds.len()].iter().sum::<f64>(), r.total_tasks_moved as f64);
    assert!(html.contains("<svg ") && html.contains("<polyline"));
    loads_nothing(&html);
}

#[test]
fn the_protocol_table_has_five_runs_a_scenario_and_their_totals() {
    let scenarios = vec![sim::builtin("scale-out", 0).unwrap()];
    let cmp = sim::compare_protocols(&scenarios, &SimConfig::default(), &sim::StreamsConfig::default()).unwrap();
    let html = protocols_html(&cmp);
    for i in 0..5 {
        let v = values(&html, &format!("moved.{i}"));
        assert_eq!(v, [cmp.rows[0].runs[i].tasks_moved as f64; 2], "the row and the total of one scenario");
        let v = values(&html, &format!("downtime.{i}"));
        assert_eq!(v, [cmp.rows[0].runs[i].task_downtime_ms as f64; 2], "the row and the total of one scenario");
    }
    loads_nothing(&html);
}
