//! AFL++ target `danger`: see `corecoder_fuzz::danger_gate`.

fn main() {
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::danger_gate(data));
}
