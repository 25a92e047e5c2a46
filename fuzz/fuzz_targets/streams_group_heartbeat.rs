#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| kstreams_assignor::fuzzing::streams_group_heartbeat(data));
