//! A small, quote-aware reading of a shell command line: which simple commands it holds, with
//! which words, joined by which operators, and how deep inside subshells.
//!
//! The `bash` tool reads a command twice before and after running it: `danger` looks at the
//! words to refuse wrecking commands, and `cd::cd_targets` finds the top-level `cd`s so the session
//! can follow them. Both need words, not raw text, so `echo "rm -rf /"` is an echo.
//!
//! This is *not* a shell parser. It knows quotes, backslashes, comments, the operators
//! `; && || | & newline`, redirections, `( … )`, `$( … )`, `$(( … ))`, `<( … )`, backticks,
//! here-documents (`heredoc.rs`: an unquoted body's substitutions are commands, as the shell
//! runs them) and function definitions, which is enough to tell commands apart. It does not
//! expand variables, globs, aliases or `~`, and keywords (`if`, `for`, `{`) are plain words.
//!
//! One pass over the text, so the time is linear in its length (the danger gate relies on it:
//! a model may send a command of any size). Over 300 lines: the splitter is one state
//! machine, easier to follow in one file than spread over two.

pub mod cd;
mod heredoc;
mod nesting;
mod quotes;

use std::ops::Range;

/// Stands in a word for the output of a `$( … )`, backticks or `<( … )` inside it.
pub(crate) const SUBSTITUTED: char = '\u{1A}';

/// The operator that ends a simple command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Separator {
    Semicolon,
    And,
    Or,
    Pipe,
    Background,
    Newline,
    /// End of the input, or of the subshell the command sits in.
    End,
}

/// `>`, `>>`, `2>&1`, `<`, `<<EOF`, … with its target word (quotes removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub(crate) op: String,
    pub(crate) target: String,
    /// A here-document's text (`<<EOF` … `EOF`); empty for every other redirection.
    pub(crate) body: String,
    /// How the shell reads that text; `Expanded` for every other redirection.
    pub(crate) reading: Body,
}

/// How the shell reads a here-document's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    /// `<<EOF`: `$VAR`, `$( … )` and backticks in it are expanded, so the commands of its
    /// substitutions run; `split` gives them, one level deeper, after the command it feeds.
    Expanded,
    /// `<<'EOF'`, `<<"EOF"`, `<<\EOF`: data, nothing in it runs.
    Literal,
    /// Not read, so what it runs is not known: nested in bodies' substitutions more than 8
    /// deep, or a delimiter whose quote removal is not done here (`<<$'\x45'`, `"E\"F"`).
    Unread,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Program and arguments, quotes removed. Redirections are not among them.
    pub words: Vec<String>,
    pub(crate) redirects: Vec<Redirect>,
    /// 0 for the shell itself, +1 inside each `( … )`, `$( … )`, `<( … )` or backticks.
    pub depth: usize,
    pub(crate) ends_with: Separator,
    /// Where, in what `split` returns, the commands inside this one's `$( … )`, backticks and
    /// `<( … )` are (at every depth below; they come just before it). Empty when it has none.
    pub(crate) inner: Range<usize>,
    pub(crate) kind: Kind,
}

/// Whether a command's first word is surely a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Command,
    /// Inside `$(( … ))` or `(( … ))`: arithmetic, whose words are values (`$(( $n + 1 ))`),
    /// unless the shell finds no arithmetic there and runs it as subshells (`((echo hi) )`).
    MaybeArithmetic,
}

/// Split a command line into its simple commands. A subshell's commands come out before the
/// command that contains them (`echo $(pwd)` gives `pwd`, then `echo`); at one depth, the
/// order is the order of the text. A function definition `f() {` comes out as the words
/// `function f` (its other spelling), and its body as the commands that follow.
pub fn split(line: &str) -> Vec<SimpleCommand> {
    let mut splitter = Splitter {
        chars: line.chars().collect(),
        frames: vec![Frame::default()],
        ..Splitter::default()
    };
    splitter.run();
    splitter.done
}

/// Words after which `case` or `esac` still starts a command (`then case x in …`).
const KEYWORDS: &[&str] = &[
    "!", "{", "if", "then", "elif", "else", "do", "while", "until",
];

/// A here-document whose body starts after the next newline (`heredoc.rs` reads it).
struct Pending {
    end: String,
    reading: Body,
    /// `<<-`: leading tabs are stripped from each line, the delimiter's too.
    strips_tabs: bool,
}

