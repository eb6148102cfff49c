//! How deep inside a JSON value a growing text is, counted as the text grows: the SSE parser
//! (`client/sse.rs`) uses it to see an event end without a blank line, and a tool call's
//! arguments become whole. A pure text helper: it parses nothing and imports nothing.

/// How deep inside a JSON value a growing text is, so a close is seen without parsing it all
/// again at every piece (which was quadratic). Only brackets outside strings count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct JsonDepth {
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
    pub(crate) fn update(&mut self, text: &str) {
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
    pub(crate) fn is_open(&self) -> bool {
        self.in_string || self.depth > 0
    }

    /// An object or array was opened and is closed again.
    pub(crate) fn is_closed(&self) -> bool {
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
