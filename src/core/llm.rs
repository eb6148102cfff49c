//! The LLM client: one streamed chat-completions request, with retries and 400 adaptation.
//!
//! The agent loop calls `Llm::stream` once per round. It builds the JSON body, POSTs it with
//! `ureq` (blocking), hands the body reader to `sse::read_stream`, and returns the reassembled
//! `Reply`. Retries re-issue the *whole* request; there is no other retry layer anywhere.
//! It does not parse tool arguments, run tools or touch the history.

mod account;
mod answers;
mod body;

use crate::core::config::Config;
use crate::core::error::Error;
use crate::core::event::Event;
use crate::core::http;
use crate::core::message::Message;
use crate::core::message::Reply;
use crate::core::sse::{self, StreamError};
use crate::extras::cost::{Ledger, PriceTable};
use crate::extras::trace::{Tee, Trace};
use answers::transport_failure;
pub use answers::{Overflow, overflow_numbers};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Cursor, Read};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MAX_RETRIES: u32 = 4;
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

pub struct Llm {
    config: Config,
    /// Replaced after Ctrl+C: shutting an agent down is how a blocked request is woken.
    http: Mutex<ureq::Agent>,
    /// Learnt from 400 answers; shared by every request (and sub-agent) of the session.
    adaptations: Mutex<Adaptations>,
    prices: Arc<PriceTable>,
    /// Every request of the session, priced at the model it used; one ledger for the whole
    /// session, shared with the `Llm` a `/model` switch makes.
    ledger: Arc<Mutex<Ledger>>,
    /// The model in use: `config.model` until a fallback takes over.
    model: Mutex<String>,
    fallbacks_used: AtomicUsize,
    /// `--trace FILE`: requests and stream lines are written there.
    trace: Option<Arc<Trace>>,
    /// Some reply came without usage, so its tokens were estimated; the summary says so.
    estimated: AtomicBool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Adaptations {
    max_completion_tokens: bool,
    omit_temperature: bool,
    omit_stream_options: bool,
    /// Send `""` rather than `null` as an assistant message's missing content.
    empty_content: bool,
    /// The provider's context window, once it said so; smaller than the configured one.
    context_limit: Option<u64>,
}

/// Why one attempt failed, and so what `stream` does next.
enum Failure {
    /// The request was changed after a 400; send it again at once.
    Adapted,
    /// A 404: the model does not exist here; a fallback may.
    ModelMissing(String),
    Retryable {
        why: String,
        wait: Option<Duration>,
    },
    Fatal(Error),
}

impl Llm {
    pub fn new(config: Config) -> Llm {
        let http = http::agent(&config);
        let model = Mutex::new(config.model.clone());
        Llm {
            model,
            config,
            http: Mutex::new(http),
            adaptations: Mutex::new(Adaptations::default()),
            prices: Arc::new(PriceTable::builtin()),
            ledger: Arc::new(Mutex::new(Ledger::default())),
            estimated: AtomicBool::new(false),
            trace: None,
            fallbacks_used: AtomicUsize::new(0),
        }
    }

    /// A whole answer that no one watches (the compaction summary): the same streamed request
    /// without tools, collected, so retries, adaptation and cost work exactly as for a turn.
    pub fn complete(&self, messages: &[Message], cancel: &AtomicBool) -> Result<String, Error> {
        self.stream(messages, &[], cancel, &mut |_| {})
            .map(|reply| reply.text)
    }

