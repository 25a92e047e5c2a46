//! The `ui` page without a broker: a made-up streams group fed to the same watcher and served
//! as `kstreams-assignor ui` serves it, to look at the page (or work on it) on
//! <http://127.0.0.1:8089/>. Two processes run 8 tasks; a third joins, takes tasks and two
//! warm-ups that restore a little every second until they are promoted; then the broker "goes
//! away" for a while, and it all starts again.
//!
//! Usage: `cargo run --example ui_demo -- [PORT]` (Ctrl-C stops)

use std::sync::Arc;
use std::time::Duration;

use kstreams_assignor::client::now_ms;
use kstreams_assignor::engine::AssignmentConfigs;
use kstreams_assignor::views::ui::{Access, LiveState, bind, server};
use kstreams_assignor::views::watch::drive::Report;
use kstreams_assignor::views::watch::{Observation, Watcher, observe};

const END: i64 = 50_000;

fn look(epoch: i32, members: &[observe::MemberSketch<'_>]) -> Observation {
    observe::streams_look(now_ms(), epoch, members)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::args().nth(1).map_or(Ok(8089), |p| p.parse())?;
    let listener = bind(([127, 0, 0, 1], port).into())?;
    let state = Arc::new(LiveState::new("demo-app", "made-up:9092", 1_000, 1_000));
    server::spawn(listener, state.clone(), Access::loopback())?;
    eprintln!("serving a made-up group on http://127.0.0.1:{port}/; Ctrl-C stops");
    let configs = AssignmentConfigs::default().with_overrides([("acceptable.recovery.lag", "1000")])?;
    let mut epoch = 3;
    loop {
        let mut watcher = Watcher::new(configs.clone());
        let feed = |o: Observation, w: &mut Watcher| {
            let event = w.observe(o);
            state.apply(&Report::Event(event), w.summary());
            std::thread::sleep(Duration::from_secs(1));
        };
        let two = [
            ("m-a", "11111111-aaaa-4aaa-8aaa-111111111111", &["0_0", "0_1", "1_0", "1_1"][..], &["1_2"][..], &[][..]),
            ("m-b", "22222222-bbbb-4bbb-8bbb-222222222222", &["0_2", "0_3", "1_2", "1_3"][..], &["1_0"][..], &[][..]),
        ];
        for _ in 0..3 {
            feed(look(epoch, &two), &mut watcher);
        }
        epoch += 1;
        let three = [
            ("m-a", "11111111-aaaa-4aaa-8aaa-111111111111", &["0_0", "1_0", "1_1"][..], &["1_2"][..], &[][..]),
            ("m-b", "22222222-bbbb-4bbb-8bbb-222222222222", &["0_2", "1_2", "1_3"][..], &["1_0"][..], &[][..]),
            ("m-c", "33333333-cccc-4ccc-8ccc-333333333333", &["0_1", "0_3"][..], &[][..], &["1_1", "1_3"][..]),
        ];
        for step in 0..12 {
            let mut o = look(epoch, &three);
            for t in ["1_1", "1_3"] {
                o.members[2].offset_sums.insert(t.into(), step * 4_000);
                o.members[2].end_offset_sums.insert(t.into(), END);
            }
            feed(o, &mut watcher);
        }
        epoch += 1;
        let promoted = [
            ("m-a", "11111111-aaaa-4aaa-8aaa-111111111111", &["0_0", "1_0"][..], &["1_1"][..], &[][..]),
            ("m-b", "22222222-bbbb-4bbb-8bbb-222222222222", &["0_2", "1_2"][..], &["1_3"][..], &[][..]),
            ("m-c", "33333333-cccc-4ccc-8ccc-333333333333", &["0_1", "0_3", "1_1", "1_3"][..], &[][..], &[][..]),
        ];
        for _ in 0..5 {
            feed(look(epoch, &promoted), &mut watcher);
        }
        let since_ms = kstreams_assignor::client::now_ms();
        let lost = Report::Lost { error: "cannot connect to made-up:9092: connection refused".into(), unreachable: true, since_ms };
        state.apply(&lost, watcher.summary());
        std::thread::sleep(Duration::from_secs(5));
        state.apply(&Report::Back(Duration::from_secs(5)), watcher.summary());
        epoch += 1;
    }
}
