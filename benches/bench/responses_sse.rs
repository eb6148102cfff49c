//! SSE parsing throughput of the OpenAI Responses dialect from memory: a 100 MB response shaped
//! like `inproc::sse_throughput`'s (text deltas, then `write_file` calls in small argument
//! deltas, each call's whole arguments again in `.done` and the finished item, as OpenAI sends
//! them) in Responses events, timed by `inproc::dialect_sse_throughput`.
//!
//! The stream is built before the clock starts; only the parse is timed. No network, no disk.

use crate::Row;
use crate::inproc::{STREAM_BYTES, WORDS, dialect_sse_throughput};
use corecoder::core::config::Dialect;
use serde_json::{Value, json};

pub fn throughput() -> Row {
    dialect_sse_throughput(Dialect::Responses, "Responses API", recorded_stream())
}

/// `event:` and `data:` as OpenAI sends them, with the fields of the published reference.
fn event(kind: &str, mut fields: Value, sequence: &mut u64) -> String {
    fields["type"] = json!(kind);
    fields["sequence_number"] = json!(*sequence);
    *sequence += 1;
    format!("event: {kind}\ndata: {fields}\n\n")
}

fn recorded_stream() -> Vec<u8> {
    let mut seq = 0;
    let message = json!({"id": "msg_1", "type": "message", "status": "in_progress",
                         "content": [], "role": "assistant"});
    let response = json!({"id": "resp_1", "object": "response", "status": "in_progress"});
    let mut body = event("response.created", json!({"response": response}), &mut seq);
    body += &event(
        "response.output_item.added",
        json!({"output_index": 0, "item": message}),
        &mut seq,
    );
    let mut n = 0;
    while body.len() < STREAM_BYTES * 9 / 10 {
        let delta = json!({"item_id": "msg_1", "output_index": 0, "content_index": 0,
                           "delta": WORDS[n % WORDS.len()], "logprobs": []});
        body += &event("response.output_text.delta", delta, &mut seq);
        n += 1;
    }
    let mut index = 1;
    while body.len() < STREAM_BYTES {
        let item_id = format!("fc_{index}");
        let item = json!({"id": item_id, "type": "function_call", "status": "in_progress",
                          "arguments": "", "call_id": format!("call_{index}"), "name": "write_file"});
        let added = json!({"output_index": index, "item": item.clone()});
        body += &event("response.output_item.added", added, &mut seq);
        let mut piece = |text: &str, body: &mut String| {
            let delta = json!({"item_id": item_id, "output_index": index, "delta": text});
            *body += &event("response.function_call_arguments.delta", delta, &mut seq);
        };
        let mut arguments = String::new();
        let pieces = [
            r#"{"file_path": "src/big.rs", "content": ""#,
            r"let x = 1;\n",
            r#""}"#,
        ];
        let counts = [1, 40_000, 1];
        for (text, count) in pieces.into_iter().zip(counts) {
            for _ in 0..count {
                piece(text, &mut body);
                arguments.push_str(text);
            }
        }
        // The whole arguments again, as `.done` and the finished item carry them.
        let done = json!({"item_id": item_id, "output_index": index, "arguments": arguments});
        body += &event("response.function_call_arguments.done", done, &mut seq);
        let mut item = item;
        (item["status"], item["arguments"]) = (json!("completed"), json!(arguments));
        body += &event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
            &mut seq,
        );
        index += 1;
    }
    let usage = json!({"input_tokens": 100, "output_tokens": 20,
                       "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens_details": {"reasoning_tokens": 0}});
    let done = json!({"response": {"id": "resp_1", "status": "completed", "usage": usage}});
    (body + &event("response.completed", done, &mut seq)).into_bytes()
}
