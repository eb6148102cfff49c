//! Helpers for the tools' unit tests: a throwaway directory and a context rooted in it.
//!
//! Compiled only for tests; nothing in a real turn uses it.

use crate::client::llm::Llm;
use crate::core::config::Config;
use crate::core::consent::{Consent, Mode};
use crate::extras::Extras;
use crate::tools::ToolContext;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A directory under the system temp dir, removed when dropped. `name` must be unique per test.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("corecoder-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    /// Write `content` to `rel`, creating parent directories.
    pub(crate) fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A context rooted in `dir`, with a real `Llm` pointed at a closed loopback port (only the
/// `agent` tool would use it).
pub(crate) fn test_context(dir: &Path) -> ToolContext {
    let config = Config {
        base_url: "http://127.0.0.1:9/v1".to_string(),
        ..Config::default()
    };
    let (llm, cancel) = (Arc::new(Llm::new(config)), Arc::new(AtomicBool::new(false)));
    let consent = Consent::new(Mode::AllowAll);
    Extras::default().tool_context(dir, &cancel, (&llm, &consent))
}

/// Parse a call carrying every property `schema` (`tools/schemas.rs`) lists, each a plain value
/// of its type, into a tool's `Args`, and check that each landed in a field of that name: a
/// property renamed on either side fails here.
pub(crate) fn check_schema_fits<Args: DeserializeOwned + Debug>(schema: &Value) {
    let properties = schema["function"]["parameters"]["properties"]
        .as_object()
        .expect("properties");
    let sample = |property: &Value| match property["type"].as_str() {
        Some("string") => json!("x"),
        Some("integer") => json!(1),
        Some("array") => json!([]),
        other => panic!("no sample for {other:?}"),
    };
    let call: serde_json::Map<String, Value> = (properties.iter())
        .map(|(name, property)| (name.clone(), sample(property)))
        .collect();
    let args: Args = serde_json::from_value(call.into()).expect("every property parses");
    let shown = format!("{args:?}");
    for name in properties.keys() {
        let field = format!("{name}: ");
        assert!(shown.contains(&field), "{name} is not a field: {shown}");
        assert!(
            !shown.contains(&format!("{field}None")),
            "{name} was dropped: {shown}"
        );
    }
}
