//! The directories a bash command line moves the shell to: the `bash` tool follows them so
//! the session's working directory is where the command left it. Read from the words
//! `shell_words::split` gives; it judges nothing and runs nothing.

use super::{Separator, split};

/// The directories the shell itself would `cd` into, in order. A bare `cd` gives `~`.
///
/// Only top-level commands count: not inside `( … )` or `$( … )`, and not on either side of a
/// pipe or before `&`, because those run in a subshell. A `cd` right after `||` is ignored:
/// it runs only when the command before it failed, which we cannot know.
pub fn cd_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut previous = Separator::Newline;
    for command in split(line).into_iter().filter(|c| c.depth == 0) {
        let after_fork = matches!(previous, Separator::Or | Separator::Pipe);
        let forked = matches!(command.ends_with, Separator::Pipe | Separator::Background);
        previous = command.ends_with;
        if after_fork || forked || command.words.first().map(String::as_str) != Some("cd") {
            continue;
        }
        // Skip options such as `-P` and `--`; a lone `-` is a target (the previous directory).
        let target = command.words[1..]
            .iter()
            .find(|word| !word.starts_with('-') || *word == "-");
        targets.push(target.cloned().unwrap_or_else(|| "~".to_string()));
    }
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cd_targets_table() {
        let cases: &[(&str, &[&str])] = &[
            ("cd a && cd b", &["a", "b"]),
            ("cd a; ls\ncd b", &["a", "b"]),
            ("(cd a)", &[]),
            ("(cd a) && ls", &[]),
            ("echo $(cd a)", &[]),
            ("echo \"cd a\"", &[]),
            ("cd 'my dir'", &["my dir"]),
            ("cd \"my dir\" && make", &["my dir"]),
            ("cd a || true", &["a"]),
            ("false || cd a", &[]),
            ("(true) || cd a", &[]),
            ("cd a | cat", &[]),
            ("ls | cd a", &[]),
            ("cd a &", &[]),
            ("sleep 1 & cd a", &["a"]),
            ("cd", &["~"]),
            ("cd ~/x", &["~/x"]),
            ("cd -", &["-"]),
            ("cd -P -- /tmp", &["/tmp"]),
            ("cd a 2>/dev/null", &["a"]),
            ("mkdir x && cd x", &["x"]),
            ("grep cd file # cd a", &[]),
            ("echo cd a", &[]),
        ];
        for (line, expected) in cases {
            assert_eq!(cd_targets(line), w(expected), "for {line:?}");
        }
    }
}
