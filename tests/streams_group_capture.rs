//! `StreamsGroupDescribe` of a running streams group on a real broker, run by
//! `compat/e2e/streams-describe.sh` while its Kafka Streams application (group.protocol=streams)
//! is settled: the answer decodes, re-encodes byte for byte and shows the group with members and
//! a topology. `STREAMS_GROUP_CAPTURE=DIR` writes the bytes to `DIR/v<N>/<name>.bin` (how
//! `fixtures/streams-group/broker/v1/word-count-3-members.bin` was made).
//!
//! `KAFKA_BOOTSTRAP=HOST:PORT STREAMS_GROUP_ID=APP [STREAMS_GROUP_MEMBERS=N]
//! cargo test --test streams_group_capture -- --ignored`

use std::time::Duration;

use kstreams_assignor::client::connection::{Connection, find_coordinator};
use kstreams_assignor::client::net::client_config::Security;
use kstreams_assignor::views::streams::describe::negotiate;
use kstreams_assignor::client::streams::{
    API_KEY, REQUEST_HEADER_VERSION, RESPONSE_HEADER_VERSION, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse,
};

#[test]
#[ignore = "needs a running streams group: compat/e2e/streams-describe.sh"]
fn streams_group_describe_of_a_running_streams_group() {
    let bootstrap = std::env::var("KAFKA_BOOTSTRAP").expect("KAFKA_BOOTSTRAP");
    let group = std::env::var("STREAMS_GROUP_ID").expect("STREAMS_GROUP_ID: the application id of a running streams group");
    let members: usize = std::env::var("STREAMS_GROUP_MEMBERS").map_or(1, |n| n.parse().unwrap());
    let timeout = Duration::from_secs(10);
    let mut conn = Connection::connect(&bootstrap, "streams-group-capture", &Security::plaintext(), timeout).unwrap();
    let address = find_coordinator(&mut conn, &group).unwrap();
    let mut coord = if address == conn.broker() { conn } else { conn.open(&address).unwrap() };
    let version = negotiate(coord.broker_versions(API_KEY)).expect("the broker lists StreamsGroupDescribe");
    let request = StreamsGroupDescribeRequest::new(vec![group.clone()]).with_include_authorized_operations(true).encode(version).unwrap();
    let body = coord.call_raw("StreamsGroupDescribe", API_KEY, version, REQUEST_HEADER_VERSION, &request, RESPONSE_HEADER_VERSION, timeout).unwrap();
    let response = StreamsGroupDescribeResponse::decode(&body, version).unwrap();
    assert_eq!(response.encode(version).unwrap(), body, "re-encodes byte for byte");
    let g = &response.groups[0];
    assert_eq!((g.group_id.as_str(), g.error_code), (group.as_str(), 0));
    assert_eq!(g.members.len(), members, "{g:?}");
    assert!(g.members.iter().all(|m| m.user_endpoint.is_some() && !m.process_id.is_empty()), "{g:?}");
    assert!(g.topology.as_ref().and_then(|t| t.subtopologies.as_ref()).is_some_and(|s| !s.is_empty()), "{g:?}");
    if let Ok(dir) = std::env::var("STREAMS_GROUP_CAPTURE") {
        let dir = std::path::Path::new(&dir).join(format!("v{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("word-count-{members}-members.bin")), &body).unwrap();
    }
}
