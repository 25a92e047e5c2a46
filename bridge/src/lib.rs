//! The JNI bridge of the Java plugin (`plugin/`, class `io.kstreamsassignor.plugin.NativeEngine`):
//! the only crate of this workspace with `unsafe` (the exported symbols), and the boundary
//! where nothing the engine does may reach the JVM as anything but a Java exception.
//!
//! Every entry point runs its work under [`std::panic::catch_unwind`]; an engine error, a
//! malformed request or a panic becomes a `NativeEngineException` with a plain-language message.
//! The restore-rate memory between rebalances ([`kstreams_assignor::plugin::Session`]) lives
//! here, process-wide, because Kafka Streams makes a new assignor instance for every rebalance.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{LazyLock, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::Instant;

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass, JObject};
use jni::sys::{jbyteArray, jobjectArray, jstring};
use kstreams_assignor::engine::ASSIGNMENT_CONFIG_KEYS;
use kstreams_assignor::plugin::streams::{StreamsRequest, StreamsSessions};
use kstreams_assignor::plugin::{Request, Session};

/// The exception the plugin catches.
const EXCEPTION: &str = "io/kstreamsassignor/plugin/NativeEngineException";

/// The memory of the rebalances this process led.
static SESSION: LazyLock<Mutex<Session>> = LazyLock::new(|| Mutex::new(Session::new()));

/// One rebalance: request bytes → response bytes, or the message of the exception to throw.
/// The session lock is held throughout, so concurrent calls (two applications in one JVM) run
/// one after the other.
pub fn assign_bytes(request: &[u8]) -> Result<Vec<u8>, String> {
    let request = Request::decode(request).map_err(|e| e.to_string())?;
    // A panic while the lock was held leaves a memory that may be half updated: start fresh.
    let mut session = SESSION.lock().unwrap_or_else(|poisoned: PoisonError<_>| {
        let mut guard = poisoned.into_inner();
        *guard = Session::new();
        guard
    });
    let prepared = session.prepare(&request).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let assignment = prepared.run().map_err(|e| e.to_string())?;
    let nanos = i64::try_from(started.elapsed().as_nanos()).unwrap_or(i64::MAX);
    let (response, leftovers) = session.finish_with_leftovers(prepared, assignment, nanos).map_err(|e| e.to_string())?;
    drop(session);
    let bytes = response.encode();
    free_later(Box::new((request, response, leftovers)));
    Ok(bytes)
}

/// The memories of the streams groups this broker assigned (the broker's coordinator threads
/// share them; each call takes its group's memory out and puts it back).
static STREAMS: LazyLock<StreamsSessions> = LazyLock::new(StreamsSessions::new);

/// One call of the broker's streams `TaskAssignor`: request bytes → response bytes, or the
/// message of the exception to throw. Calls for different groups run side by side.
pub fn assign_streams_bytes(request: &[u8]) -> Result<Vec<u8>, String> {
    assign_streams_within(request, None)
}

/// [`assign_streams_bytes`] within `budget`, counted from now: past it the engine stops at its
/// next checkpoint and the call fails, leaving nothing running (`None`: no deadline).
pub fn assign_streams_within(request: &[u8], budget: Option<std::time::Duration>) -> Result<Vec<u8>, String> {
    let deadline = budget.map(|b| Instant::now() + b);
    let request = StreamsRequest::decode(request).map_err(|e| e.to_string())?;
    let response = STREAMS.assign_until(&request, deadline).map_err(|e| e.to_string())?;
    let bytes = response.encode();
    free_later(Box::new((request, response)));
    Ok(bytes)
}

/// The thread that frees what each rebalance leaves behind (its request, the parts of the input
/// the memory does not keep, the snapshot it replaced: a millisecond of `free` at 10,000 tasks),
/// so that the group gets its answer first. Started at first use; `None` if it could not start.
static FREEING: LazyLock<Option<mpsc::Sender<Box<dyn Send>>>> = LazyLock::new(|| {
    let (sender, receiver) = mpsc::channel::<Box<dyn Send>>();
    let spawned = thread::Builder::new().name("kstreams-assignor-free".into()).spawn(move || receiver.into_iter().for_each(drop));
    spawned.ok().map(|_| sender)
});

