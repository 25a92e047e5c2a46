//! The layouts checked against the `kafka-protocol` encoder on generated messages, and refusals.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{self, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion};

use crate::client::layout::*;
use crate::client::connection::{Call, decode_response};

/// SplitMix64: enough randomness for generated messages, reproducible by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A random message of `layout` at `version`, written independently of `kafka-protocol`:
/// arrays of up to two elements, short ASCII strings, some known tagged fields (with values
/// the crate does not leave out as defaults) and an unknown one now and then, so that the
/// crate's decoder must read it whole and its encoder must give the same bytes back.
fn generate(rng: &mut Rng, layout: &Layout, version: i16, flexible: i16, out: &mut Vec<u8>) {
    for field in layout.fields.iter().filter(|f| (f.min..=f.max).contains(&version)) {
        value(rng, field.ty, version, flexible, false, out);
    }
    if version < flexible {
        return;
    }
    let known: Vec<&Tag> = layout.tags.iter().filter(|_| rng.below(2) == 0).collect();
    let unknown = rng.below(3) == 0;
    uvarint(out, known.len() as u32 + u32::from(unknown));
    for t in known {
        let mut v = Vec::new();
        value(rng, t.ty, version, flexible, true, &mut v);
        uvarint(out, t.tag);
        uvarint(out, v.len() as u32);
        out.extend(v);
    }
    if unknown {
        uvarint(out, 100 + rng.below(50) as u32);
        let n = rng.below(4) as usize;
        uvarint(out, n as u32);
        out.extend((0..n).map(|_| rng.next() as u8));
    }
}

fn value(rng: &mut Rng, ty: Ty, version: i16, flexible: i16, non_default: bool, out: &mut Vec<u8>) {
    let compact = version >= flexible;
    let int = |rng: &mut Rng, width: usize, out: &mut Vec<u8>| {
        let v = if non_default { 1 + rng.below(1000) } else { rng.next() };
        out.extend_from_slice(&v.to_be_bytes()[8 - width..]);
    };
    let length = |n: usize, short: bool, out: &mut Vec<u8>| match (compact, short) {
        (true, _) => uvarint(out, n as u32 + 1),
        (false, true) => out.extend_from_slice(&(n as i16).to_be_bytes()),
        (false, false) => out.extend_from_slice(&(n as i32).to_be_bytes()),
    };
    match ty {
        Bool => out.push(u8::from(non_default || rng.below(2) == 1)),
        I8 => int(rng, 1, out),
        I16 => int(rng, 2, out),
        I32 => int(rng, 4, out),
        I64 => int(rng, 8, out),
        Uuid => (0..16).for_each(|_| out.push(rng.next() as u8)),
        Str => {
            let n = rng.below(5) as usize + usize::from(non_default);
            length(n, true, out);
            out.extend((0..n).map(|_| b'a' + rng.below(26) as u8));
        }
        Bytes => {
            let n = rng.below(5) as usize;
            length(n, false, out);
            out.extend((0..n).map(|_| rng.next() as u8));
        }
        I32s | Structs(_) => {
            let n = rng.below(3) as usize + usize::from(non_default);
            length(n, false, out);
            for _ in 0..n {
                match ty {
                    Structs(layout) => generate(rng, layout, version, flexible, out),
                    _ => int(rng, 4, out),
                }
            }
        }
    }
}

fn encode<M: Encodable>(m: &M, version: i16) -> Vec<u8> {
    let mut buf = BytesMut::new();
    m.encode(&mut buf, version).unwrap();
    buf.to_vec()
}

fn framed<R: Call>(version: i16, body: &[u8]) -> (i16, Vec<u8>) {
    let hv = R::Response::header_version(version);
    let mut out = encode(&ResponseHeader::default().with_correlation_id(7), hv);
    out.extend_from_slice(body);
    (hv, out)
}

