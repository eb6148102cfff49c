//! AFL++ target `cd`: see `corecoder_fuzz::cd_tracker`.

fn main() {
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::cd_tracker(data));
}