/// Frees `value` on the freeing thread, or here when that thread is not running.
pub fn free_later(value: Box<dyn Send>) {
    if let Some(sender) = FREEING.as_ref() {
        if let Err(returned) = sender.send(value) {
            drop(returned.0);
        }
    }
}

/// Runs `work`, turning a panic into an error message.
pub fn guarded<T>(work: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => Err(format!("the native engine failed unexpectedly (a bug, please report it): {}", panic_message(&*payload))),
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str)).unwrap_or("no message")
}

/// Throws `NativeEngineException(message)`, or a `RuntimeException` if that class is missing.
fn throw(env: &mut JNIEnv<'_>, message: &str) {
    if env.exception_check().unwrap_or(false) {
        return; // a Java exception is already pending: let it propagate
    }
    if env.throw_new(EXCEPTION, message).is_err() {
        let _ = env.exception_clear();
        let _ = env.throw_new("java/lang/RuntimeException", message);
    }
}

/// The raw value for the JVM, or null with `NativeEngineException(message)` pending.
fn answer<T>(env: &mut JNIEnv<'_>, result: Result<T, String>, into_raw: impl FnOnce(T) -> *mut jni::sys::_jobject) -> *mut jni::sys::_jobject {
    match result {
        Ok(value) => into_raw(value),
        Err(message) => {
            throw(env, &message);
            std::ptr::null_mut()
        }
    }
}

/// One bytes-in, bytes-out call of the JVM: the request read, `call` run, the response handed back.
fn bytes_call(env: &mut JNIEnv<'_>, request: &JByteArray<'_>, call: fn(&[u8]) -> Result<Vec<u8>, String>) -> jbyteArray {
    let result = guarded(|| {
        let bytes = env.convert_byte_array(request).map_err(|e| format!("cannot read the request bytes: {e}"))?;
        let response = call(&bytes)?;
        env.byte_array_from_slice(&response).map_err(|e| format!("cannot hand the response to the JVM: {e}"))
    });
    answer(env, result, |array| array.into_raw())
}

/// `static native byte[] assign(byte[] request)`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kstreamsassignor_plugin_NativeEngine_assign<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    request: JByteArray<'local>,
) -> jbyteArray {
    bytes_call(&mut env, &request, assign_bytes)
}

/// `static native byte[] assignStreams(byte[] request)`: the broker's streams assignor.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kstreamsassignor_plugin_NativeEngine_assignStreams<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    request: JByteArray<'local>,
) -> jbyteArray {
    bytes_call(&mut env, &request, assign_streams_bytes)
}

/// `static native byte[] assignStreamsWithin(byte[] request, long budgetNanos)`: the broker's
/// streams assignor with a deadline `budgetNanos` from now (≤ 0: already due).
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kstreamsassignor_plugin_NativeEngine_assignStreamsWithin<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
    request: JByteArray<'local>,
    budget_nanos: jni::sys::jlong,
) -> jbyteArray {
    let budget = std::time::Duration::from_nanos(u64::try_from(budget_nanos).unwrap_or(0));
    let result = guarded(|| {
        let bytes = env.convert_byte_array(&request).map_err(|e| format!("cannot read the request bytes: {e}"))?;
        let response = assign_streams_within(&bytes, Some(budget))?;
        env.byte_array_from_slice(&response).map_err(|e| format!("cannot hand the response to the JVM: {e}"))
    });
    answer(&mut env, result, |array| array.into_raw())
}

/// `static native String version()`: the native library's version.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kstreamsassignor_plugin_NativeEngine_version<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jstring {
    let result = guarded(|| {
        let text = format!("kstreams-assignor {} (layout {})", env!("CARGO_PKG_VERSION"), kstreams_assignor::plugin::VERSION);
        env.new_string(text).map_err(|e| format!("cannot hand a string to the JVM: {e}"))
    });
    answer(&mut env, result, |s| s.into_raw())
}

