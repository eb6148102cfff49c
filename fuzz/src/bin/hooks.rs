//! AFL++ target `hooks`: see `corecoder_fuzz::hooks_file`.

fn main() {
    let scratch = corecoder_fuzz::Scratch::new("hooks");
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::hooks_file(&scratch, data));
}
