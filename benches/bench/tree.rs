//! The large tree grep and glob are measured on: `target/bench-tree`, reused when present.
//!
//! 52 000 searchable source files of 6–14 KiB (about 520 MB) in 26 × 40 directories, every
//! 100th one binary (a NUL in its first bytes), plus a `node_modules/` and a `build/` full of
//! files that a `.gitignore` excludes, and an empty `.git/` so both tools treat the tree as a
//! repository of its own (not as part of this one, whose `target/` is ignored). A rare line
//! `fn needle_N() {}` is planted in every 400th file, ignored ones included, so a search scans
//! everything and a tool that fails to ignore shows up in its match count.
//! Contents come from a fixed pseudo-random generator: the tree is the same on every machine.

use std::fs;
use std::path::{Path, PathBuf};

pub const SEARCHABLE: usize = 52_000;
const IGNORED: usize = 6_000;
const EXTENSIONS: [&str; 4] = ["rs", "py", "js", "md"];
const WORDS: [&str; 16] = [
    "let", "value", "return", "self", "config", "match", "buffer", "index", "Some", "None",
    "error", "fn", "result", "items", "parse", "(x)",
];

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-tree")
}

/// The tree, generated first if it is missing or was cut short.
pub fn ensure() -> PathBuf {
    let root = root();
    let marker = root.join(".complete");
    if marker.exists() {
        return root;
    }
    eprintln!("generating {} (once; about 600 MB)…", root.display());
    let _ = fs::remove_dir_all(&root);
    let pool = text_pool(4 << 20);
    let mut random = Lcg(7);
    let write = |dir: &str, n: usize, random: &mut Lcg| {
        let ext = EXTENSIONS[n % EXTENSIONS.len()];
        let path = root.join(format!(
            "{dir}/d{:02}/e{:02}/f{n}.{ext}",
            n % 26,
            (n / 26) % 40
        ));
        let _ = fs::create_dir_all(path.parent().expect("parent"));
        let _ = fs::write(&path, file_body(&pool, n, random));
    };
    for n in 0..SEARCHABLE {
        write("src", n, &mut random);
    }
    for n in 0..IGNORED {
        write(
            if n.is_multiple_of(2) {
                "node_modules"
            } else {
                "build"
            },
            n,
            &mut random,
        );
    }
    let _ = fs::create_dir_all(root.join(".git"));
    let _ = fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n");
    let _ = fs::write(root.join(".gitignore"), "node_modules/\nbuild/\n*.log\n");
    let _ = fs::write(&marker, "");
    root
}

/// A slice of the pool starting at a line, with the needle (or a NUL) mixed in.
fn file_body(pool: &[u8], n: usize, random: &mut Lcg) -> Vec<u8> {
    let len = 6 * 1024 + (random.next() % (8 * 1024)) as usize;
    let start = (random.next() as usize) % (pool.len() - len);
    let start = pool[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(0, |i| start + i + 1);
    let mut body = pool[start..(start + len).min(pool.len())].to_vec();
    if n % 100 == 99 {
        body[0] = 0;
    }
    if n.is_multiple_of(400) {
        let at = body.len() / 2;
        let at = body[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(at, |i| at + i + 1);
        let needle = format!("fn needle_{n}() {{}}\n");
        body.splice(at..at, needle.into_bytes());
    }
    body
}

/// Code-like lines of words, `size` bytes in all.
fn text_pool(size: usize) -> Vec<u8> {
    let mut random = Lcg(42);
    let mut pool = Vec::with_capacity(size + 200);
    while pool.len() < size {
        let indent = (random.next() % 4) as usize * 4;
        pool.extend(std::iter::repeat_n(b' ', indent));
        for _ in 0..(3 + random.next() % 10) {
            pool.extend_from_slice(WORDS[(random.next() % 16) as usize].as_bytes());
            pool.push(b' ');
        }
        pool.extend_from_slice(b";\n");
    }
    pool
}

/// A tiny linear congruential generator: reproducible and dependency-free.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}
