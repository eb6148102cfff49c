//! How deep inside a JSON value a text is, kept up to date as pieces are appended: so the SSE
//! reader can tell that a call's arguments (or an event spread over `data:` lines) just closed
//! without parsing all of it again at every piece, which was quadratic.
//!
//! Part of the SSE reader (see `sse.rs`). It only counts brackets outside strings; whether the
//! closed text is valid JSON is for one real parse to say, once.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct JsonDepth {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// A `{` or `[` has been seen: only then can the value close.
    opened: bool,
    /// Bytes of the text already counted.
    scanned: usize,
}

impl JsonDepth {
    /// Count the part of `text` not seen yet (`text` only ever grows between calls).
    pub(super) fn update(&mut self, text: &str) {
        let new = text.as_bytes().get(self.scanned..).unwrap_or_default();
        for &byte in new {
            match (self.in_string, byte) {
                (true, _) if self.escaped => self.escaped = false,
                (true, b'\\') => self.escaped = true,
                (true, b'"') => self.in_string = false,
                (true, _) => {}
                (false, b'"') => self.in_string = true,
                (false, b'{' | b'[') => {
                    self.depth += 1;
                    self.opened = true;
                }
                (false, b'}' | b']') => self.depth = self.depth.saturating_sub(1),
                (false, _) => {}
            }
        }
        self.scanned = text.len();
    }

    /// Inside a string or an unclosed bracket: more text would continue this value.
    pub(super) fn is_open(&self) -> bool {
        self.in_string || self.depth > 0
    }

    /// An object or array was opened and is closed again.
    pub(super) fn is_closed(&self) -> bool {
        self.opened && !self.is_open()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_of(pieces: &[&str]) -> JsonDepth {
        let mut depth = JsonDepth::default();
        let mut text = String::new();
        for piece in pieces {
            text.push_str(piece);
            depth.update(&text);
        }
        depth
    }

    #[test]
    fn brackets_in_strings_and_escapes_do_not_count() {
        assert!(depth_of(&[r#"{"a": "}"#]).is_open());
        assert!(depth_of(&[r#"{"a": "}"#, r#"\"}"}"#]).is_closed());
        assert!(depth_of(&[r#"{"a": [1, {"b": "\\"}"#, "]}"]).is_closed());
        assert!(
            depth_of(&[r#"{"a": "x\\"#, r#"""#]).is_open(),
            "an escaped quote"
        );
        assert!(!depth_of(&["[DONE"]).is_closed() && depth_of(&["[DONE]"]).is_closed());
        assert!(!depth_of(&["plain"]).is_open() && !depth_of(&["plain"]).is_closed());
    }

    /// Two megabytes of pieces that each end in `}` inside a string: each byte counted once.
    #[test]
    fn many_closing_looking_pieces_cost_linear_time() {
        let started = std::time::Instant::now();
        let mut depth = JsonDepth::default();
        let mut text = String::from(r#"{"content": ""#);
        for _ in 0..100_000 {
            text.push_str("xxxxxxxxxxxxxxxxxxx}");
            depth.update(&text);
        }
        assert!(depth.is_open());
        text.push_str(r#""}"#);
        depth.update(&text);
        assert!(depth.is_closed());
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    }
}
