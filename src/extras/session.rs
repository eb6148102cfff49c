//! Sessions on disk, written as they happen: the agent loop owns a `SessionLog` and appends each
//! message the moment it joins the history, so a crash loses at most the line being written. The
//! REPL and `corecoder -c` use `list`, `latest_in` and `load` to resume.
//!
//! A session is one append-only JSON Lines file, `~/.corecoder/sessions/ID.jsonl`:
//!
//! ```text
//! {"type":"header","model":"…","cwd":"/home/me/project","started":1764457502}
//! {"role":"user","content":"fix the bug"}     one line per message, in the provider's shape
//! {"type":"replace","messages":[…]}            the history was rewritten (compaction, /reset)
//! {"type":"taught","model":"…","quirks":{…}}   what the provider's answers taught (`quirks.rs`)
//! ```
//!
//! Loading replays the lines in order. A session may also have names (`/save NAME`,
//! `session/names.rs`), and a session CoreCoder (the Python original) saved in the same folder
//! is listed and resumed too (`session/corecoder.rs`). This file does not decide *when* to
//! write, compacts nothing, and never deletes a session.
//!
//! Over 300 lines (about 370) on purpose: the writer and the reader of this one file format
//! stay together, so a change to the format is made, and reviewed, in one place.

pub(crate) mod corecoder;
pub(crate) mod listing;
pub(crate) mod names;

use crate::client::quirks::Adaptations;
use crate::core::message::{self, Message, Role};
use listing::Format;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The first line of every session: enough to list it and to find "the last one here".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) model: String,
    /// The dialect `model` was spoken in (`--provider`); absent in older sessions: `openai`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) provider: String,
    pub(crate) cwd: PathBuf,
    /// Unix seconds.
    pub(crate) started: u64,
}

/// A line that is not a message. Messages carry no "type" key, records always do.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Record {
    Header(Header),
    Replace {
        messages: Vec<Message>,
    },
    /// `/model NAME`: from here on the session talks to this model (a resume does too).
    Model {
        model: String,
    },
    /// What `model`'s provider taught (`content: null` sent as `""`, …): a resume starts with it.
    Taught {
        model: String,
        quirks: Adaptations,
    },
}

/// What one line of a session file can be. A message is tried first: it is the common case and
/// is recognised by its "role"; header and replace lines have none, so they fall through.
#[derive(Deserialize)]
#[serde(untagged)]
enum Line {
    Message(Message),
    Record(Record),
}

/// An open, append-only session file.
#[derive(Debug)]
pub(crate) struct SessionLog {
    dir: PathBuf,
    id: String,
    file: File,
}