    /// Send the history and stream the reply, retrying transient failures with backoff.
    pub fn stream(
        &self,
        messages: &[Message],
        tools: &[Value],
        cancel: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Error> {
        self.check_budget()?;
        loop {
            let why = match self.stream_with_retries(messages, tools, cancel, on_event) {
                Ok(reply) => return Ok(reply),
                Err(Failure::Fatal(error)) => return Err(error),
                Err(Failure::Retryable { why, .. }) => {
                    format!("{why} (gave up after {MAX_RETRIES} retries)")
                }
                Err(Failure::ModelMissing(why)) => why,
                Err(Failure::Adapted) => continue,
            };
            // The model keeps failing: the same request goes to the next fallback, if any.
            let Some(model) = self.switch_to_fallback() else {
                return Err(Error::Api(why));
            };
            on_event(Event::Fallback {
                model: &model,
                why: &why,
            });
        }
    }

    /// Send the request until it succeeds, fails for good, or the retries are spent.
    fn stream_with_retries(
        &self,
        messages: &[Message],
        tools: &[Value],
        cancel: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Failure> {
        let mut retries = 0;
        loop {
            match self.attempt_interruptibly(messages, tools, cancel, on_event) {
                Ok(reply) => {
                    self.count_usage(&reply, messages);
                    return Ok(reply);
                }
                Err(Failure::Adapted) => continue,
                Err(Failure::Retryable { why, wait }) if retries < MAX_RETRIES => {
                    // About 1, 2, 4, 8 s, unless the server said how long to wait.
                    let wait = wait.unwrap_or(Duration::from_secs(1 << retries));
                    retries += 1;
                    on_event(Event::Retry {
                        attempt: retries,
                        wait,
                        why: &why,
                    });
                    http::sleep_unless_cancelled(wait.min(MAX_RETRY_AFTER), cancel)
                        .map_err(Failure::Fatal)?;
                }
                Err(failure) => return Err(failure),
            }
        }
    }

    /// One attempt that Ctrl+C cuts off at once, even while the server is silent: a watcher
    /// thread shuts the HTTP agent down, which wakes the blocked read.
    fn attempt_interruptibly(
        &self,
        messages: &[Message],
        tools: &[Value],
        cancel: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Failure> {
        let http = match self.http.lock() {
            Ok(agent) => agent.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let (done, finished) = crossbeam_channel::bounded::<()>(0);
        let result = std::thread::scope(|scope| {
            scope.spawn(|| http::shut_down_on_cancel(&http, cancel, &finished));
            let result = self.attempt(&http, messages, tools, cancel, on_event);
            // Dropping the sender wakes the watcher at once, so it costs no latency.
            drop(done);
            result
        });
        if cancel.load(Ordering::Relaxed) {
            // A shut-down agent refuses every later request, so the next one gets a new agent.
            if let Ok(mut agent) = self.http.lock() {
                *agent = http::agent(&self.config);
            }
            return Err(Failure::Fatal(Error::Interrupted));
        }
        result
    }

    fn attempt(
        &self,
        http: &ureq::Agent,
        messages: &[Message],
        tools: &[Value],
        cancel: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Failure> {
        let limits = sse::Limits {
            idle: self.config.idle_timeout,
            deadline: Some(Instant::now() + self.config.request_timeout),
        };
        let body = self.request_body(messages, tools);
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let mut request = http.post(&url);
        // Local servers run without a key; sending "Bearer " with nothing after it confuses some.
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        if let Some(trace) = &self.trace {
            trace.record("request", json!({"url": url, "body": body}));
        }
        let response = request
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream")
            .send(body.to_string());
        let response = match response {
            Ok(response) => response,
            Err(e) => return Err(transport_failure(e, &url)),
        };
        match response.status().as_u16() {
            200 => self.read_reply(response, cancel, &limits, on_event),
            status => Err(self.failed_answer(status, response, &url, messages)),
        }
    }

    /// A non-200 answer: what the server said (its whole body to `--trace`) decides whether
    /// the request is adapted, retried or given up.
    fn failed_answer(
        &self,
        status: u16,
        response: ureq::http::Response<ureq::Body>,
        url: &str,
        messages: &[Message],
    ) -> Failure {
        let retry_after = http::retry_after(response.headers());
        let body = http::error_body(response.into_body().into_reader());
        if let Some(trace) = &self.trace {
            trace.record("http_error", json!({"status": status, "body": body}));
        }
        let message = http::message_in(&body);
        self.status_failure(status, &message, retry_after, (url, messages))
    }

    /// A 200: the event stream read by `sse::read_stream`, or, when the body turns out to be
    /// something else (a page, a JSON error, a whole completion), that (`llm/body.rs`).
    fn read_reply(
        &self,
        response: ureq::http::Response<ureq::Body>,
        cancel: &AtomicBool,
        limits: &sse::Limits,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Failure> {
        let content_type = (response.headers().get("content-type"))
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut body = BufReader::new(response.into_body().into_reader());
        let start = body::first_line(&mut body).map_err(|e| Failure::Retryable {
            why: format!("the stream broke: {e}"),
            wait: None,
        })?;
        if !body::is_event_stream(&content_type, &start) {
            let text = body::read_whole(&start, &mut body);
            if let Some(trace) = &self.trace {
                let fields = json!({"content_type": content_type, "body": text});
                trace.record("not_a_stream", fields);
            }
            return body::whole_answer(&content_type, &text, on_event);
        }
        // The line already read goes first, as if it had never been taken out.
        let mut body = Cursor::new(start).chain(body);
        let mut traced;
        let reader: &mut dyn BufRead = match &self.trace {
            Some(trace) => {
                traced = Tee::new(&mut body, trace);
                &mut traced
            }
            None => &mut body,
        };
        let read = sse::read_stream(reader, cancel, limits, on_event);
        read.map_err(|e| self.stream_failure(e))
    }

    /// A stream that broke is retried; one that broke a limit would only break it again.
    fn stream_failure(&self, error: StreamError) -> Failure {
        let limit = match error {
            StreamError::Interrupted => return Failure::Fatal(Error::Interrupted),
            StreamError::Provider(message) => {
                let why = format!("the provider sent an error mid-stream: {message}");
                return Failure::Retryable { why, wait: None };
            }
            StreamError::Deadline => format!(
                "{error} (CORECODER_REQUEST_TIMEOUT, {} s)",
                self.config.request_timeout.as_secs()
            ),
            StreamError::TooLarge(_) => format!(
                "{error}: past {} MiB, or a line past {} MiB; stopped reading",
                sse::MAX_REPLY >> 20,
                sse::MAX_LINE >> 20
            ),
            other => {
                let why = format!("the stream broke: {other}");
                return Failure::Retryable { why, wait: None };
            }
        };
        Failure::Fatal(Error::Api(limit))
    }

    fn request_body(&self, messages: &[Message], tools: &[Value]) -> Value {
        let adapt = self.adaptations();
        let mut body = json!({
            "model": self.model(),
            "messages": messages,
            "stream": true,
        });
        if adapt.empty_content {
            empty_for_null_content(&mut body["messages"]);
        }
        if !tools.is_empty() {
            body["tools"] = json!(tools);
            if let Some(choice) = &self.config.tool_choice {
                body["tool_choice"] = json!(choice.as_str());
            }
        }
        if !adapt.omit_stream_options {
            body["stream_options"] = json!({"include_usage": true});
        }
        if !adapt.omit_temperature {
            body["temperature"] = json!(self.config.temperature);
        }
        let limit_key = match adapt.max_completion_tokens {
            true => "max_completion_tokens",
            false => "max_tokens",
        };
        body[limit_key] = json!(self.config.max_tokens);
        body
    }
}

/// `content: null` becomes `""` (see `adapt_null_content`).
fn empty_for_null_content(messages: &mut Value) {
    for message in messages.as_array_mut().into_iter().flatten() {
        if message["content"].is_null() {
            message["content"] = json!("");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(llm: &Llm, message: &str) -> (bool, Value) {
        let adapted = llm.adapt_to(message);
        (adapted, llm.request_body(&[Message::user("hi")], &[]))
    }

    #[test]
    fn each_adaptation_happens_once_and_sticks() {
        let llm = Llm::new(Config::default());
        let body = llm.request_body(&[], &[]);
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(body["stream_options"]["include_usage"], true);
        let (adapted, body) = check(&llm, "Unsupported parameter: 'max_tokens' is not supported");
        assert!(adapted);
        assert_eq!(
            (body.get("max_tokens"), &body["max_completion_tokens"]),
            (None, &json!(4096))
        );
        assert!(!check(&llm, "Unsupported parameter: 'max_tokens'").0);
        let (adapted, body) = check(&llm, "'temperature' does not support 0");
        assert!(adapted && body.get("temperature").is_none());
        let (adapted, body) = check(&llm, "stream_options is not allowed");
        assert!(adapted && body.get("stream_options").is_none());
        assert!(!check(&llm, "some other 400").0);
    }
}
