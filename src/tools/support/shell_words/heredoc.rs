//! Here-documents, read as the shell reads them: after the newline that ends their command,
//! the lines up to the delimiter are the body; an unquoted body's `$( … )` and backticks
//! run, so their commands come out of `split` like any others, one level below the command
//! the body feeds (and after it: the body is read after its line). A quoted delimiter
//! (`<<'EOF'`, `<<"EOF"`, `<<\EOF`) makes the body data; `<<-` strips leading tabs.
//!
//! The splitter (`shell_words.rs`) calls `pend_heredoc` when a `<<` or `<<-` has its word and
//! `read_heredoc_bodies` at each newline. What the body says to a shell that reads it
//! (`sh <<EOF`) is the danger gate's business, not this file's.

use super::{Body, Opener, Pending, Separator, Splitter};
use std::ops::Range;

/// How many bodies deep (`$(cat <<A` inside a body) substitutions are read. Each level reads
/// its text again, so this bounds the time and the stack; deeper bodies are `Body::Unread`.
const MAX_BODY_NESTING: usize = 8;

/// A delimiter longer than this is not read (`<<$( <<$( …` would make each one scan to the
/// end of the text): its body is `Body::Unread`.
const MAX_DELIMITER: usize = 256;

impl Splitter {
    /// A `<<` or `<<-` (`op`, ending at `at`) has its word: its body is read at the newline.
    pub(super) fn pend_heredoc(&mut self, at: usize, op: &str) {
        let heredoc = pending(&self.chars, at, op);
        self.heredoc_ends.push(heredoc);
    }
}

/// The here-document whose operator `op` ends at `at` in `chars`. Its delimiter is the word's
/// text with quotes removed and nothing expanded, as the shell takes it (`<<$(x)` ends at the
/// line `$(x)`); a quote or backslash anywhere in the word makes the body data.
fn pending(chars: &[char], mut at: usize, op: &str) -> Pending {
    while matches!(chars.get(at), Some(' ' | '\t')) {
        at += 1;
    }
    let (start, mut end, mut nested) = (at, String::new(), 0usize);
    // Quoted: the body is data. Unsure: a spelling whose quote removal is not done here
    // (escapes inside `"…"` or `$'…'`): a wrong delimiter would misplace the body's end.
    let (mut quoted, mut unsure, mut ansi) = (false, false, false);
    while let Some(&c) = chars.get(at) {
        at += 1;
        if at - start > MAX_DELIMITER {
            unsure = true;
            break;
        }
        match c {
            // `$'E'` and `$"E"` are the delimiter `E`.
            '$' if matches!(chars.get(at), Some('\'' | '"')) => ansi = chars[at] == '\'',
            '\'' | '"' => {
                quoted = true;
                while let Some(&q) = chars.get(at).filter(|_| at - start <= MAX_DELIMITER) {
                    at += 1;
                    if q == c {
                        break;
                    }
                    unsure |= q == '\\' && (c == '"' || ansi);
                    end.push(q);
                }
                ansi = false;
            }
            // A backslash-newline is no character at all; any other backslash quotes.
            '\\' if chars.get(at) == Some(&'\n') => at += 1,
            '\\' => {
                quoted = true;
                end.extend(chars.get(at));
                at += 1;
            }
            '(' if nested > 0 || end.ends_with('$') => {
                nested += 1;
                end.push(c);
            }
            ')' if nested > 0 => {
                nested -= 1;
                end.push(c);
            }
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' if nested == 0 => break,
            c => end.push(c),
        }
    }
    let reading = match (unsure, quoted) {
        (true, _) => Body::Unread,
        (false, true) => Body::Literal,
        (false, false) => Body::Expanded,
    };
    Pending {
        end,
        reading,
        strips_tabs: op == "<<-",
    }
}