/// `static native String[] configKeys()`: every config key the engine accepts.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kstreamsassignor_plugin_NativeEngine_configKeys<'local>(
    mut env: JNIEnv<'local>,
    _class: JClass<'local>,
) -> jobjectArray {
    let result = guarded(|| {
        let fail = |e: jni::errors::Error| format!("cannot hand the config keys to the JVM: {e}");
        let len = i32::try_from(ASSIGNMENT_CONFIG_KEYS.len()).map_err(|e| e.to_string())?;
        let array = env.new_object_array(len, "java/lang/String", JObject::null()).map_err(fail)?;
        for (i, key) in ASSIGNMENT_CONFIG_KEYS.iter().enumerate() {
            let s = env.new_string(key).map_err(fail)?;
            env.set_object_array_element(&array, i as i32, s).map_err(fail)?;
        }
        Ok(array)
    });
    answer(&mut env, result, |array| array.into_raw())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kstreams_assignor::engine::streams::{StreamsGroupSpec, StreamsMemberSpec, StreamsSubtopology, StreamsTopology};
    use kstreams_assignor::plugin::{ClientRecord, TaskRecord};
    use kstreams_assignor::wire::{ProcessId, TaskId};

    #[test]
    fn a_panic_becomes_a_message() {
        let err = guarded::<()>(|| panic!("boom")).unwrap_err();
        assert!(err.contains("failed unexpectedly") && err.ends_with("boom"), "{err}");
    }

    #[test]
    fn malformed_requests_and_engine_errors_are_messages() {
        let err = assign_bytes(&[0, 0, 0, 1, 0]).unwrap_err();
        assert!(err.contains("malformed") && err.contains("at byte 4"), "{err}");
        // No clients: Kafka's assignors fail, and so does the engine.
        let request = Request { tasks: vec![TaskRecord::new(TaskId::new(0, 0), false)], ..Request::default() };
        let err = assign_bytes(&request.encode()).unwrap_err();
        assert!(err.contains("no clients"), "{err}");
    }

    #[test]
    fn streams_requests_malformed_or_refused_are_messages() {
        let err = assign_streams_bytes(&[0, 0, 0, 1, 0]).unwrap_err();
        assert!(err.contains("malformed") && err.contains("`now_ms` at byte 4"), "{err}");
        let topology = StreamsTopology::new([StreamsSubtopology::new("0", 2, false)]);
        let empty = StreamsRequest::new(1, StreamsGroupSpec::new([]), topology.clone());
        let err = assign_streams_bytes(&empty.encode()).unwrap_err();
        assert!(err.contains("no process available"), "{err}");
        let one = StreamsRequest::new(1, StreamsGroupSpec::new([StreamsMemberSpec::new("m", "p")]), topology);
        let response = assign_streams_bytes(&one.encode()).unwrap();
        assert_eq!(&response[..8], &[0, 0, 0, 1, 0, 0, 0, 1]);
    }

    #[test]
    fn a_streams_call_past_its_deadline_fails_in_words_and_one_within_it_answers() {
        let topology = StreamsTopology::new([StreamsSubtopology::new("0", 8, true)]);
        let one = StreamsRequest::new(1, StreamsGroupSpec::new([StreamsMemberSpec::new("m", "p")]), topology);
        let err = assign_streams_within(&one.encode(), Some(std::time::Duration::ZERO)).unwrap_err();
        assert!(err.contains("stopped at its deadline"), "{err}");
        assert!(assign_streams_within(&one.encode(), Some(std::time::Duration::from_secs(60))).is_ok());
    }

    #[test]
    fn a_request_gets_a_response_that_times_the_engine() {
        let mut request = Request { application_id: "bridge-test".into(), now_ms: 1, ..Request::default() };
        request.tasks.push(TaskRecord::new(TaskId::new(0, 0), false));
        request.clients.push(ClientRecord::new(ProcessId::NIL, 1));
        let response = assign_bytes(&request.encode()).unwrap();
        let nanos = i64::from_be_bytes(response[response.len() - 8..].try_into().unwrap());
        assert!(nanos > 0, "{nanos}");
    }

    #[test]
    fn leftovers_are_freed_on_the_freeing_thread() {
        struct Reports(mpsc::Sender<Option<String>>);
        impl Drop for Reports {
            fn drop(&mut self) {
                let _ = self.0.send(thread::current().name().map(str::to_owned));
            }
        }
        let (sender, receiver) = mpsc::channel();
        free_later(Box::new(Reports(sender)));
        let freed_on = receiver.recv_timeout(std::time::Duration::from_secs(10)).expect("freed within 10 s");
        assert_eq!(freed_on.as_deref(), Some("kstreams-assignor-free"));
    }
}
