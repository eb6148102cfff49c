//! What a provider's error answer says: its `Retry-After`, its body (bounded), the message in
//! it (a validator's first refused field first), where a redirect pointed, the numbers of a
//! "does not fit" (`overflow_numbers`), and what to check after a 401, 403 or 404. The LLM
//! client (`client/llm.rs`, `client/quirks.rs`) reads a non-200 answer with these, and the SSE
//! parser an error inside the stream; nothing here decides whether to retry or opens a
//! connection.

use crate::tools::support::{net, text};
use regex::Regex;
use serde_json::Value;
use std::io::Read;
use std::time::Duration;

/// What an error answer's headers say: how long to wait (`retry_after`) and, for a redirect,
/// where it pointed (`redirected`).
pub(crate) fn from_headers(
    status: u16,
    headers: &ureq::http::HeaderMap,
) -> (Option<Duration>, Option<String>) {
    (retry_after(headers), redirected(status, headers))
}

/// A 3xx answer's message: corecoder follows only a 307 or 308 to the same scheme, host and
/// port (`client/http.rs`), so the key and the conversation never go to a host the user did not
/// name. The status and the `Location` are named.
pub(crate) fn redirected(status: u16, headers: &ureq::http::HeaderMap) -> Option<String> {
    if !(300..400).contains(&status) {
        return None;
    }
    let location = headers.get("location").and_then(|l| l.to_str().ok());
    let location = crate::tools::support::text::printable(location.unwrap_or("(no Location)"));
    Some(format!(
        "the provider redirected ({status}) to Location: {location}, and corecoder follows only \
         a 307 or 308 to the same host and port, 5 at most; if you trust that address, make it \
         the base URL"
    ))
}

/// `Retry-After` in seconds, if it is a number that means something (`nan`, `inf` or a date
/// are ignored: the usual backoff applies). Capped at 30 s.
pub(crate) fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let text = headers.get("retry-after")?.to_str().ok()?;
    let secs: f64 = text.trim().parse().ok()?;
    let secs = Some(secs).filter(|secs| secs.is_finite())?;
    Some(Duration::from_secs_f64(secs.clamp(0.0, 30.0)))
}

