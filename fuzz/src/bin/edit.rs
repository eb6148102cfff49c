//! AFL++ target `edit`: see `corecoder_fuzz::edit_file`.

fn main() {
    let scratch = corecoder_fuzz::Scratch::new("edit");
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::edit_file(&scratch, data));
}
