//! Reading what the commands are given: files or standard input, JSON with the path of a bad
//! value, topologies. Every read stops at `--max-input-bytes`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use kstreams_assignor::leader;

/// `--max-input-bytes`'s default: 64 MiB.
pub(crate) const DEFAULT_MAX_INPUT_BYTES: u64 = 64 << 20;

static MAX_INPUT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_INPUT_BYTES);

/// Sets the most bytes any input may have (`--max-input-bytes`).
pub(crate) fn set_max_input_bytes(max: u64) {
    MAX_INPUT_BYTES.store(max, Ordering::Relaxed);
}

/// Reads `reader` to its end, refusing more than `--max-input-bytes`.
fn read_capped(reader: impl Read, what: &str) -> Result<Vec<u8>, String> {
    let max = MAX_INPUT_BYTES.load(Ordering::Relaxed);
    let mut buf = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut buf).map_err(|e| format!("cannot read {what}: {e}"))?;
    if buf.len() as u64 > max {
        return Err(format!("{what} is larger than {max} bytes, the limit (raise it with --max-input-bytes)"));
    }
    Ok(buf)
}

/// The bytes of `file` (`-` or nothing: standard input), at most `--max-input-bytes`.
pub(crate) fn read_input(file: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    match file {
        Some(p) if p.as_os_str() != "-" => {
            let f = std::fs::File::open(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            read_capped(f, &p.display().to_string())
        }
        _ => read_capped(std::io::stdin().lock(), "standard input"),
    }
}

/// Reads JSON into `T`, reporting the path of a bad value (`clients[2].capacity`) and the line.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(text: &[u8], what: &str) -> Result<T, String> {
    let de = &mut serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." { format!("{what}: {inner}") } else { format!("{what}: at `{path}`: {inner}") }
    })
}

/// Reads a topology: JSON when the file starts with `{`, else `Topology#describe()` text.
pub(crate) fn read_topology(path: &Path, group: &str) -> Result<leader::Topology, String> {
    let bytes = read_input(Some(&path.to_path_buf()))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("cannot read {}: it is not UTF-8 text", path.display()))?;
    let topology = if text.trim_start().starts_with('{') {
        leader::Topology::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        leader::Topology::from_describe(&text, group).map_err(|e| format!("{}: {e}", path.display()))?
    };
    if topology.application_id != group {
        return Err(format!("{}: application id `{}` is not the group `{group}`", path.display(), topology.application_id));
    }
    Ok(topology)
}

/// Splits `key=value` arguments of `flag`.
pub(crate) fn key_values<'a>(flag: &str, args: &'a [String]) -> Result<Vec<(&'a str, &'a str)>, String> {
    args.iter().map(|kv| kv.split_once('=').ok_or_else(|| format!("{flag} `{kv}`: expected key=value"))).collect()
}

/// Where a report goes: a file, or standard output for `-`.
#[derive(Debug, Clone)]
pub(crate) enum OutputPath {
    /// Standard output.
    Stdout,
    /// A file, checked writable before the run.
    File(PathBuf),
}

/// Checks, before a long run, that `path` (of `flag`) can be written: `-` is standard output;
/// otherwise its directory exists and the file can be created or overwritten.
pub(crate) fn check_output(flag: &str, path: &Path) -> Result<OutputPath, String> {
    if path.as_os_str() == "-" {
        return Ok(OutputPath::Stdout);
    }
    if path.is_dir() {
        return Err(format!("{flag} {}: is a directory, not a file", path.display()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("{flag} {}: the directory {} does not exist", path.display(), dir.display()));
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| format!("{flag} {}: cannot be written: {e}", path.display()))?;
    if !existed {
        std::fs::remove_file(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    }
    Ok(OutputPath::File(path.to_owned()))
}

/// Checks, before a long run, that `dir` (of `flag`) is or can become a writable directory.
pub(crate) fn check_output_dir(flag: &str, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{flag} {}: cannot create the directory: {e}", dir.display()))?;
    let probe = dir.join(format!(".kstreams-assignor-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("{flag} {}: cannot write in the directory: {e}", dir.display()))?;
    std::fs::remove_file(&probe).map_err(|e| format!("{flag} {}: {e}", dir.display()))
}