/// What opened a nesting level; `)` closes a paren or `$(`, a backtick closes a backtick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Opener {
    #[default]
    Top,
    Paren,
    Dollar,
    Backtick,
    /// `$(( … ))` or `(( … ))`: arithmetic, whose words are no command (`$(( $n + 1 ))`).
    Arithmetic,
}

/// The command being read at one nesting level. Keeping the quote state per level is what
/// lets `"$(cd "a b")"` work: the inner quotes belong to the inner command.
#[derive(Default)]
struct Frame {
    opener: Opener,
    in_double_quotes: bool,
    words: Vec<String>,
    redirects: Vec<Redirect>,
    word: String,
    /// A word has started, even if empty so far (`''` is an empty word, not no word).
    in_word: bool,
    /// A redirection operator waiting for its target word, and where in the text it ended.
    pending_redirect: Option<(String, usize)>,
    /// Inside arithmetic (`$(( (a) ))` too): words here are values, not commands.
    arithmetic: bool,
    /// `case … esac` open at this level: a `)` here ends a pattern, not the level.
    cases: usize,
    /// Where in `done` the commands of this command's first substitution start.
    inner_start: Option<usize>,
}

#[derive(Default)]
struct Splitter {
    chars: Vec<char>,
    pos: usize,
    frames: Vec<Frame>,
    /// Here-documents whose bodies start after the next newline (`heredoc.rs`).
    heredoc_ends: Vec<Pending>,
    /// The first command in `done` that ended on the current line (here-documents attach there).
    line_start: usize,
    /// Where reading stops: the end of the text, or of the here-document body being read.
    limit: usize,
    /// How many here-document bodies deep the reading is.
    bodies_deep: usize,
    done: Vec<SimpleCommand>,
}

impl Splitter {
    fn run(&mut self) {
        self.limit = self.chars.len();
        self.read(0);
        while !self.frames.is_empty() {
            self.end_command(Separator::End);
            self.frames.pop();
        }
    }

    /// Read until the limit, or until the frames above `floor` are closed.
    fn read(&mut self, floor: usize) {
        while self.frames.len() > floor
            && self.pos < self.limit
            && let Some(c) = self.next()
        {
            if self.frame().in_double_quotes {
                self.in_double_quotes(c);
                continue;
            }
            match c {
                ' ' | '\t' => self.end_word(),
                '\n' => {
                    self.end_command(Separator::Newline);
                    self.read_heredoc_bodies();
                }
                ';' => self.end_command(Separator::Semicolon),
                '(' if self.at_command_start() && self.eat('(') => {
                    self.push_frame(Opener::Arithmetic);
                }
                '&' if self.eat('&') => self.end_command(Separator::And),
                '&' if self.peek() == Some('>') => self.redirect('&'),
                '&' => self.end_command(Separator::Background),
                '|' if self.eat('|') => self.end_command(Separator::Or),
                '|' => {
                    // `|&` pipes stderr too; still a pipe.
                    self.eat('&');
                    self.end_command(Separator::Pipe);
                }
                // `$(( 1 << 2 ))` shifts: no here-document starts there.
                '>' | '<' if self.frame().arithmetic => self.push(c),
                '>' | '<' => self.redirect(c),
                '(' if self.at_function_definition() => self.function_definition(),
                '(' => {
                    self.end_word();
                    self.open(Opener::Paren);
                }
                ')' => self.close(),
                '`' if self.frame().opener == Opener::Backtick => self.close(),
                '`' => self.open(Opener::Backtick),
                '$' if self.eat('(') => self.open_dollar(),
                '$' if self.eat('\'') => self.ansi_c_quoted(),
                '\'' => {
                    self.frame_mut().in_word = true;
                    while let Some(q) = self.next().filter(|&q| q != '\'') {
                        self.push(q);
                    }
                }
                '"' => {
                    let frame = self.frame_mut();
                    frame.in_word = true;
                    frame.in_double_quotes = true;
                }
                // A backslash-newline joins lines; any other escaped character is literal.
                '\\' => match self.next() {
                    Some('\n') | None => {}
                    Some(escaped) => self.push(escaped),
                },
                '#' if !self.frame().in_word => {
                    while self.peek().is_some_and(|n| n != '\n') {
                        self.pos += 1;
                    }
                }
                _ => self.push(c),
            }
        }
    }

