//! Reading what the commands are given: files or standard input, JSON with the path of a bad
//! value, topologies.

use std::io::Read;
use std::path::{Path, PathBuf};

use kstreams_assignor::leader;

/// The bytes of `file` (`-` or nothing: standard input).
pub(crate) fn read_input(file: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    match file {
        Some(p) if p.as_os_str() != "-" => std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display())),
        _ => {
            let mut buf = Vec::new();
            std::io::stdin().read_to_end(&mut buf).map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(buf)
        }
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
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
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
