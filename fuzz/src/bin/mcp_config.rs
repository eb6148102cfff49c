//! AFL++ target `mcp_config`: see `corecoder_fuzz::mcp_config`.

fn main() {
    let scratch = corecoder_fuzz::Scratch::new("mcp_config");
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::mcp_config(&scratch, data));
}
