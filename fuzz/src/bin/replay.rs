//! Run one target on saved inputs, without AFL: `replay TARGET FILE...`. Prints each file's
//! name before running it, so the last name printed before a panic is the crashing input.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(target) = args.next() else {
        eprintln!(
            "usage: replay TARGET FILE...   (targets: {:?}, mcp_wire)",
            corecoder_fuzz::TARGETS
        );
        std::process::exit(2);
    };
    let scratch = corecoder_fuzz::Scratch::new(&format!("replay-{target}"));
    for file in args {
        eprintln!("{file}");
        let data = std::fs::read(&file).unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
        corecoder_fuzz::run(&target, &scratch, &data);
    }
}
