//! AFL++ target `split`: see `corecoder_fuzz::command_splitter`.

fn main() {
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::command_splitter(data));
}
