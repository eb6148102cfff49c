//! ACP's framing: JSON-RPC 2.0, one message a line, over the agent's stdin and stdout. Reading
//! is bounded (`MAX_LINE`): a longer line is skipped to its end and answered with a parse error,
//! as is a line that is not JSON; writing puts one message on one line and flushes it.
//!
//! `acp.rs` reads stdin on its own thread with `read_message` and writes through `Out` on the
//! serving thread only. Nothing here knows ACP's methods: that is `acp.rs` and `acp/turn.rs`.

use serde_json::{Value, json};
use std::io::{BufRead, Read, Stdout, Write};

/// The longest line read: a prompt with a few large files pasted in fits.
pub(crate) const MAX_LINE: u64 = 16 << 20;
/// JSON-RPC's codes: not JSON; not a request; no such method; bad params; a failure inside.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// ACP's "resource not found" (an unknown session).
pub(crate) const NOT_FOUND: i64 = -32002;

/// One message from the client, as the serving thread needs it.
#[derive(Debug)]
pub(crate) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The answer to a request of ours (`session/request_permission`): its result or error.
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
    /// A line that is no JSON-RPC message: the code and message to answer it with (id null).
    Malformed(i64, String),
    /// stdin closed, or could not be read: the client is gone.
    Closed,
}

/// The next message on `input`; blank lines are skipped.
pub(crate) fn read_message(input: &mut impl BufRead) -> Incoming {
    loop {
        let mut line = Vec::new();
        match input
            .by_ref()
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => return Incoming::Closed,
            Ok(_) => {}
        }
        if line.len() as u64 > MAX_LINE && line.last() != Some(&b'\n') {
            skip_to_end_of_line(input);
            let why = format!("a line over {} MiB was skipped", MAX_LINE >> 20);
            return Incoming::Malformed(PARSE_ERROR, why);
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            return parse(&line);
        }
    }
}

/// Throws away the rest of an overlong line, a bounded piece at a time.
fn skip_to_end_of_line(input: &mut impl BufRead) {
    loop {
        let mut piece = Vec::new();
        match input.by_ref().take(1 << 16).read_until(b'\n', &mut piece) {
            Ok(0) | Err(_) => return,
            Ok(_) if piece.last() == Some(&b'\n') => return,
            Ok(_) => {}
        }
    }
}

/// One line as a message: a request (`id` and `method`), a notification (`method` only), or a
/// response (`id` with `result` or `error`).
pub(crate) fn parse(line: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => return Incoming::Malformed(PARSE_ERROR, format!("not JSON: {e}")),
    };
    let Some(object) = value.as_object() else {
        let why = "a message must be a JSON object";
        return Incoming::Malformed(INVALID_REQUEST, why.to_string());
    };
    let params = object.get("params").cloned().unwrap_or(Value::Null);
    match (
        object.get("id"),
        object.get("method").and_then(Value::as_str),
    ) {
        (Some(id), Some(method)) => Incoming::Request {
            id: id.clone(),
            method: method.to_string(),
            params,
        },
        (None, Some(method)) => Incoming::Notification {
            method: method.to_string(),
            params,
        },
        (Some(id), None) => match (object.get("result"), object.get("error")) {
            (_, Some(error)) => Incoming::Response {
                id: id.clone(),
                result: Err(error.clone()),
            },
            (Some(result), None) => Incoming::Response {
                id: id.clone(),
                result: Ok(result.clone()),
            },
            (None, None) => Incoming::Malformed(INVALID_REQUEST, "no method".to_string()),
        },
        (None, None) => Incoming::Malformed(INVALID_REQUEST, "no method and no id".to_string()),
    }
}

/// The agent's stdout: every write is one whole message on one line. A closed stdout is not
/// fatal here: the reader sees the client go when stdin closes.
pub(crate) struct Out {
    stdout: Stdout,
    /// The id of our next request to the client.
    next_id: u64,
}

impl Out {
    pub(crate) fn new() -> Out {
        Out {
            stdout: std::io::stdout(),
            next_id: 0,
        }
    }

    fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        let mut stdout = self.stdout.lock();
        let _ = stdout
            .write_all(line.as_bytes())
            .and_then(|()| stdout.flush());
    }

    pub(crate) fn result(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    pub(crate) fn error(&mut self, id: &Value, code: i64, message: &str) {
        let error = json!({"code": code, "message": message});
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request; its id, for matching the response.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(request);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_messages_and_bad_lines_say_why() {
        let read = |text: &str| read_message(&mut text.as_bytes());
        let request = read("\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n");
        assert!(matches!(request, Incoming::Request { method, .. } if method == "initialize"));
        let note = read(r#"{"method":"session/cancel","params":{"sessionId":"s"}}"#);
        assert!(matches!(note, Incoming::Notification { .. }));
        let answer = read(r#"{"id":3,"error":{"code":1}}"#);
        assert!(matches!(answer, Incoming::Response { result: Err(_), .. }));
        assert!(matches!(read("{nope"), Incoming::Malformed(PARSE_ERROR, _)));
        assert!(matches!(
            read("[1]"),
            Incoming::Malformed(INVALID_REQUEST, _)
        ));
        assert!(matches!(read(""), Incoming::Closed));
    }

    #[test]
    fn an_overlong_line_is_skipped_and_the_next_one_read() {
        let mut text = vec![b'x'; MAX_LINE as usize + 10];
        text.extend_from_slice(b"\n{\"id\":1,\"method\":\"m\"}\n");
        let mut input = text.as_slice();
        let first = read_message(&mut input);
        assert!(
            matches!(first, Incoming::Malformed(PARSE_ERROR, _)),
            "{first:?}"
        );
        let next = read_message(&mut input);
        assert!(matches!(next, Incoming::Request { .. }), "{next:?}");
    }
}
