//! `StreamsGroupDescribeRequest` (API key 89), versions 0–1, flexible from v0.

use serde::Serialize;

use crate::client::streams::compact::{self, put_no_tags, put_strings};
use crate::client::streams::check_version;
use crate::wire::codec::{Reader, Writer};
use crate::wire::{DecodeError, DecodeErrorKind, EncodeError, MessageKind};

const MSG: MessageKind = MessageKind::StreamsGroupDescribeRequest;

/// A request to describe streams groups. Valid versions: 0–1.
///
/// ```
/// use kstreams_assignor::client::streams::StreamsGroupDescribeRequest;
///
/// let request = StreamsGroupDescribeRequest::new(vec!["wc".into()]);
/// let bytes = request.encode(0).unwrap();
/// // GroupIds [ "wc" ], IncludeAuthorizedOperations false, no tagged fields.
/// assert_eq!(bytes, [2, 3, b'w', b'c', 0, 0]);
/// assert_eq!(StreamsGroupDescribeRequest::decode(&bytes, 0).unwrap(), request);
/// // IncludeTopologyDescription exists since v1 only.
/// assert!(request.with_include_topology_description(true).encode(0).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StreamsGroupDescribeRequest {
    /// `GroupIds`: the groups to describe.
    pub group_ids: Vec<String>,
    /// `IncludeAuthorizedOperations`.
    pub include_authorized_operations: bool,
    /// `IncludeTopologyDescription` (since v1; default false).
    pub include_topology_description: bool,
}

impl StreamsGroupDescribeRequest {
    /// A request for `group_ids`, without authorized operations or topology description.
    pub fn new(group_ids: Vec<String>) -> Self {
        Self { group_ids, ..Self::default() }
    }

    /// Sets `IncludeAuthorizedOperations`.
    pub fn with_include_authorized_operations(mut self, v: bool) -> Self {
        self.include_authorized_operations = v;
        self
    }

    /// Sets `IncludeTopologyDescription` (since v1).
    pub fn with_include_topology_description(mut self, v: bool) -> Self {
        self.include_topology_description = v;
        self
    }

    /// Encodes the body at `version`; a field the version cannot carry is an error.
    pub fn encode(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        check_version(version).map_err(|(min, max)| EncodeError::UnsupportedVersion {
            message: MSG,
            version: version.into(),
            min,
            max,
        })?;
        if version < 1 && self.include_topology_description {
            return Err(EncodeError::FieldNotInVersion { message: MSG, field: "IncludeTopologyDescription", version: version.into(), since: 1 });
        }
        let mut w = Writer::new(MSG, 16);
        put_strings(&mut w, "GroupIds", &self.group_ids)?;
        w.i8(i8::from(self.include_authorized_operations));
        if version >= 1 {
            w.i8(i8::from(self.include_topology_description));
        }
        put_no_tags(&mut w);
        Ok(w.finish())
    }

    /// The JSON Kafka's `StreamsGroupDescribeRequestDataJsonConverter` writes at `version`
    /// (`includeTopologyDescription` from v1).
    pub fn to_json(&self, version: i16) -> serde_json::Value {
        let mut json = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(obj) = json.as_object_mut().filter(|_| version < 1) {
            obj.remove("includeTopologyDescription");
        }
        json
    }

    /// Decodes a body at `version`; every byte must be used.
    pub fn decode(bytes: &[u8], version: i16) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes, MSG);
        if let Err((min, max)) = check_version(version) {
            return Err(r.error_at(0, "version", DecodeErrorKind::UnsupportedVersion { version: version.into(), min, max }));
        }
        let group_ids = compact::strings(&mut r, "GroupIds")?;
        let include_authorized_operations = compact::boolean(&mut r, "IncludeAuthorizedOperations")?;
        let include_topology_description = version >= 1 && compact::boolean(&mut r, "IncludeTopologyDescription")?;
        compact::tagged_fields(&mut r, "_tagged_fields")?;
        crate::client::streams::refuse_trailing(&r)?;
        Ok(Self { group_ids, include_authorized_operations, include_topology_description })
    }
}
