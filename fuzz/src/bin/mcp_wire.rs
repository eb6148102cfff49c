//! AFL++ target `mcp_wire`: see `corecoder_fuzz::mcp_lines`.

fn main() {
    let scratch = corecoder_fuzz::Scratch::new("mcp_wire");
    afl::fuzz!(|data: &[u8]| corecoder_fuzz::mcp_lines(&scratch, data));
}