/// The body of an error answer, as text. Only the first 64 KiB are read: enough for any real
/// message, and no memory hazard. The whole of it goes to `--trace`; the user sees its headline.
pub(crate) fn error_body(reader: impl Read) -> String {
    let mut bytes = Vec::new();
    let _ = reader.take(64 * 1024).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The server's own words in an error body (`json_error_message`), or the body itself. Whole,
/// so the 400 adaptations can match any of it; a validator's list of errors (LiteLLM's "10
/// validation errors: …", FastAPI's `detail`) starts with its first field and why, so the one
/// line the user reads says what was refused.
pub(crate) fn message_in(body: &str) -> String {
    let message = match json_error_message(body) {
        Some(text) => text,
        None if body.trim().is_empty() => "(empty response body)".to_string(),
        None => body.to_string(),
    };
    match first_refused_field(body, &message) {
        Some(first) => format!("{first}\n{message}"),
        None => message,
    }
}

/// The first field a validator refused, as `messages.2.content: Input should be a valid
/// string (the first of: …)`, ending with what it was the first of: from FastAPI's `{"detail": [{"loc": […], "msg": …}]}`, from the errors a message
/// lists as Python or JSON (`'loc': ('body', …), 'msg': '…'`, LiteLLM's and others'), or from
/// pydantic's own text ("N validation errors for Model", the field, then why, indented).
fn first_refused_field(body: &str, message: &str) -> Option<String> {
    let path = |loc: &mut dyn Iterator<Item = String>| {
        let loc: Vec<String> = loc.skip_while(|part| part == "body").collect();
        loc.join(".")
    };
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    if let Some(detail) = parsed.as_ref().and_then(|body| body["detail"].as_array()) {
        let (first, count) = (detail.first()?, detail.len());
        let loc = first["loc"].as_array()?.iter();
        let mut loc = loc.map(|part| part.as_str().map_or(part.to_string(), str::to_string));
        let (at, why) = (path(&mut loc), first["msg"].as_str()?);
        return Some(format!("{at}: {why} (the first of {count} refused fields)"));
    }
    let of = format!("(the first of: {})", text::headline(message));
    let listed =
        r#"["']loc["']:\s*[(\[]([^)\]]*)[)\]][^{}]*?["']msg["']:\s*(?:"([^"]*)"|'([^']*)')"#;
    if let Some(found) = Regex::new(listed).ok()?.captures(message) {
        let parts = found[1]
            .split(',')
            .map(|p| p.trim().trim_matches(['\'', '"']).to_string());
        let mut parts = parts.filter(|part| !part.is_empty());
        let why = found.get(2).or(found.get(3))?.as_str();
        return Some(format!("{}: {why} {of}", path(&mut parts)));
    }
    let pydantic = r"validation errors? for \S+\s*\n(\S+)\n\s+([^\n\[]+)";
    let found = Regex::new(pydantic).ok()?.captures(message)?;
    Some(format!("{}: {} {of}", &found[1], found[2].trim()))
}

/// The one reader of a provider's JSON error, for an error answer and for an error inside the
/// stream (`client/sse.rs`): `{"error": {"message": …}}`, `{"error": "…"}`, `{"message": …}`
/// or FastAPI's `{"detail": "…"}`.
pub(crate) fn json_error_message(body: &str) -> Option<String> {
    let parsed: Value = serde_json::from_str(body).ok()?;
    let error = parsed.get("error").unwrap_or(&parsed);
    let message = error
        .get("message")
        .or(error.get("detail"))
        .unwrap_or(error);
    message.as_str().map(str::to_string)
}

/// What to check after a 401, 403 or 404, put after the server's words; empty for any other
/// status. `key_from` says where the key came from; empty when unknown (the library).
pub(crate) fn what_to_check(status: u16, url: &str, model: &str, key_from: &str) -> String {
    let from = Some(key_from).filter(|from| !from.is_empty());
    let from = from.unwrap_or("CORECODER_API_KEY");
    match status {
        401 => format!(
            " (the API key from {from} was rejected by {})",
            net::host(url)
        ),
        403 => " (the key may not have access to this model)".to_string(),
        404 => format!(" (POST {url}, model {model}: check the base URL and the model name)"),
        _ => String::new(),
    }
}

/// What a "does not fit" message says in numbers, where it says them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Overflow {
    /// The tokens a prompt may have, the completion's share already taken out.
    pub(crate) limit: Option<u64>,
    /// The tokens the prompt had, as the provider counted them.
    pub(crate) prompt: Option<u64>,
}