impl SessionLog {
    /// Create a new log with a fresh id such as `20261129-231502-4821` (UTC start time, then four
    /// digits so two sessions started in the same second differ) and write the header line.
    pub(crate) fn create(dir: &Path, header: &Header) -> io::Result<SessionLog> {
        fs::create_dir_all(dir)?;
        let stamp = utc_stamp(header.started);
        // Four digits that differ between processes and, usually, between calls.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let seed = std::process::id() ^ nanos.subsec_nanos();
        for attempt in 0..100 {
            let id = format!("{stamp}-{:04}", (seed + attempt) % 10_000);
            let path = dir.join(format!("{id}.jsonl"));
            // `create_new` checks that the id is free and claims it in one step.
            // 0600: a session is the conversation, and may quote secrets the model read.
            let mut options = OpenOptions::new();
            options.append(true).create_new(true).mode(0o600);
            match options.open(path) {
                Ok(file) => {
                    let dir = dir.to_path_buf();
                    let mut log = SessionLog { dir, id, file };
                    log.write_record(&Record::Header(header.clone()))?;
                    return Ok(log);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        let taken = format!("no free session id for {stamp} in {}", dir.display());
        Err(io::Error::new(io::ErrorKind::AlreadyExists, taken))
    }

    /// Reopen an existing log (by id or name) for appending after a resume; no new header is
    /// written. CoreCoder's session goes on in a log of ours beside it, `header` first.
    pub(crate) fn reopen(dir: &Path, id: &str, header: &Header) -> Result<SessionLog, String> {
        let id = names::resolve(dir, id)?;
        let path = path_for(dir, &id)?;
        let failed = |e: io::Error| format!("cannot reopen session {}: {e}", path.display());
        if !exists_ours(dir, &id) && exists(dir, &id) {
            return SessionLog::import(dir, &id, header).map_err(failed);
        }
        let mut file = open_append(&path).map_err(failed)?;
        // A file cut mid-line (a crash) must not glue the next message onto the broken line.
        if !ends_with_newline(&path).map_err(failed)? {
            file.write_all(b"\n").map_err(failed)?;
        }
        let dir = dir.to_path_buf();
        Ok(SessionLog { dir, id, file })
    }

    /// `ID.jsonl` started from CoreCoder's `ID.json`: the header, then its history as one line.
    fn import(dir: &Path, id: &str, header: &Header) -> io::Result<SessionLog> {
        let loaded = load(dir, id).map_err(io::Error::other)?;
        let mut options = OpenOptions::new();
        options.append(true).create_new(true).mode(0o600);
        let file = options.open(dir.join(format!("{id}.jsonl")))?;
        let (dir, id) = (dir.to_path_buf(), id.to_string());
        let mut log = SessionLog { dir, id, file };
        log.write_record(&Record::Header(header.clone()))?;
        log.replace(&loaded.messages)?;
        Ok(log)
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// One JSON line per message, written with a single `write_all` and flushed, so a crash loses
    /// at most the line being written (and the loader skips a half-written line).
    pub(crate) fn append(&mut self, message: &Message) -> io::Result<()> {
        self.write_line(serde_json::to_string(message)?)
    }

    /// The history was rewritten (compaction, /reset): record the whole new history as one line,
    /// so a resume replays the rewrite instead of the messages it replaced.
    pub(crate) fn replace(&mut self, history: &[Message]) -> io::Result<()> {
        let messages = history.to_vec();
        self.write_record(&Record::Replace { messages })
    }

    /// `model`'s provider taught the client something (`client/quirks.rs`): a resume knows it.
    pub(crate) fn record_taught(&mut self, model: &str, quirks: Adaptations) -> io::Result<()> {
        let model = model.to_string();
        self.write_record(&Record::Taught { model, quirks })
    }

    /// The session switched to `model` (`/model`): a resume picks it up from here.
    pub(crate) fn record_model(&mut self, model: &str) -> io::Result<()> {
        let model = model.to_string();
        self.write_record(&Record::Model { model })
    }

    /// `/save NAME`: the session gets a name beside its id (`session/names.rs`); both resume it.
    pub(crate) fn name(&self, name: &str) -> Result<String, String> {
        names::give(&self.dir, &self.id, name)
    }

    fn write_record(&mut self, record: &Record) -> io::Result<()> {
        self.write_line(serde_json::to_string(record)?)
    }

    fn write_line(&mut self, mut line: String) -> io::Result<()> {
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}

fn ends_with_newline(path: &Path) -> io::Result<bool> {
    let mut file = open_own(path, OpenOptions::new().read(true))?;
    let length = file.metadata()?.len();
    if length == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(length - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Appending to an existing file only: a session that vanished is an error, not a new file.
fn open_append(path: &Path) -> io::Result<File> {
    open_own(path, OpenOptions::new().append(true))
}

/// Open a session file, refusing anything but a plain file with no other name: `-r NAME` on
/// a symlink (or hard link) planted in the sessions directory would append to what it points
/// at (`~/.bashrc`). `O_NONBLOCK` so that a FIFO planted there is refused, not waited on.
fn open_own(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let file = options
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => io::Error::other("it is a symbolic link, which is not followed"),
            _ => e,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.nlink() != 1 {
        return Err(io::Error::other(
            "it is not a plain file of its own (a hard link?)",
        ));
    }
    Ok(file)
}

/// `YYYYMMDD-HHMMSS` in UTC, computed here to avoid a date dependency.
/// `2026-11-29 23:15 UTC`, for `/sessions`.
pub(crate) fn utc_minute(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let stamp = utc_stamp(secs);
    let (date, clock) = (&stamp[..8], &stamp[9..13]);
    let (year, month, day) = (&date[..4], &date[4..6], &date[6..]);
    format!("{year}-{month}-{day} {}:{} UTC", &clock[..2], &clock[2..])
}

fn utc_stamp(unix_secs: u64) -> String {
    let (year, month, day) =
        crate::tools::support::text::civil_from_days((unix_secs / 86_400) as i64);
    let secs = unix_secs % 86_400;
    let (hour, minute, second) = (secs / 3600, secs % 3600 / 60, secs % 60);
    format!("{year:04}{month:02}{day:02}-{hour:02}{minute:02}{second:02}")
}

/// A session as `load` rebuilt it.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) header: Option<Header>,
    /// The model the session last talked to: the header's, or a later `/model` switch.
    pub(crate) model: Option<String>,
    pub(crate) messages: Vec<Message>,
    /// Lines that were not valid JSON of a known shape (e.g. one cut by a crash).
    pub(crate) skipped: usize,
    /// What `message::repair_tool_pairs` had to fix (e.g. a tool call interrupted by the crash).
    pub(crate) repaired: usize,
    /// The last thing a provider taught, and the model it was taught for.
    pub(crate) taught: Option<(String, Adaptations)>,
}

/// Load a session by id or name: replay its lines in order (or read CoreCoder's file), skip
/// the unreadable ones, and repair the history so it can be sent to a provider again.
pub(crate) fn load(dir: &Path, id: &str) -> Result<Loaded, String> {
    let id = names::resolve(dir, id)?;
    let format = match exists_ours(dir, &id) || !exists(dir, &id) {
        true => Format::Log,
        false => Format::CoreCoder,
    };
    let path = match format {
        Format::Log => path_for(dir, &id)?,
        Format::CoreCoder => corecoder_path(dir, &id)?,
    };
    let read = match format {
        Format::Log => replay(&path, Until::End).map_err(|e| e.to_string()),
        Format::CoreCoder => corecoder::read(&path),
    };
    let mut loaded = read.map_err(|e| format!("cannot read session {}: {e}", path.display()))?;
    // The agent rebuilds its system prompt every round (history index 0), so a stored one is
    // stale: drop it rather than send two.
    loaded.messages.retain(|m| m.role != Role::System);
    loaded.repaired = message::repair_tool_pairs(&mut loaded.messages);
    Ok(loaded)
}

/// How far `replay` reads: the whole file to resume, the first lines to list it.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Until {
    End,
    FirstUserMessage,
}

/// Read a session line by line, applying each line to the history as it comes.
pub(crate) fn replay(path: &Path, until: Until) -> io::Result<Loaded> {
    let mut reader = BufReader::new(open_own(path, OpenOptions::new().read(true))?);
    let mut loaded = Loaded::default();
    // Bytes, not `String`: a line cut inside a UTF-8 character must be skipped, not fail the read.
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(loaded);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(&line) {
            Ok(Line::Message(message)) => loaded.messages.push(message),
            Ok(Line::Record(Record::Header(header))) => {
                loaded.model.get_or_insert(header.model.clone());
                loaded.header.get_or_insert(header);
            }
            Ok(Line::Record(Record::Model { model })) => loaded.model = Some(model),
            Ok(Line::Record(Record::Taught { model, quirks })) => {
                loaded.taught = Some((model, quirks));
            }
            Ok(Line::Record(Record::Replace { messages })) => loaded.messages = messages,
            Err(_) => loaded.skipped += 1,
        }
        if until == Until::FirstUserMessage && first_user_text(&loaded.messages).is_some() {
            return Ok(loaded);
        }
    }
}

pub(crate) fn first_user_text(messages: &[Message]) -> Option<&str> {
    let first = messages.iter().find(|m| m.role == Role::User)?;
    first.content.as_deref()
}

/// The most recent session whose header cwd equals `cwd` (for `corecoder -c`). Paths are
/// compared as given: the caller passes the same form it writes into headers.
pub(crate) fn latest_in(dir: &Path, cwd: &Path) -> Option<String> {
    let ours = listing::by_recency(dir)
        .into_iter()
        .filter(|s| s.3 == Format::Log);
    ours.into_iter().find_map(|(id, _, path, _)| {
        let header = replay(&path, Until::FirstUserMessage).ok()?.header?;
        (header.cwd == cwd).then_some(id)
    })
}

/// Whether a session of ours has this id.
pub(crate) fn exists_ours(dir: &Path, id: &str) -> bool {
    path_for(dir, id).is_ok_and(|path| fs::symlink_metadata(path).is_ok())
}

/// Whether any session has this id: ours, or CoreCoder's.
fn exists(dir: &Path, id: &str) -> bool {
    let corecoder = corecoder_path(dir, id).is_ok_and(|p| fs::symlink_metadata(p).is_ok());
    exists_ours(dir, id) || corecoder
}

pub(crate) fn corecoder_path(dir: &Path, id: &str) -> Result<PathBuf, String> {
    Ok(dir.join(format!("{}{}", sanitize_id(id)?, corecoder::SUFFIX)))
}

/// A session id as a safe file stem: a trailing `.jsonl` dropped, then `[A-Za-z0-9._-]`, 1 to
/// 100 characters, not `.` or `..`. A path (`../../x`, `a/b`) is refused, not cut to its last
/// part: `-r ../../x` resuming some other `x` would be a surprise.
pub fn sanitize_id(raw: &str) -> Result<String, String> {
    if raw.contains(['/', '\\']) {
        let raw = crate::tools::support::text::echo(raw);
        return Err(format!(
            "{raw:?} is a path; a session is named by its id alone (see /sessions)"
        ));
    }
    let id = raw.strip_suffix(".jsonl").unwrap_or(raw);
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    // All-ASCII once `allowed` holds, so `len` counts characters.
    if id.is_empty() || id == "." || id == ".." || id.len() > 100 || !id.chars().all(allowed) {
        let rule = "1 to 100 letters, digits, '.', '_' or '-', and not . or ..";
        let raw = crate::tools::support::text::echo(raw);
        return Err(format!("{raw:?} is not a valid session name: use {rule}"));
    }
    Ok(id.to_string())
}

/// The file of session `id`: sanitised, joined, and checked to sit directly under `dir`.
pub fn path_for(dir: &Path, id: &str) -> Result<PathBuf, String> {
    let id = sanitize_id(id)?;
    let path = dir.join(format!("{id}.jsonl"));
    // Belt and braces: sanitize_id already forbids separators, this guards any future change.
    if path.parent() != Some(dir) {
        return Err(format!("{id:?} would leave the sessions directory"));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::ToolCall;
    use std::time::Duration;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("corecoder-session-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn header(cwd: &str) -> Header {
        let (model, cwd) = ("test-model".to_string(), PathBuf::from(cwd));
        Header {
            model,
            provider: String::new(),
            cwd,
            started: 1_764_457_502,
        }
    }

    fn new_session(dir: &Path, cwd: &str, messages: &[Message]) -> String {
        let mut log = SessionLog::create(dir, &header(cwd)).expect("create");
        for message in messages {
            log.append(message).expect("append");
        }
        log.id().to_string()
    }

    fn append_raw(dir: &Path, id: &str, text: &str) {
        let mut file = open_append(&path_for(dir, id).unwrap()).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    fn set_age(dir: &Path, id: &str, secs_after_epoch: u64) {
        let file = open_append(&path_for(dir, id).unwrap()).unwrap();
        let time = UNIX_EPOCH + Duration::from_secs(secs_after_epoch);
        file.set_modified(time).unwrap();
    }

    fn texts(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|m| m.content.clone().unwrap_or_default())
            .collect()
    }

    #[test]
    fn round_trip_drops_the_system_prompt() {
        let dir = scratch("round-trip");
        let history = [
            Message::system("you are corecoder"),
            Message::user("fix the bug"),
            Message::assistant("done"),
        ];
        let id = new_session(&dir, "/p", &history);
        assert_eq!(id.len(), "20251129-230502-4821".len());
        assert!(id.starts_with("20251129-230502-"), "{id}");
        let loaded = load(&dir, &id).unwrap();
        assert_eq!(loaded.header, Some(header("/p")));
        assert_eq!(loaded.messages, history[1..].to_vec());
        assert_eq!((loaded.skipped, loaded.repaired), (0, 0));
        let other = new_session(&dir, "/p", &[]);
        assert_ne!(id, other, "two sessions in the same second differ");
        assert!(load(&dir, "missing").is_err());
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(1_764_457_502), "20251129-230502");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(4_107_542_399), "21000228-235959");
    }

    #[test]
    fn a_file_cut_mid_line_loads_the_rest() {
        let dir = scratch("cut");
        let history = [Message::user("hi"), Message::assistant("héllo wörld")];
        let id = new_session(&dir, "/p", &history);
        let path = path_for(&dir, &id).unwrap();
        // Cut inside the "ö": the last line is neither complete JSON nor valid UTF-8.
        let text = fs::read_to_string(&path).unwrap();
        let cut = text.find("ö").unwrap() + 1;
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(cut as u64)
            .unwrap();
        let loaded = load(&dir, &id).unwrap();
        assert_eq!(texts(&loaded.messages), ["hi"]);
        assert_eq!(loaded.skipped, 1);
    }

    #[test]
    fn garbage_lines_in_the_middle_are_skipped() {
        let dir = scratch("garbage");
        let id = new_session(&dir, "/p", &[Message::user("one")]);
        append_raw(&dir, &id, "not json {\n\n{\"type\":\"unknown\"}\n[1,2]\n");
        let mut log = SessionLog::reopen(&dir, &id, &header("/p")).unwrap();
        log.append(&Message::assistant("two")).unwrap();
        let loaded = load(&dir, &id).unwrap();
        assert_eq!(texts(&loaded.messages), ["one", "two"]);
        assert_eq!(loaded.skipped, 3, "a blank line is not counted");
    }

    #[test]
    fn replace_lines_replay_in_order() {
        let dir = scratch("replace");
        let mut log = SessionLog::create(&dir, &header("/p")).unwrap();
        log.append(&Message::user("old question")).unwrap();
        log.append(&Message::assistant("old answer")).unwrap();
        let compacted = [Message::system("prompt"), Message::user("summary")];
        log.replace(&compacted).unwrap();
        log.append(&Message::assistant("new answer")).unwrap();
        let line = fs::read_to_string(path_for(&dir, log.id()).unwrap()).unwrap();
        assert!(line.contains(r#"{"type":"replace","messages":[{"role":"system""#));
        let loaded = load(&dir, log.id()).unwrap();
        assert_eq!(texts(&loaded.messages), ["summary", "new answer"]);
    }

    #[test]
    fn an_unanswered_tool_call_is_repaired() {
        let dir = scratch("repair");
        let call = ToolCall {
            id: "call_1".into(),
            name: "bash".into(),
            arguments: "{}".into(),
        };
        let asking = Message {
            tool_calls: vec![call],
            ..Message::assistant("")
        };
        let id = new_session(&dir, "/p", &[Message::user("run it"), asking]);
        let loaded = load(&dir, &id).unwrap();
        assert!(loaded.repaired >= 1);
        let last = loaded.messages.last().unwrap();
        assert_eq!(last.role, Role::Tool);
        assert_eq!(last.tool_call_id.as_deref(), Some("call_1"));
    }

    #[test]
    fn list_is_newest_first_with_previews() {
        let dir = scratch("list");
        assert!(
            listing::list(&dir, 10).is_empty(),
            "a missing directory has no sessions"
        );
        let long = format!("  line one\n\tline two {}", "x".repeat(80));
        let old = new_session(&dir, "/a", &[Message::user("old one")]);
        let middle = new_session(&dir, "/b", &[Message::user(&long)]);
        let new = new_session(&dir, "/c", &[Message::assistant("no user yet")]);
        set_age(&dir, &old, 1_000);
        set_age(&dir, &middle, 2_000);
        set_age(&dir, &new, 3_000);
        fs::write(dir.join("notes.txt"), "not a session").unwrap();
        fs::write(dir.join("bad name.jsonl"), "{}").unwrap();
        let all = listing::list(&dir, 10);
        let ids: Vec<_> = all.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, [&new, &middle, &old]);
        assert_eq!(all[0].preview, "");
        assert_eq!(all[1].preview.chars().count(), 60);
        assert!(all[1].preview.starts_with("line one line two xxx"));
        assert!(all[1].preview.ends_with('…'));
        assert_eq!(all[2].preview, "old one");
        assert_eq!(all[2].cwd, Some(PathBuf::from("/a")));
        assert_eq!(listing::list(&dir, 2).len(), 2);
    }

    #[test]
    fn latest_in_picks_by_cwd() {
        let dir = scratch("latest");
        let a_old = new_session(&dir, "/a", &[Message::user("1")]);
        let a_new = new_session(&dir, "/a", &[Message::user("2")]);
        let b = new_session(&dir, "/b", &[Message::user("3")]);
        set_age(&dir, &a_old, 1_000);
        set_age(&dir, &a_new, 2_000);
        set_age(&dir, &b, 3_000);
        assert_eq!(latest_in(&dir, Path::new("/a")), Some(a_new));
        assert_eq!(latest_in(&dir, Path::new("/b")), Some(b));
        assert_eq!(latest_in(&dir, Path::new("/c")), None);
    }

    #[test]
    fn a_name_resumes_the_log_and_its_id_still_does() {
        let dir = scratch("name");
        let header = header("/p");
        let log = SessionLog::create(&dir, &header).unwrap();
        let id = log.id().to_string();
        assert!(log.name("my work").is_err());
        assert_eq!(log.name("mywork.jsonl").unwrap(), "mywork");
        let mut again = SessionLog::reopen(&dir, "mywork", &header).unwrap();
        assert_eq!(again.id(), id);
        again.append(&Message::user("resumed")).unwrap();
        assert_eq!(texts(&load(&dir, &id).unwrap().messages), ["resumed"]);
        assert_eq!(texts(&load(&dir, "mywork").unwrap().messages), ["resumed"]);
        assert!(SessionLog::reopen(&dir, "missing", &header).is_err());
    }

    /// CoreCoder's `ID.json` is listed, loaded, and goes on in an `ID.jsonl` of ours.
    #[test]
    fn a_corecoder_session_is_listed_and_goes_on_in_a_log_beside_it() {
        let dir = scratch("corecoder");
        fs::create_dir_all(&dir).unwrap();
        let saved = r#"{"id": "session_1", "model": "gpt-4o", "saved_at": "2026-12-01 10:15:00",
            "messages": [{"role": "user", "content": "from python"},
            {"role": "assistant", "content": "hello"}]}"#;
        fs::write(dir.join("session_1.json"), saved).unwrap();
        let listed = listing::list(&dir, 10);
        assert_eq!(
            (listed[0].id.as_str(), listed[0].format),
            ("session_1", Format::CoreCoder)
        );
        assert_eq!(listed[0].preview, "from python");
        assert_eq!(latest_in(&dir, Path::new("/p")), None);
        assert_eq!(
            load(&dir, "session_1").unwrap().model.as_deref(),
            Some("gpt-4o")
        );
        let mut log = SessionLog::reopen(&dir, "session_1", &header("/p")).unwrap();
        log.append(&Message::user("from rust")).unwrap();
        let loaded = load(&dir, "session_1").unwrap();
        assert_eq!(
            texts(&loaded.messages),
            ["from python", "hello", "from rust"]
        );
        assert_eq!(
            fs::read_to_string(dir.join("session_1.json")).unwrap(),
            saved
        );
        let listed = listing::list(&dir, 10);
        assert_eq!((listed.len(), listed[0].format), (1, Format::Log));
    }

    #[test]
    fn ids_cannot_escape_the_directory() {
        let dir = std::env::temp_dir().join("corecoder-sessions-table");
        let long = "a".repeat(101);
        let table: [(&str, Option<&str>); 13] = [
            ("../../etc/passwd", None),
            ("/etc/passwd", None),
            ("..\\..\\x", None),
            ("a/../../b", None),
            ("a/..", None),
            ("dir/", None),
            (".", None),
            ("..", None),
            ("", None),
            (&long, None),
            ("ok-name_1.2", Some("ok-name_1.2")),
            ("sp ace", None),
            ("nul\0", None),
        ];
        for (raw, expected) in table {
            assert_eq!(sanitize_id(raw).ok().as_deref(), expected, "{raw:?}");
            match path_for(&dir, raw) {
                Ok(path) => assert_eq!(path.parent(), Some(dir.as_path()), "{raw:?}"),
                Err(e) => assert!(expected.is_none() && !e.is_empty(), "{raw:?}"),
            }
        }
        assert_eq!(sanitize_id(&"a".repeat(100)).unwrap().len(), 100);
    }

    #[test]
    fn a_linked_session_file_is_neither_read_nor_appended_to() {
        let dir = scratch("links");
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("target.txt");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("soft.jsonl")).unwrap();
        std::fs::hard_link(&target, dir.join("hard.jsonl")).unwrap();
        for id in ["soft", "hard"] {
            let err = SessionLog::reopen(&dir, id, &header("/p")).unwrap_err();
            assert!(err.contains("link"), "{id}: {err}");
            assert!(load(&dir, id).unwrap_err().contains("link"), "{id}");
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }
}
