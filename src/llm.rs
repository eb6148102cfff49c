//! The LLM client: one streamed chat-completions request, with retries and 400 adaptation.
//!
//! The agent loop calls `Llm::stream` once per round. It builds the JSON body, POSTs it with
//! `ureq` (blocking), hands the body reader to `sse::read_stream`, and returns the reassembled
//! `Reply`. Retries re-issue the *whole* request; there is no other retry layer anywhere.
//! It does not parse tool arguments, run tools or touch the history.

use crate::config::Config;
use crate::context;
use crate::cost::{Ledger, PriceTable};
use crate::error::Error;
use crate::http;
use crate::message::Message;
use crate::sse::{self, Delta, Reply, StreamError, StreamedCall, Usage};
use crate::trace::{Tee, Trace};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MAX_RETRIES: u32 = 4;
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

pub struct Llm {
    config: Config,
    /// Replaced after Ctrl+C: shutting an agent down is how a blocked request is woken.
    http: Mutex<ureq::Agent>,
    /// Learnt from 400 answers; shared by every request (and sub-agent) of the session.
    adaptations: Mutex<Adaptations>,
    prices: Arc<PriceTable>,
    /// Every request of the session, priced at the model it used.
    ledger: Mutex<Ledger>,
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
}

/// What the caller sees while a request is under way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    Text(&'a str),
    Reasoning(&'a str),
    /// A tool call is complete while the rest of the reply still streams.
    CallReady(&'a StreamedCall),
    /// The current model kept failing; from now on requests go to `model`.
    Fallback {
        model: &'a str,
        why: &'a str,
    },
    /// The attempt failed and will be re-issued after `wait`; text already shown is void.
    Retry {
        attempt: u32,
        wait: Duration,
        why: &'a str,
    },
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
            ledger: Mutex::new(Ledger::default()),
            estimated: AtomicBool::new(false),
            trace: None,
            fallbacks_used: AtomicUsize::new(0),
        }
    }

    /// Write every request and stream line to `trace` (the agent adds tool calls).
    pub fn with_trace(mut self, trace: Trace) -> Llm {
        self.trace = Some(Arc::new(trace));
        self
    }

    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_deref()
    }

    /// Price requests with this table (the built-in one plus `~/.corecoder/pricing.json`).
    pub fn with_prices(mut self, prices: PriceTable) -> Llm {
        self.prices = Arc::new(prices);
        self
    }

    /// The same session on another model: a fresh connection and adaptations; the ledger
    /// carries over, so what was spent stays priced at the model that spent it.
    pub fn with_model(&self, model: &str) -> Llm {
        let config = Config {
            model: model.to_string(),
            ..self.config.clone()
        };
        let mut llm = Llm::new(config);
        llm.prices = self.prices.clone();
        llm.trace = self.trace.clone();
        llm.ledger = Mutex::new(self.ledger());
        llm.estimated = AtomicBool::new(self.estimated.load(Ordering::Relaxed));
        llm
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Tokens used by every request of this session so far (sub-agents and summaries included).
    pub fn usage(&self) -> Usage {
        self.ledger().usage()
    }

    /// Dollars spent so far by priced requests.
    pub fn dollars(&self) -> f64 {
        self.ledger().dollars()
    }

    /// Tokens and dollars so far, as one line (`/tokens`, the end of a `-p` run).
    pub fn cost_summary(&self) -> String {
        let summary = self.ledger().summary();
        match self.estimated.load(Ordering::Relaxed) {
            true => format!("{summary} (partly estimated: the provider did not report usage)"),
            false => summary,
        }
    }

    fn ledger(&self) -> Ledger {
        self.ledger.lock().map(|l| l.clone()).unwrap_or_default()
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

    /// `--max-cost`: refuse a request once the session has spent the budget.
    fn check_budget(&self) -> Result<(), Error> {
        let (Some(budget), spent) = (self.config.max_cost, self.ledger().dollars()) else {
            return Ok(());
        };
        match spent >= budget {
            true => Err(Error::Budget(format!(
                "${spent:.4} spent of the ${budget:.4} allowed (--max-cost)"
            ))),
            false => Ok(()),
        }
    }

    /// Move to the next model of `CORECODER_FALLBACK_MODELS`, for the rest of the session.
    fn switch_to_fallback(&self) -> Option<String> {
        let next = self
            .config
            .fallback_models
            .get(self.fallbacks_used.fetch_add(1, Ordering::Relaxed))?;
        if let Ok(mut model) = self.model.lock() {
            *model = next.clone();
        }
        Some(next.clone())
    }

    /// The model requests go to now (the configured one, or a fallback after failures).
    pub fn model(&self) -> String {
        self.model
            .lock()
            .map(|m| m.clone())
            .unwrap_or_else(|_| self.config.model.clone())
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
            Err(e) => return Err(transport_failure(e)),
        };
        let status = response.status().as_u16();
        if status != 200 {
            let retry_after = http::retry_after(response.headers());
            let message = http::error_message(response.into_body().into_reader());
            if let Some(trace) = &self.trace {
                trace.record("http_error", json!({"status": status, "message": message}));
            }
            return Err(self.status_failure(status, &message, retry_after));
        }
        let mut body = BufReader::new(response.into_body().into_reader());
        let mut traced;
        let reader: &mut dyn BufRead = match &self.trace {
            Some(trace) => {
                traced = Tee::new(&mut body, trace);
                &mut traced
            }
            None => &mut body,
        };
        let mut on_delta = |delta: Delta| match delta {
            Delta::Text(text) => on_event(Event::Text(text)),
            Delta::Reasoning(text) => on_event(Event::Reasoning(text)),
            Delta::CallReady(call) => on_event(Event::CallReady(call)),
        };
        sse::read_stream(reader, cancel, &mut on_delta).map_err(|e| match e {
            StreamError::Interrupted => Failure::Fatal(Error::Interrupted),
            StreamError::Provider(message) => Failure::Retryable {
                why: format!("the provider sent an error mid-stream: {message}"),
                wait: None,
            },
            other => Failure::Retryable {
                why: format!("the stream broke: {other}"),
                wait: None,
            },
        })
    }

    fn request_body(&self, messages: &[Message], tools: &[Value]) -> Value {
        let adapt = self.adaptations();
        let mut body = json!({
            "model": self.model(),
            "messages": messages,
            "stream": true,
        });
        if !tools.is_empty() {
            body["tools"] = json!(tools);
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

    /// A non-200 answer: adapt to a known 400 once, retry what is transient, fail the rest.
    fn status_failure(&self, status: u16, message: &str, wait: Option<Duration>) -> Failure {
        if status == 400 && self.adapt_to(message) {
            return Failure::Adapted;
        }
        if (status == 400 || status == 413) && is_context_overflow(status, message) {
            return Failure::Fatal(Error::ContextTooLong(message.to_string()));
        }
        if status == 408 || status == 429 || status >= 500 {
            let why = format!("HTTP {status}: {message}");
            return Failure::Retryable { why, wait };
        }
        if status == 404 {
            let why = format!("HTTP 404: {message} (check the base URL and the model name)");
            return Failure::ModelMissing(why);
        }
        let hint = match status {
            401 => " (the API key was rejected; check CORECODER_API_KEY)",
            403 => " (the key may not have access to this model)",
            _ => "",
        };
        Failure::Fatal(Error::Api(format!("HTTP {status}: {message}{hint}")))
    }

    /// Providers disagree on three request fields; each is dropped or renamed at most once.
    fn adapt_to(&self, message: &str) -> bool {
        let Ok(mut adapt) = self.adaptations.lock() else {
            return false;
        };
        let flag = if message.contains("'max_tokens'") {
            &mut adapt.max_completion_tokens
        } else if message.contains("'temperature'") {
            &mut adapt.omit_temperature
        } else if message.contains("stream_options") {
            &mut adapt.omit_stream_options
        } else {
            return false;
        };
        let first_time = !*flag;
        *flag = true;
        first_time
    }

    fn adaptations(&self) -> Adaptations {
        self.adaptations.lock().map(|a| *a).unwrap_or_default()
    }

    /// Add this reply's usage to the session totals, estimating when the provider sent none.
    fn count_usage(&self, reply: &Reply, messages: &[Message]) {
        let usage = reply.usage.clone().unwrap_or_else(|| {
            self.estimated.store(true, Ordering::Relaxed);
            estimate_usage(reply, messages)
        });
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.record(&self.prices, &self.model(), &usage);
        }
    }
}

/// How providers word "your prompt does not fit": OpenAI, DeepSeek, Qwen and vLLM say
/// "maximum context length", Anthropic "prompt is too long"; a 413 is always about size.
fn is_context_overflow(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    let phrases = [
        "context_length_exceeded",
        "maximum context length",
        "context length",
        "context window",
        "prompt is too long",
        "too many tokens",
        "reduce the length",
    ];
    status == 413 || phrases.iter().any(|p| message.contains(p))
}

/// Connection-level errors: retry what a second try could fix.
fn transport_failure(error: ureq::Error) -> Failure {
    match error {
        ureq::Error::Io(_)
        | ureq::Error::Timeout(_)
        | ureq::Error::ConnectionFailed
        | ureq::Error::HostNotFound
        | ureq::Error::Protocol(_) => Failure::Retryable {
            why: format!("request failed: {error}"),
            wait: None,
        },
        other => Failure::Fatal(Error::Api(format!("request failed: {other}"))),
    }
}

/// The same per-content-type estimate compaction uses, for providers that report no usage.
fn estimate_usage(reply: &Reply, messages: &[Message]) -> Usage {
    let arguments: String = reply
        .tool_calls
        .iter()
        .map(|c| c.arguments.as_str())
        .collect();
    let completion = [&reply.text, &reply.reasoning, &arguments];
    Usage {
        prompt_tokens: context::estimate_messages(messages) as u64,
        completion_tokens: completion
            .iter()
            .map(|t| context::estimate_text(t))
            .sum::<usize>() as u64,
        cached_tokens: 0,
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
