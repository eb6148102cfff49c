//! Sessions CoreCoder (the Python original, 0.8) saved in the same folder:
//! `~/.corecoder/sessions/ID.json`, one JSON object written whole by its `/save`,
//! `{"id", "model", "saved_at", "messages": [...]}`, the messages in chat completions' shape
//! (the system prompt is not among them). Read for `/sessions` and `-r ID`: the messages
//! become our history, the model comes back with them.
//!
//! `session.rs` calls `read` when an id has no `ID.jsonl` of ours but has CoreCoder's file.
//! CoreCoder's file is never written: a resumed session goes on in `ID.jsonl` beside it,
//! which is found first from then on. No cwd is recorded there, so `-c` never picks one.

use super::{Loaded, open_own};
use crate::core::message::Message;
use serde_json::Value;
use std::fs::OpenOptions;
use std::io::Read;
use std::path::Path;

pub(crate) const SUFFIX: &str = ".json";

/// Past this a file is not read: a session is a conversation, not a data set.
const MAX_BYTES: u64 = 64 << 20;

/// The history and model of CoreCoder's session file at `path`. A message that is not of
/// a shape we send (no role, content that is not text) is skipped and counted.
pub(crate) fn read(path: &Path) -> Result<Loaded, String> {
    let file = open_own(path, OpenOptions::new().read(true)).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    (file.take(MAX_BYTES + 1).read_to_end(&mut bytes)).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("larger than {} MiB", MAX_BYTES >> 20));
    }
    let saved: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("not a CoreCoder session (not one JSON object: {e})"))?;
    let Some(listed) = saved["messages"].as_array() else {
        return Err("not a CoreCoder session (no \"messages\" list)".into());
    };
    let messages: Vec<Message> = (listed.iter())
        .filter_map(|m| serde_json::from_value(m.clone()).ok())
        .collect();
    Ok(Loaded {
        header: None,
        model: saved["model"].as_str().map(str::to_string),
        skipped: listed.len() - messages.len(),
        messages,
        repaired: 0,
        taught: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::Role;
    use std::fs;

    #[test]
    fn a_corecoder_session_becomes_our_history() {
        let dir = std::env::temp_dir().join(format!("corecoder-py-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("session_20261201_101500_ab12cd34.json");
        let call = serde_json::json!({"id": "c1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"file_path\": \"a.py\"}"}});
        let saved = serde_json::json!({"id": "session_20261201_101500_ab12cd34",
            "model": "gpt-4o", "saved_at": "2026-12-01 10:15:00", "messages": [
            {"role": "user", "content": "read a.py"},
            {"role": "assistant", "content": null, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "x = 1"},
            {"role": "assistant", "content": [{"type": "image"}]},
            {"role": "assistant", "content": "it sets x"}]});
        fs::write(&path, serde_json::to_string_pretty(&saved).unwrap()).unwrap();
        let loaded = read(&path).unwrap();
        assert_eq!(loaded.model.as_deref(), Some("gpt-4o"));
        let roles: Vec<Role> = loaded.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
        );
        assert_eq!(loaded.messages[1].tool_calls[0].name, "read_file");
        assert_eq!(loaded.skipped, 1);
        fs::write(&path, "{\"id\": \"x\"}").unwrap();
        assert!(read(&path).unwrap_err().contains("no \"messages\" list"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
