//! AFL++ target `session`: see `corecoder_fuzz::session_id`.

fn main() {
    let scratch = corecoder_fuzz::Scratch::new("session");
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::session_id(&scratch, data));
}
