//! How the splitter (`shell_words.rs`) opens and closes a nesting level: `( … )`, `$( … )`,
//! backticks, `<( … )` and arithmetic (`$(( … ))`, `(( … ))`, whose words are marked, not
//! dropped: bash runs `((echo hi) )` as subshells when it is no arithmetic).

use super::{Frame, Opener, SUBSTITUTED, Separator, Splitter};

impl Splitter {
    /// After `$(`: a command substitution, or arithmetic when another `(` follows.
    pub(super) fn open_dollar(&mut self) {
        match self.eat('(') {
            true => self.open(Opener::Arithmetic),
            false => self.open(Opener::Dollar),
        }
    }

    pub(super) fn open(&mut self, opener: Opener) {
        // A substitution is part of the word around it (`"$(pwd)"/x`), as `SUBSTITUTED`.
        if opener != Opener::Paren {
            self.push(SUBSTITUTED);
            let at = self.done.len();
            self.frame_mut().inner_start.get_or_insert(at);
        }
        self.push_frame(opener);
    }

    pub(super) fn push_frame(&mut self, opener: Opener) {
        let arithmetic = match opener {
            Opener::Arithmetic => true,
            Opener::Paren => self.frame().arithmetic,
            _ => false,
        };
        self.frames.push(Frame {
            opener,
            arithmetic,
            ..Frame::default()
        });
    }

    pub(super) fn close(&mut self) {
        // A `)` ends a `case` pattern (`a) rm …;;`), or a stray one: the branch's command
        // stands alone.
        if self.frames.len() == 1 || self.frame().cases > 0 {
            return self.end_command(Separator::Semicolon);
        }
        if self.frame().opener == Opener::Arithmetic {
            self.eat(')');
        }
        self.end_command(Separator::End);
        self.frames.pop();
    }

    /// No word of a command has started yet: `((` here is arithmetic, not two subshells.
    pub(super) fn at_command_start(&self) -> bool {
        let frame = self.frame();
        !frame.in_word && frame.words.is_empty() && frame.pending_redirect.is_none()
    }
}