    /// Start reading a redirection whose first character is `first`; its target is the next word.
    fn redirect(&mut self, first: char) {
        // `<( … )` and `>( … )` are process substitutions: a word, like `$( … )`.
        if self.eat('(') {
            self.open(Opener::Dollar);
            return;
        }
        // A number right before the operator (`2>`) is a file descriptor, not an argument.
        let frame = self.frame_mut();
        if frame.in_word && !frame.word.is_empty() && frame.word.chars().all(|d| d.is_ascii_digit())
        {
            frame.word.clear();
            frame.in_word = false;
        }
        self.end_word();
        let mut op = first.to_string();
        while let Some(n) = self
            .peek()
            .filter(|&n| matches!(n, '>' | '<' | '&' | '|' | '-'))
        {
            // `<<-` is one operator; any other `-` starts the target word.
            if n == '-' && op != "<<" {
                break;
            }
            op.push(n);
            self.pos += 1;
        }
        let at = self.pos;
        self.frame_mut().pending_redirect = Some((op, at));
    }

    fn end_word(&mut self) {
        let frame = self.frame_mut();
        if !frame.in_word {
            return;
        }
        frame.in_word = false;
        let word = std::mem::take(&mut frame.word);
        match frame.pending_redirect.take() {
            Some((op, at)) => {
                if matches!(op.as_str(), "<<" | "<<-") {
                    self.pend_heredoc(at, &op);
                }
                let redirect = Redirect {
                    op,
                    target: word,
                    body: String::new(),
                    reading: Body::Expanded,
                };
                self.frame_mut().redirects.push(redirect);
            }
            None => {
                let first = frame.words.last().is_none_or(|w| KEYWORDS.contains(&&**w));
                match word.as_str() {
                    "case" if first => frame.cases += 1,
                    "esac" if first => frame.cases = frame.cases.saturating_sub(1),
                    _ => {}
                }
                frame.words.push(word);
            }
        }
    }

    fn end_command(&mut self, ends_with: Separator) {
        self.end_word();
        let (depth, end) = (self.frames.len() - 1, self.done.len());
        let frame = self.frame_mut();
        frame.pending_redirect = None;
        let inner = frame.inner_start.take().unwrap_or(end)..end;
        let words = std::mem::take(&mut frame.words);
        let redirects = std::mem::take(&mut frame.redirects);
        let kind = match frame.arithmetic {
            true => Kind::MaybeArithmetic,
            false => Kind::Command,
        };
        // An empty command is kept only when later commands depend on its operator:
        // in `(cd a) || cd b` the `||` must still be seen.
        let carries_operator =
            matches!(ends_with, Separator::And | Separator::Or | Separator::Pipe);
        if words.is_empty() && redirects.is_empty() && !carries_operator {
            return;
        }
        self.done.push(SimpleCommand {
            words,
            redirects,
            depth,
            ends_with,
            inner,
            kind,
        });
    }

    /// `f() {` or `function f() {`: one name (after `function`, if there), then `()`.
    fn at_function_definition(&self) -> bool {
        let frame = self.frame();
        let current = frame.in_word.then_some(&frame.word);
        let mut words = frame.words.iter().chain(current).map(String::as_str);
        let name = match (words.next(), words.next(), words.next()) {
            (Some("function"), Some(name), None) | (Some(name), None, None) => name,
            _ => return false,
        };
        let rest = self.chars[self.pos..].iter().find(|c| **c != ' ');
        !name.is_empty() && !name.contains('=') && rest == Some(&')')
    }

    /// Read `()` and end the definition as the command `function NAME`; the body follows.
    fn function_definition(&mut self) {
        while self.next().is_some_and(|c| c != ')') {}
        self.end_word();
        let name = self.frame_mut().words.pop().unwrap_or_default();
        self.frame_mut().words = vec!["function".to_string(), name];
        self.end_command(Separator::Semicolon);
    }

    fn frame(&self) -> &Frame {
        &self.frames[self.frames.len() - 1]
    }