/// The layout's versions are the crate's, and at every one: the crate's default response
/// passes; generated messages decode whole with the crate, re-encode to the same bytes, pass
/// the check, and no strict prefix does.
fn agrees_with_kafka_protocol<R: Call>(cases: u64)
where
    R::Response: Encodable + Default,
{
    let message = R::LAYOUT;
    let known = <R::Response as kafka_protocol::protocol::Message>::VERSIONS;
    assert_eq!(message.versions(), known.min..=known.max, "{}", message.name());
    for version in message.versions() {
        let (hv, bytes) = framed::<R>(version, &encode(&R::Response::default(), version));
        check(message, hv, version, &bytes).unwrap_or_else(|e| panic!("default {} v{version}: {e}", message.name()));
        for seed in 0..cases {
            let mut rng = Rng(seed);
            let mut body = Vec::new();
            generate(&mut rng, message.body, version, message.flexible, &mut body);
            let mut buf = Bytes::from(body.clone());
            let decoded = R::Response::decode(&mut buf, version)
                .unwrap_or_else(|e| panic!("{} v{version} seed {seed}: the crate cannot decode {body:?}: {e}", message.name()));
            assert!(buf.is_empty(), "{} v{version} seed {seed}: the crate left {} byte(s)", message.name(), buf.len());
            assert_eq!(encode(&decoded, version), body, "{} v{version} seed {seed}: re-encoded differently", message.name());
            let (hv, bytes) = framed::<R>(version, &body);
            check(message, hv, version, &bytes).unwrap_or_else(|e| panic!("{} v{version} seed {seed}: {e}", message.name()));
            for n in 0..bytes.len() {
                assert!(check(message, hv, version, &bytes[..n]).is_err(), "{} v{version} seed {seed}: prefix {n} passes", message.name());
            }
            // Whatever passes after a byte is changed decodes without asking for more than
            // the frame holds (the crate is only handed bytes that pass).
            for i in (0..bytes.len()).step_by(3) {
                for v in [0x00, 0x7f, 0x80, 0xff] {
                    let mut m = bytes.clone();
                    m[i] = v;
                    let _ = decode_response::<R>(m, version);
                }
            }
        }
    }
}

fn err(message: &Message, header_version: i16, version: i16, body: &[u8]) -> (String, usize, LayoutErrorKind) {
    let e = check(message, header_version, version, body).unwrap_err();
    (e.path, e.offset, e.kind)
}

#[test]
fn counts_the_frame_cannot_hold_are_refused_with_their_path_and_offset() {
    // Metadata v1 (int32 counts): correlation id, brokers = i32::MAX.
    let mut v1 = vec![0, 0, 0, 7];
    v1.extend_from_slice(&i32::MAX.to_be_bytes());
    v1.extend_from_slice(&[0; 8]);
    let expected = LayoutErrorKind::TooManyElements { count: i32::MAX as u64, remaining: 8 };
    assert_eq!(err(&METADATA, 0, 1, &v1), ("MetadataResponse.Brokers".into(), 4, expected));
    let e = decode_response::<messages::MetadataRequest>(v1, 1).unwrap_err();
    assert_eq!(e, "MetadataResponse.Brokers at byte 4: 2147483647 element(s) claimed, only 8 byte(s) left");

    // DescribeGroups v5 (compact): one group whose member count is 2^32 − 2.
    let mut v5 = vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 2, 0, 0, 2, b'g', 1, 1, 1];
    v5.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
    let expected = LayoutErrorKind::TooManyElements { count: u32::MAX as u64 - 1, remaining: 0 };
    assert_eq!(err(&DESCRIBE_GROUPS, 1, 5, &v5), ("DescribeGroupsResponse.Groups[0].Members".into(), 17, expected));

    // What the fuzzer found when `decode_response` skipped this check: a DescribeGroups v5
    // body of 13 bytes that made the decoder reserve 1.36 GB for 6,291,454 groups.
    let found = vec![0, 0, 0, 0x4f, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x02];
    let e = decode_response::<messages::DescribeGroupsRequest>(found, 5).unwrap_err();
    assert_eq!(e, "DescribeGroupsResponse.Groups at byte 9: 6291454 element(s) claimed, only 0 byte(s) left");

    // Replica ids are four bytes each: three of them do not fit in eight bytes.
    // Metadata v0: no brokers, one topic `t` with one partition claiming three replicas.
    let mut partition = vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, b't', 0, 0, 0, 1];
    partition.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3]);
    partition.extend_from_slice(&[0; 8]);
    let expected = LayoutErrorKind::TooManyElements { count: 3, remaining: 8 };
    assert_eq!(err(&METADATA, 0, 0, &partition), ("MetadataResponse.Topics[0].Partitions[0].ReplicaNodes".into(), 31, expected));
}