/// Read the window and the prompt's size from the wordings of OpenAI, DeepSeek, vLLM and
/// llama-cpp-python ("maximum context length is N tokens. However, you requested T tokens
/// (P in the messages, C in the completion)" or "your messages resulted in P tokens"),
/// llama.cpp ("request (P tokens) exceeds the available context size (N tokens)") and
/// Anthropic ("prompt is too long: P tokens > N maximum").
pub(crate) fn overflow_numbers(message: &str) -> Overflow {
    let find = |patterns: &[&str]| {
        patterns.iter().find_map(|pattern| {
            let captures = Regex::new(pattern).ok()?.captures(message)?;
            captures.get(1)?.as_str().parse::<u64>().ok()
        })
    };
    let window = find(&[
        r"maximum context length is (\d+)",
        r"context size \((\d+) tokens\)",
        r"context window of (\d+)",
        r"tokens > (\d+) maximum",
    ]);
    let prompt = find(&[
        r"\((\d+) in the messages",
        r"resulted in (\d+) tokens",
        r"request \((\d+) tokens\)",
        r"(\d+) tokens > \d+ maximum",
    ]);
    let completion = find(&[r"(\d+) in the completion"]).unwrap_or(0);
    Overflow {
        limit: window.map(|window| window.saturating_sub(completion)),
        prompt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_the_body() {
        let openai = r#"{"error":{"message":"Incorrect API key","type":"x"}}"#;
        assert_eq!(message_in(openai), "Incorrect API key");
        assert_eq!(message_in(r#"{"error":"overloaded"}"#), "overloaded");
        assert_eq!(message_in("Bad Gateway"), "Bad Gateway");
        assert_eq!(message_in(""), "(empty response body)");
    }

    #[test]
    fn a_validators_first_refused_field_comes_first() {
        let first = |body: &str| message_in(body).lines().next().unwrap_or("").to_string();
        let fastapi = r#"{"detail":[{"type":"missing","loc":["body","messages",2,"content"],"msg":"Field required","input":null},{"loc":["body","model"],"msg":"x"}]}"#;
        assert_eq!(
            first(fastapi),
            "messages.2.content: Field required (the first of 2 refused fields)"
        );
        let litellm = r#"{"error":{"message":"litellm.BadRequestError: Hosted_vllmException - 10 validation errors:\n  {'type': 'string_pattern_mismatch', 'loc': ('body', 'tools', 0, 'function', 'name'), 'msg': \"String should match pattern '^[a-z_]+$'\", 'input': 'read file'}\n  {'type': 'missing'}"}}"#;
        assert_eq!(
            first(litellm),
            "tools.0.function.name: String should match pattern '^[a-z_]+$' (the first of: \
             litellm.BadRequestError: Hosted_vllmException - 10 validation errors:)"
        );
        let pydantic = r#"{"message":"2 validation errors for ChatCompletionRequest\nmessages.2.content\n  Input should be a valid string [type=string_type, input_value=None]\nmodel\n  Field required"}"#;
        assert!(
            first(pydantic).starts_with("messages.2.content: Input should be a valid string ("),
            "{}",
            first(pydantic)
        );
        assert_eq!(message_in(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(first(r#"{"error":"overloaded"}"#), "overloaded");
    }

    #[test]
    fn a_redirect_names_its_status_and_location() {
        let mut headers = ureq::http::HeaderMap::new();
        headers.insert("location", "http://evil.example/v1".parse().unwrap());
        let said = redirected(302, &headers).unwrap();
        assert!(
            said.starts_with("the provider redirected (302) to Location: http://evil.example/v1,"),
            "{said}"
        );
        assert_eq!(redirected(404, &headers), None);
        let bare = redirected(308, &ureq::http::HeaderMap::new()).unwrap();
        assert!(bare.contains("(308) to Location: (no Location)"), "{bare}");
    }

    #[test]
    fn overflow_numbers_in_each_wording() {
        let openai = "This model's maximum context length is 8192 tokens. However, your \
                      messages resulted in 10000 tokens. Please reduce the length of the messages.";
        let vllm = "This model's maximum context length is 4096 tokens. However, you requested \
                    5000 tokens (4000 in the messages, 1000 in the completion).";
        let llama_cpp = "request (5000 tokens) exceeds the available context size (4096 tokens), \
                         try increasing it";
        let anthropic = "prompt is too long: 210000 tokens > 200000 maximum";
        let both = |limit, prompt| Overflow {
            limit: Some(limit),
            prompt: Some(prompt),
        };
        assert_eq!(overflow_numbers(openai), both(8192, 10000));
        assert_eq!(overflow_numbers(vllm), both(3096, 4000));
        assert_eq!(overflow_numbers(llama_cpp), both(4096, 5000));
        assert_eq!(overflow_numbers(anthropic), both(200000, 210000));
        assert_eq!(overflow_numbers("too many tokens"), Overflow::default());
    }
}