    fn frame_mut(&mut self) -> &mut Frame {
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    fn push(&mut self, c: char) {
        let frame = self.frame_mut();
        frame.word.push(c);
        frame.in_word = true;
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += usize::from(c.is_some());
        c
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, wanted: char) -> bool {
        let found = self.peek() == Some(wanted);
        self.pos += usize::from(found);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Separator::*;

    fn words(line: &str) -> Vec<(Vec<String>, usize, Separator)> {
        split(line)
            .into_iter()
            .map(|c| (c.words, c.depth, c.ends_with))
            .collect()
    }

    fn w(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn splits_on_operators() {
        assert_eq!(
            words("a 1; b && c || d | e & f\ng"),
            vec![
                (w(&["a", "1"]), 0, Semicolon),
                (w(&["b"]), 0, And),
                (w(&["c"]), 0, Or),
                (w(&["d"]), 0, Pipe),
                (w(&["e"]), 0, Background),
                (w(&["f"]), 0, Newline),
                (w(&["g"]), 0, End),
            ]
        );
    }

    #[test]
    fn removes_quotes_and_escapes() {
        assert_eq!(
            split(r#"echo 'a "b"' "c \"d\" \$e \x" f\ g '' x"y"z"#)[0].words,
            w(&["echo", "a \"b\"", "c \"d\" $e \\x", "f g", "", "xyz"])
        );
    }

    #[test]
    fn operators_inside_quotes_are_text() {
        assert_eq!(
            words("echo 'a; b' \"c && d\""),
            vec![(w(&["echo", "a; b", "c && d"]), 0, End)]
        );
    }

    #[test]
    fn comment_runs_to_end_of_line() {
        assert_eq!(
            words("ls # rm -rf /; x\npwd a#b"),
            vec![(w(&["ls"]), 0, Newline), (w(&["pwd", "a#b"]), 0, End)]
        );
    }

    #[test]
    fn subshells_nest() {
        assert_eq!(
            words("(cd a; ls) && echo \"$(pwd `date`)\" x"),
            vec![
                (w(&["cd", "a"]), 1, Semicolon),
                (w(&["ls"]), 1, End),
                (w(&[]), 0, And),
                (w(&["date"]), 2, End),
                (w(&["pwd", "\u{1A}"]), 1, End),
                (w(&["echo", "\u{1A}", "x"]), 0, End),
            ]
        );
    }

    #[test]
    fn redirections_are_kept_apart() {
        let command = &split("echo hi 2>&1 >/dev/sda >> log < in")[0];
        assert_eq!(command.words, w(&["echo", "hi"]));
        let pairs: Vec<(&str, &str)> = command
            .redirects
            .iter()
            .map(|r| (r.op.as_str(), r.target.as_str()))
            .collect();
        assert_eq!(
            pairs,
            vec![(">&", "1"), (">", "/dev/sda"), (">>", "log"), ("<", "in")]
        );
        assert_eq!(split("cmd &> out")[0].redirects[0].op, "&>");
    }

    #[test]
    fn heredoc_bodies_are_skipped() {
        assert_eq!(
            words("cat > f <<'EOF'\ncd /\nrm -rf /\nEOF\nls"),
            vec![(w(&["cat"]), 0, Newline), (w(&["ls"]), 0, End)]
        );
    }

    #[test]
    fn heredoc_bodies_are_kept_with_their_command() {
        let commands = split("sh <<EOF\nrm -rf /\nEOF\ncat <<-A <<B\na\nA\nb\nB\nls");
        let bodies: Vec<Vec<&str>> = (commands.iter())
            .map(|c| c.redirects.iter().map(|r| r.body.as_str()).collect())
            .collect();
        assert_eq!(bodies, vec![vec!["rm -rf /\n"], vec!["a\n", "b\n"], vec![]]);
        assert_eq!(split("bash <<< 'ls'")[0].redirects[0].target, "ls");
    }

    #[test]
    fn substitutions_know_their_inner_commands() {
        let commands = split("sh <(curl x) && echo $(a | b) `c`; (d)");
        let shown: Vec<(&str, usize, std::ops::Range<usize>)> = (commands.iter())
            .map(|c| (c.words[0].as_str(), c.depth, c.inner.clone()))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("curl", 1, 0..0),
                ("sh", 0, 0..1),
                ("a", 1, 2..2),
                ("b", 1, 3..3),
                ("c", 1, 4..4),
                ("echo", 0, 2..5),
                ("d", 1, 6..6),
            ]
        );
    }

    #[test]
    fn function_definitions_read_as_function_name() {
        assert_eq!(
            words(":(){ :|:& };:"),
            vec![
                (w(&["function", ":"]), 0, Semicolon),
                (w(&["{", ":"]), 0, Pipe),
                (w(&[":"]), 0, Background),
                (w(&["}"]), 0, Semicolon),
                (w(&[":"]), 0, End),
            ]
        );
        assert_eq!(words("function f () { ls; }")[0].0, w(&["function", "f"]));
        // An array assignment is not a definition.
        assert!(
            split("a=()")
                .iter()
                .all(|c| c.words.first().is_none_or(|f| f != "function"))
        );
    }

    #[test]
    fn line_continuation_joins() {
        assert_eq!(
            words("echo a \\\n b"),
            vec![(w(&["echo", "a", "b"]), 0, End)]
        );
    }
}
