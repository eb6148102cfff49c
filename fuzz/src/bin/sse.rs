//! AFL++ target `sse`: see `corecoder_fuzz::sse_stream`.

fn main() {
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::sse_stream(data));
}