#[test]
fn bad_lengths_strings_tags_and_versions_are_typed_errors() {
    // FindCoordinator v1: throttle, error code, error message of length −2.
    let body = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0xff, 0xfe];
    assert_eq!(err(&FIND_COORDINATOR, 0, 1, &body), ("FindCoordinatorResponse.ErrorMessage".into(), 10, LayoutErrorKind::NegativeLength(-2)));
    // ... and an error message that is not UTF-8.
    let body = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2, 0xc3, 0x28];
    assert_eq!(err(&FIND_COORDINATOR, 0, 1, &body), ("FindCoordinatorResponse.ErrorMessage".into(), 12, LayoutErrorKind::NotUtf8));
    // ApiVersions v3 (header v0): no keys, throttle, then tag 1 (an int64) declared as 4 bytes.
    let body = [0, 0, 0, 7, 0, 0, 1, 0, 0, 0, 0, 1, 1, 4, 0, 0, 0, 0, 0, 0, 0, 9];
    let kind = LayoutErrorKind::TaggedFieldSize { tag: 1, declared: 4, actual: 8 };
    assert_eq!(err(&API_VERSIONS, 0, 3, &body), ("ApiVersionsResponse".into(), 14, kind));
    // An unknown tag is skipped by its size; a size past the end is truncation.
    let body = [0, 0, 0, 7, 0, 0, 1, 0, 0, 0, 0, 1, 9, 2, 0xaa, 0xbb];
    check(&API_VERSIONS, 0, 3, &body).unwrap();
    let kind = LayoutErrorKind::Truncated { needed: 3, available: 2 };
    assert_eq!(err(&API_VERSIONS, 0, 3, &[&body[..13], &[3, 0xaa, 0xbb]].concat()), ("ApiVersionsResponse".into(), 14, kind));
    // Versions outside the crate's range, and bytes after the message.
    let kind = LayoutErrorKind::UnsupportedVersion { version: 1, min: 2, max: 7 };
    assert_eq!(err(&CREATE_TOPICS, 0, 1, &[0, 0, 0, 7]), ("CreateTopicsResponse".into(), 4, kind));
    let body = [0, 0, 0, 7, 0, 0, 0, 0, 0, 27, 0];
    assert_eq!(err(&HEARTBEAT, 0, 1, &body), ("HeartbeatResponse".into(), 10, LayoutErrorKind::Trailing(1)));
    // A header cut short names the header.
    assert_eq!(err(&HEARTBEAT, 1, 4, &[0, 0]).0, "ResponseHeader.CorrelationId");
}

#[test]
fn layouts_agree_with_kafka_protocol_at_every_version() {
    const CASES: u64 = 60;
    assert_eq!(crate::client::connection::RESPONSE_DECODERS.len(), 15, "every call's response is checked here");
    agrees_with_kafka_protocol::<messages::ApiVersionsRequest>(CASES);
    agrees_with_kafka_protocol::<messages::FindCoordinatorRequest>(CASES);
    agrees_with_kafka_protocol::<messages::JoinGroupRequest>(CASES);
    agrees_with_kafka_protocol::<messages::SyncGroupRequest>(CASES);
    agrees_with_kafka_protocol::<messages::HeartbeatRequest>(CASES);
    agrees_with_kafka_protocol::<messages::LeaveGroupRequest>(CASES);
    agrees_with_kafka_protocol::<messages::MetadataRequest>(CASES);
    agrees_with_kafka_protocol::<messages::CreateTopicsRequest>(CASES);
    agrees_with_kafka_protocol::<messages::ListOffsetsRequest>(CASES);
    agrees_with_kafka_protocol::<messages::DescribeGroupsRequest>(CASES);
    agrees_with_kafka_protocol::<messages::OffsetFetchRequest>(CASES);
    agrees_with_kafka_protocol::<messages::SaslHandshakeRequest>(CASES);
    agrees_with_kafka_protocol::<messages::SaslAuthenticateRequest>(CASES);
    agrees_with_kafka_protocol::<messages::ListGroupsRequest>(CASES);
    agrees_with_kafka_protocol::<messages::DescribeConfigsRequest>(CASES);
}
