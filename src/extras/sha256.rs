//! SHA-256 from `ring`: the digest `trust.rs` keeps of a trusted project's files.
//!
//! A fast non-cryptographic hash (like the FNV one checkpoints use to name blobs) would not do:
//! the repository is hostile, and its author could craft a new `hooks.json` with the digest of
//! the one the user trusted. SHA-256 makes that infeasible. A hash is a security primitive, so
//! it comes from a crate its authors maintain; `ring` is the one the TLS stack already links,
//! so it costs no new crate (`sha2` would add seven: DESIGN.md, "Hand-written or a crate").
//! This file only keeps the one form the callers want, lowercase hex.

use ring::digest::{SHA256, digest};

/// The digest of `bytes` as 64 lowercase hex digits.
pub(crate) fn hex_digest(bytes: &[u8]) -> String {
    digest(&SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FIPS 180-4 examples, plus lengths around the padding boundary (55, 56, 64 bytes).
    #[test]
    fn known_digests() {
        let cases = [
            (
                "".to_string(),
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                "abc".to_string(),
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".to_string(),
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            ),
            (
                "a".repeat(1000),
                "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3",
            ),
            (
                "x".repeat(55),
                "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072",
            ),
            (
                "x".repeat(56),
                "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e",
            ),
            (
                "x".repeat(64),
                "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(hex_digest(text.as_bytes()), want, "{} bytes", text.len());
        }
    }
}
