//! The JSON answers of etcd's gateway, as the gRPC messages' proto3 JSON writes them: bytes as
//! base64, 64-bit integers as strings, defaults left out.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use serde_json::Value;

use super::error::EtcdError;

/// A 64-bit integer as the gateway writes it: a string (or, leniently, a number); absent is 0.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
pub(super) enum Int64 {
    Text(String),
    Number(u64),
    #[default]
    Absent,
}

impl Int64 {
    pub(super) fn get(&self, endpoint: &str) -> Result<u64, EtcdError> {
        match self {
            Int64::Text(text) => text.parse().map_err(|_| EtcdError::Malformed {
                endpoint: endpoint.to_string(),
                detail: format!("`{text}` is not a revision"),
            }),
            Int64::Number(number) => Ok(*number),
            Int64::Absent => Ok(0),
        }
    }
}

/// The header every answer has.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Header {
    #[serde(default)]
    pub(super) revision: Int64,
}

/// The answer of `/v3/kv/range`.
#[derive(Debug, Deserialize)]
pub(super) struct RangeAnswer {
    #[serde(default)]
    pub(super) header: Header,
    #[serde(default)]
    pub(super) kvs: Vec<RangeKv>,
}

/// One key of a range.
#[derive(Debug, Deserialize)]
pub(super) struct RangeKv {
    #[serde(default)]
    pub(super) key: String,
    #[serde(default)]
    pub(super) value: String,
    #[serde(default)]
    pub(super) mod_revision: Int64,
}

/// The answer of `/v3/kv/txn`.
#[derive(Debug, Deserialize)]
pub(super) struct TxnAnswer {
    #[serde(default)]
    pub(super) header: Header,
    /// proto3 JSON leaves a false bool out.
    #[serde(default)]
    pub(super) succeeded: bool,
}

/// `answer` as a `T`.
pub(super) fn parse<T: serde::de::DeserializeOwned>(
    endpoint: &str,
    answer: Value,
) -> Result<T, EtcdError> {
    serde_json::from_value(answer).map_err(|error| EtcdError::Malformed {
        endpoint: endpoint.to_string(),
        detail: error.to_string(),
    })
}

/// Bytes the gateway wrote as base64.
pub(super) fn decode(endpoint: &str, text: &str) -> Result<Vec<u8>, EtcdError> {
    BASE64.decode(text).map_err(|error| EtcdError::Malformed {
        endpoint: endpoint.to_string(),
        detail: format!("bad base64: {error}"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_parse_with_revisions_as_strings_and_defaults_left_out() {
        let range: RangeAnswer = serde_json::from_value(json!({
            "header": {"cluster_id": "1", "revision": "42"},
            "kvs": [{"key": "YQ==", "value": "MQ==", "mod_revision": "7", "create_revision": "7"}],
            "count": "1"
        }))
        .expect("range");
        assert_eq!(range.header.revision.get("e").expect("rev"), 42);
        assert_eq!(range.kvs[0].mod_revision.get("e").expect("rev"), 7);
        assert_eq!(decode("e", &range.kvs[0].key).expect("key"), b"a");
        let empty: RangeAnswer =
            serde_json::from_value(json!({"header": {"revision": "3"}})).expect("empty");
        assert!(empty.kvs.is_empty());
        let failed: TxnAnswer =
            serde_json::from_value(json!({"header": {"revision": "9"}})).expect("txn");
        assert!(!failed.succeeded, "a false `succeeded` is left out");
        assert!(Int64::Text("x".into()).get("e").is_err());
    }
}