impl Splitter {
    /// Read the bodies of the here-documents of the line just ended, in order, give each to
    /// its redirection, and read the substitutions of the unquoted ones as commands.
    pub(super) fn read_heredoc_bodies(&mut self) {
        let line_start = std::mem::replace(&mut self.line_start, self.done.len());
        let pending = std::mem::take(&mut self.heredoc_ends);
        if pending.is_empty() {
            return;
        }
        let mut slots = Vec::new();
        for (i, command) in self.done[line_start..].iter().enumerate() {
            let heredocs = command.redirects.iter().enumerate();
            let here = heredocs.filter(|(_, r)| matches!(r.op.as_str(), "<<" | "<<-"));
            slots.extend(here.map(|(j, _)| (line_start + i, j)));
        }
        let bodies: Vec<(String, Range<usize>)> =
            pending.iter().map(|h| self.read_body(h)).collect();
        let resume = self.pos;
        for (at, (heredoc, (text, range))) in pending.iter().zip(bodies).enumerate() {
            let reading = match heredoc.reading {
                Body::Expanded if self.bodies_deep >= MAX_BODY_NESTING => Body::Unread,
                reading => reading,
            };
            if reading == Body::Expanded {
                self.read_body_substitutions(range);
            }
            if let Some(&(i, j)) = slots.get(at) {
                let redirect = &mut self.done[i].redirects[j];
                redirect.body = text;
                redirect.reading = reading;
            }
        }
        self.pos = resume;
        self.line_start = self.done.len();
    }

