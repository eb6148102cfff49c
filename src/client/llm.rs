//! The LLM client: the loop calls `Llm::stream` once per round; it POSTs the history (`http.rs`),
//! reads the body with the dialect's reader (`Extras::dialect`; chat completions: `sse.rs`),
//! refuses a reply no model sends (`wire::well_formed`) and retries the *whole* request when what
//! failed is transient (no other layer retries). Body and URL are chat completions' (`wire.rs`,
//! `http.rs`) unless the dialect says otherwise; provider oddities are `quirks.rs`', spending,
//! fallback models and the trace `Extras::account`'s. It runs no tool and touches no history.

use crate::client::quirks::Quirks;
use crate::client::{http, sse, wire};
use crate::core::config::Config;
use crate::core::event::{Broke, Error, Event};
use crate::core::message::{Message, Reply};
use crate::extras::Extras;
use crate::tools::support::cancel::{self, Cancelled, sleep_unless_cancelled};
use crate::tools::support::{net, provider_errors};
use serde_json::Value;
use std::io::{BufReader, Cursor, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

const MAX_RETRIES: u32 = 4;

pub struct Llm {
    config: Config,
    /// Replaced after Ctrl+C: shutting an agent down is how a blocked request is woken.
    http: Mutex<ureq::Agent>,
    /// What this provider's answers taught (`quirks.rs`); shared by the agents of a session,
    /// and with `Extras`, which keeps it in the session log.
    pub(crate) quirks: Quirks,
}

/// What one attempt leads to: what `stream` does next.
enum Next {
    Replied(Reply),
    /// The request was changed after a 400: send it again at once.
    Adapted,
    /// Transient: send it again after `wait` (the server's `Retry-After`) or the backoff.
    Retry {
        why: String,
        wait: Option<Duration>,
    },
    /// A 404: this model is not served here; a fallback model may be.
    Fallback(String),
    Stop(Error),
}

impl Llm {
    pub fn new(config: Config) -> Llm {
        Llm {
            http: Mutex::new(http::agent(&config)),
            config,
            quirks: Quirks::default(),
        }
    }

    /// Another model: a fresh connection (the ledger and what was learnt are `extras`').
    pub fn with_model(&self, model: &str) -> Llm {
        let mut config = self.config.clone();
        config.model = model.to_string();
        Llm::new(config)
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The window to compact for: the configured one, or less if the provider said so.
    pub(crate) fn context_limit(&self) -> usize {
        self.quirks.context_limit(&self.config)
    }

    /// Send the history and stream the reply, retrying transient failures with backoff (about
    /// 1, 2, 4, 8 s) and moving to the next fallback model when one keeps failing.
    pub(crate) fn stream(
        &self,
        messages: &[Message],
        tools: &[Value],
        extras: &Extras,
        cancel: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Error> {
        let account = extras.account();
        account.check_budget(&self.config)?;
        let mut retries = 0;
        loop {
            let model = account.model(&self.config);
            let next =
                self.attempt_interruptibly(&model, messages, tools, extras, cancel, on_event);
            let why = match next {
                Next::Replied(reply) => {
                    account.count(&model, &reply, messages);
                    return wire::well_formed(reply);
                }
                Next::Adapted => continue,
                Next::Retry { why, wait } if retries < MAX_RETRIES => {
                    let wait = wait.unwrap_or(Duration::from_secs(1 << retries));
                    retries += 1;
                    on_event(Event::Retry {
                        attempt: retries,
                        wait,
                        why: &why,
                    });
                    // At most 30 s: `retry_after` caps what the server asks for.
                    sleep_unless_cancelled(wait, cancel).map_err(|Cancelled| Error::Interrupted)?;
                    continue;
                }
                Next::Retry { why, .. } => format!("{why} (gave up after {MAX_RETRIES} retries)"),
                Next::Fallback(why) => why,
                Next::Stop(error) => return Err(error),
            };
            account.fall_back(&self.config, why, on_event)?;
            retries = 0;
        }
    }

    /// One attempt Ctrl+C cuts off even while the server is silent: a watcher shuts the agent down.
    fn attempt_interruptibly(
        &self,
        model: &str,
        messages: &[Message],
        tools: &[Value],
        extras: &Extras,
        cancel: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Next {
        let http = ureq::Agent::clone(&self.http.lock().unwrap_or_else(PoisonError::into_inner));
        let (done, finished) = crossbeam_channel::bounded::<()>(0);
        let next = std::thread::scope(|scope| {
            scope.spawn(|| cancel::shut_down_on_cancel(&http, cancel, &finished));
            // The plain body, one piece, unless the dialect sends another (`Extras::dialect`).
            let (config, quirks) = (&self.config, &self.quirks);
            let other = extras
                .dialect()
                .body(config, model, messages, tools, quirks);
            let body = other.unwrap_or_else(|| {
                let body = wire::request_body(config, model, messages, tools);
                vec![Arc::from(quirks.adapted_body(config, body).to_string())]
            });
            let next = self.attempt(&http, &body, messages, extras, cancel, on_event);
            // Dropping the sender wakes the watcher at once, so it costs no latency.
            drop(done);
            next
        });
        if cancel.load(Ordering::Relaxed) {
            // A shut-down agent refuses every later request, so the next one gets a new agent.
            *self.http.lock().unwrap_or_else(PoisonError::into_inner) = http::agent(&self.config);
            return Next::Stop(Error::Interrupted);
        }
        next
    }

    fn attempt(
        &self,
        http: &ureq::Agent,
        sent_body: &[Arc<str>],
        messages: &[Message],
        extras: &Extras,
        cancel: &AtomicBool,
        on_event: &mut dyn FnMut(Event),
    ) -> Next {
        let limits = http::Limits {
            idle: self.config.idle_timeout,
            deadline: Some(Instant::now() + self.config.request_timeout),
        };
        let endpoint = extras.dialect().endpoint(&self.config);
        let (url, auth) = endpoint.unwrap_or_else(|| http::endpoint(&self.config));
        extras.account().trace_request(&url, sent_body);
        let response = match http::post(http, &url, &auth, sent_body) {
            Ok(response) => response,
            // Retry what a second try could fix; name the host and the proxy, as ureq does not.
            Err(e) => {
                let (why, hopeless) = net::failure(&e, &url);
                return match http::is_transient(&e) && !hopeless {
                    true => Next::Retry { why, wait: None },
                    false => Next::Stop(Error::Api(why)),
                };
            }
        };
        let status = response.status().as_u16();
        if status != 200 {
            // What the server said (its whole body to `--trace`) decides what comes next.
            let (wait, moved) = provider_errors::from_headers(status, response.headers());
            let body = provider_errors::error_body(response.into_body().into_reader());
            extras.account().trace_failure(status, &body);
            let message = moved.unwrap_or_else(|| provider_errors::message_in(&body));
            let model = &extras.account().model(&self.config);
            return self.status_failure(status, &message, wait, (&url, model, messages));
        }
        let (head, body) = response.into_parts();
        let (mut body, mut start) = (BufReader::new(body.into_reader()), vec![]);
        // A 200 that is not an event stream: a whole completion, or a page or error that fails.
        let trace = |kind: &str, text: &str| extras.account().trace_not_a_stream(kind, text);
        let quirks = &self.quirks;
        let whole = quirks.not_a_stream(&head.headers, &mut body, &mut start, &trace, on_event);
        if let Some(whole) = whole {
            return whole.map_or_else(|error| stream_failure(error, &self.config), Next::Replied);
        }
        // The line already read goes first, as if it had never been taken out.
        let mut body = Cursor::new(start).chain(body);
        let (mut reader, mut arrived) = (extras.account().tee(&mut body), String::new());
        let on_event = &mut |event: Event| extras.account().saw(&mut arrived, event, on_event);
        let dialect = extras.dialect();
        match dialect.read_stream(&self.config, &mut reader, cancel, &limits, on_event) {
            Ok(reply) => Next::Replied(reply),
            Err(error) => {
                extras.account().cut_off(&self.config, messages, &arrived);
                stream_failure(error, &self.config)
            }
        }
    }

    /// A non-200 answer: adapt to a known 400 once, retry what is transient, fail the rest.
    /// `message` is the server's whole message; what the user is shown is one line of it.
    fn status_failure(
        &self,
        status: u16,
        message: &str,
        wait: Option<Duration>,
        (url, model, messages): (&str, &str, &[Message]),
    ) -> Next {
        let quirks = &self.quirks;
        if quirks.adapt_to(&self.config, status, message, messages) {
            return Next::Adapted;
        }
        if quirks.does_not_fit(&self.config, status, message) {
            return Next::Stop(Error::ContextTooLong(message.to_string()));
        }
        let said = crate::tools::support::text::headline(message);
        let hint = provider_errors::what_to_check(status, url, model, &self.config.api_key_from);
        let why = format!("HTTP {status}: {said}{hint}");
        match status {
            408 | 429 | 500.. => Next::Retry { why, wait },
            404 => Next::Fallback(why),
            _ => Next::Stop(Error::Api(why)),
        }
    }
}

/// A stream that broke is retried; one that broke a limit would only break it again.
fn stream_failure(error: Error, config: &Config) -> Next {
    let why = match &error {
        Error::Stream(Broke::Provider(message)) => {
            format!("the provider sent an error mid-stream: {message}")
        }
        Error::Stream(Broke::Deadline) => {
            let secs = config.request_timeout.as_secs();
            let why = format!("{error} (CORECODER_REQUEST_TIMEOUT, {secs} s)");
            return Next::Stop(Error::Api(why));
        }
        Error::Stream(Broke::TooLarge(_)) => {
            let (reply, line) = (sse::MAX_REPLY >> 20, sse::MAX_LINE >> 20);
            let why =
                format!("{error}: past {reply} MiB, or a line past {line} MiB; stopped reading");
            return Next::Stop(Error::Api(why));
        }
        Error::Stream(_) => format!("the stream broke: {error}"),
        _ => return Next::Stop(error),
    };
    Next::Retry { why, wait: None }
}
