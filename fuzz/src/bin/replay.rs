//! Run one target on saved inputs, without AFL: `replay TARGET FILE...`. Prints each file's
//! name before running it, so the last name printed before a panic is the crashing input.
//! `replay --seeds` runs every target on every file of `seeds/TARGET/` (what CI does, so the
//! targets and their checks compile and hold on a machine with only Rust).

use std::path::Path;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(target) = args.next() else {
        eprintln!(
            "usage: replay TARGET FILE...   (targets: {:?}, mcp_wire)\n       replay --seeds",
            corecoder_fuzz::TARGETS
        );
        std::process::exit(2);
    };
    if target == "--seeds" {
        return replay_seeds();
    }
    let scratch = corecoder_fuzz::Scratch::new(&format!("replay-{target}"));
    for file in args {
        eprintln!("{file}");
        let data = std::fs::read(&file).unwrap_or_else(|e| panic!("cannot read {file}: {e}"));
        corecoder_fuzz::run(&target, &scratch, &data);
    }
}

fn replay_seeds() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let mut count = 0;
    for target in corecoder_fuzz::TARGETS.iter().chain(&["mcp_wire"]) {
        let scratch = corecoder_fuzz::Scratch::new(&format!("seeds-{target}"));
        let dir = seeds.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .map(|entry| entry.expect("a seed").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no seeds in {}", dir.display());
        for file in files {
            let data = std::fs::read(&file).expect("read a seed");
            corecoder_fuzz::run(target, &scratch, &data);
            count += 1;
        }
    }
    println!("fuzz seeds: {count} inputs replayed through every target, no check failed");
}