    /// The body's text (tabs stripped for `<<-`) and where it is in the input: the lines up
    /// to one that is exactly the delimiter. In an unquoted body a backslash-newline joins two
    /// lines before the delimiter is looked for, as the shell does.
    fn read_body(&mut self, heredoc: &Pending) -> (String, Range<usize>) {
        let (start, mut end, mut body) = (self.pos, self.limit, String::new());
        while self.pos < self.limit {
            let line_at = self.pos;
            let mut line = String::new();
            while self.pos < self.limit
                && let Some(c) = self.next()
            {
                if c != '\n' {
                    line.push(c);
                    continue;
                }
                let escapes = line.chars().rev().take_while(|&b| b == '\\').count();
                if heredoc.reading == Body::Literal || escapes % 2 == 0 {
                    break;
                }
                line.pop();
            }
            let line = match heredoc.strips_tabs {
                true => line.trim_start_matches('\t'),
                false => &line,
            };
            if line == heredoc.end {
                end = line_at;
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        (body, start..end)
    }

    /// The commands of the `$( … )`, `$(( … ))` and backticks in the body at `range`, read as
    /// they are on a command line, one level deeper.
    fn read_body_substitutions(&mut self, range: Range<usize>) {
        let limit = std::mem::replace(&mut self.limit, range.end);
        self.bodies_deep += 1;
        self.pos = range.start;
        while self.pos < self.limit {
            match self.next() {
                // `\$` and `` \` `` are text; `\\` is one backslash, and what follows counts.
                Some('\\') => self.pos += 1,
                Some('$') if self.eat('(') => match self.eat('(') {
                    true => self.read_substitution(Opener::Arithmetic),
                    false => self.read_substitution(Opener::Dollar),
                },
                Some('`') => self.read_substitution(Opener::Backtick),
                _ => {}
            }
        }
        self.bodies_deep -= 1;
        self.limit = limit;
    }

    fn read_substitution(&mut self, opener: Opener) {
        let floor = self.frames.len();
        self.push_frame(opener);
        self.read(floor);
        while self.frames.len() > floor {
            self.end_command(Separator::End);
            self.frames.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Body, Kind, split};

    /// Each command's first word and depth.
    fn heads(line: &str) -> Vec<(String, usize)> {
        let commands = split(line).into_iter();
        let first = |c: &super::super::SimpleCommand| c.words.first().cloned().unwrap_or_default();
        commands.map(|c| (first(&c), c.depth)).collect()
    }

    fn h(list: &[(&str, usize)]) -> Vec<(String, usize)> {
        list.iter().map(|(w, d)| (w.to_string(), *d)).collect()
    }

    #[test]
    fn an_unquoted_body_runs_its_substitutions() {
        let line = "cat <<EOF\na $(rm -rf ~) `touch x` ${X:-$(id)}\nEOF\nls";
        let cat_rm_touch_id_ls = [("cat", 0), ("rm", 1), ("touch", 1), ("id", 1), ("ls", 0)];
        assert_eq!(heads(line), h(&cat_rm_touch_id_ls));
        let cat = &split(line)[0].redirects[0];
        assert_eq!(cat.body, "a $(rm -rf ~) `touch x` ${X:-$(id)}\n");
        assert_eq!(cat.reading, Body::Expanded);
        assert_eq!(split(line)[1].words, ["rm", "-rf", "~"]);
    }

    #[test]
    fn a_quoted_delimiter_makes_the_body_data() {
        for quoted in ["'EOF'", "\"EOF\"", "\\EOF", "E\"O\"F", "'E'OF"] {
            let line = format!("cat <<{quoted}\n$(rm -rf ~)\n`rm x`\nEOF\nls");
            assert_eq!(heads(&line), h(&[("cat", 0), ("ls", 0)]), "{quoted}");
            let cat = &split(&line)[0].redirects[0];
            assert_eq!(cat.reading, Body::Literal, "{quoted}");
            assert_eq!(cat.body, "$(rm -rf ~)\n`rm x`\n", "{quoted}");
        }
    }

    #[test]
    fn dash_strips_tabs_and_the_delimiter_is_exact() {
        let line = "cat <<-EOF\n\t\t$(a)\n\tEOF\nb";
        assert_eq!(heads(line), h(&[("cat", 0), ("a", 1), ("b", 0)]));
        assert_eq!(split(line)[0].redirects[0].body, "$(a)\n");
        // Without `-`, a tab, a space or a trailing `\r` is not the delimiter: the body goes on.
        for almost in ["\tEOF", " EOF", "EOF ", "EOF\r"] {
            let line = format!("cat <<EOF\n{almost}\n$(a)\nEOF\nb");
            assert_eq!(
                heads(&line),
                h(&[("cat", 0), ("a", 1), ("b", 0)]),
                "{almost:?}"
            );
        }
    }

    #[test]
    fn several_bodies_on_one_line_are_read_in_order() {
        let line = "cat <<'A' <<B; tee <<C\n$(a)\nA\n$(b)\nB\n$(c)\nC\nd";
        let commands = split(line);
        assert_eq!(
            heads(line),
            h(&[("cat", 0), ("tee", 0), ("b", 1), ("c", 1), ("d", 0)])
        );
        let bodies: Vec<(&str, Body)> = (commands.iter().take(2))
            .flat_map(|c| c.redirects.iter().map(|r| (r.body.as_str(), r.reading)))
            .collect();
        assert_eq!(
            bodies,
            [
                ("$(a)\n", Body::Literal),
                ("$(b)\n", Body::Expanded),
                ("$(c)\n", Body::Expanded)
            ]
        );
    }

    #[test]
    fn backslashes_in_a_body_are_read_as_the_shell_reads_them() {
        // `\$(` is text; `\\$(` is a backslash, then a substitution.
        let line = "cat <<E\n\\$(a) \\\\$(b) \\`c\\`\nE";
        assert_eq!(heads(line), h(&[("cat", 0), ("b", 1)]));
        // A backslash-newline joins lines first: `E` after it is no delimiter, so `$(x)` is body.
        assert_eq!(
            heads("cat <<E\na\\\nE\n$(x)\nE\ny"),
            h(&[("cat", 0), ("x", 1), ("y", 0)])
        );
        // Not in a quoted body: there the `E` ends it, and `x` is a command.
        assert_eq!(heads("cat <<'E'\na\\\nE\nx"), h(&[("cat", 0), ("x", 0)]));
    }

    #[test]
    fn the_delimiter_is_unquoted_as_bash_does() {
        // bash ends each of these bodies at the line `E`, then runs `rm x`.
        for spelling in ["$'E'", "$\"E\"", "E\\\n", "'E'\\\n"] {
            let line = format!("cat <<{spelling}\nbody\nE\nrm x\n$E");
            assert!(
                heads(&line).contains(&("rm".to_string(), 0)),
                "{spelling:?}"
            );
        }
        // Escapes inside quotes are not undone here: the body is marked unread, not misread.
        for spelling in ["$'\\x45'", "\"E\\\"\""] {
            let line = format!("cat <<{spelling}\nbody\nE\nrm x");
            assert_eq!(
                split(&line)[0].redirects[0].reading,
                Body::Unread,
                "{spelling:?}"
            );
        }
    }

    #[test]
    fn the_delimiter_is_not_expanded() {
        // bash ends this body at the line `$(x)` and runs the next one.
        let line = "cat <<$(x)\nhello\n$(x)\nrm -rf ~";
        assert_eq!(heads(line).last(), Some(&("rm".to_string(), 0)));
        assert_eq!(
            split(line)
                .iter()
                .find(|c| c.words[0] == "cat")
                .unwrap()
                .redirects[0]
                .body,
            "hello\n"
        );
    }

    #[test]
    fn a_here_string_is_a_word_whose_substitutions_run() {
        let line = "cat <<< \"$(rm -rf ~)\"; xargs rm <<< ~";
        assert_eq!(heads(line), h(&[("rm", 1), ("cat", 0), ("xargs", 0)]));
        assert_eq!(split(line)[2].redirects[0].target, "~");
    }

    #[test]
    fn bodies_inside_substitutions_are_read_and_nesting_is_bounded() {
        let line = "x=$(cat <<A\n$(cat <<B\n$(rm -rf ~)\nB\n)\nA\n)";
        let found = heads(line);
        assert!(found.contains(&("rm".to_string(), 3)), "{found:?}");
        // Nine bodies deep, the ninth is not read: it is marked, not guessed empty.
        let mut deep = "$(rm -rf ~)".to_string();
        for _ in 0..9 {
            deep = format!("$(cat <<E\n{deep}\nE\n)");
        }
        let commands = split(&format!("cat <<E\n{deep}\nE"));
        assert!(
            commands
                .iter()
                .all(|c| c.words.first().is_none_or(|w| w != "rm"))
        );
        let unread = commands.iter().flat_map(|c| &c.redirects);
        assert!(unread.clone().any(|r| r.reading == Body::Unread));
    }

    #[test]
    fn a_shift_is_no_here_document_and_a_case_pattern_ends_no_substitution() {
        // Were `<< 2` a here-document, the next line would be its body, unread.
        assert_eq!(
            heads("echo $(( 1 << 2 ))\nrm x").last(),
            Some(&("rm".to_string(), 0))
        );
        assert_eq!(
            heads("(( x <<= 1 ))\nrm x").last(),
            Some(&("rm".to_string(), 0))
        );
        let line = "cat <<EOF\n$(case a in a) rm x;; esac)\nEOF";
        assert!(
            heads(line).contains(&("rm".to_string(), 1)),
            "{:?}",
            heads(line)
        );
        let line = "cat <<EOF\n$(then case a in (a) ls;; b) rm x;; esac)\nEOF";
        assert!(
            heads(line).iter().any(|(w, _)| w == "rm"),
            "{:?}",
            heads(line)
        );
    }

    #[test]
    fn arithmetic_words_are_no_command() {
        let commands = split("echo $(( $n + 1 )); (( $i > 2 )); ((echo hi) )");
        let kinds: Vec<(&str, Kind)> = (commands.iter())
            .map(|c| (c.words.first().map_or("", String::as_str), c.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("$n", Kind::MaybeArithmetic),
                ("echo", Kind::Command),
                ("$i", Kind::MaybeArithmetic),
                ("echo", Kind::MaybeArithmetic),
            ]
        );
    }
}
