//! The `write_file` tool: create or overwrite a whole file, and the atomic write it shares with
//! `edit_file`.
//!
//! Runs when the model calls it (after consent: it mutates). It creates missing parent
//! directories and replaces the file in one rename, so a crash or a concurrent reader never sees
//! half a file. With a sandbox on, a path outside its writable roots is refused before anything
//! is created (`ShellSafety::check_write`), and the write itself runs confined like bash. It
//! does not merge, append or back up: the model's `content` is the new file.

use crate::core::message::Outcome;
use crate::tools::ToolContext;
use crate::tools::support::files::{Access, resolve, write_atomic};
use serde::Deserialize;
use std::fs;

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::write_file as schema;

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub(crate) file_path: String,
    pub(crate) content: String,
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    let path = resolve(&ctx.cwd, &args.file_path);
    ctx.shell.check_write(&path)?;
    if path.is_dir() {
        return Err(format!("{} is a directory", path.display()));
    }
    // With a sandbox on, the kernel confines the write too (`write_confined`).
    ctx.shell.write_confined(&|| {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create directory {}: {e}", parent.display()))?;
        }
        write_atomic(&path, args.content.as_bytes(), Access::AsBefore)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    })?;
    let lines = args.content.lines().count();
    Ok(Outcome::text(format!(
        "Wrote {lines} lines to {}",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{TempDir, test_context};

    fn write(dir: &TempDir, path: &str, content: &str) -> Result<Outcome, String> {
        let args = Args {
            file_path: path.into(),
            content: content.into(),
        };
        run(args, &test_context(&dir.0))
    }

    #[test]
    fn creates_parent_directories() {
        let dir = TempDir::new("write-parents");
        let outcome = write(&dir, "a/b/c.txt", "one\ntwo\n").expect("written");
        let path = dir.0.join("a/b/c.txt");
        assert_eq!(outcome.text, format!("Wrote 2 lines to {}", path.display()));
        assert_eq!(fs::read_to_string(&path).expect("read"), "one\ntwo\n");
    }

    #[test]
    fn overwrites_and_leaves_no_temp_file() {
        let dir = TempDir::new("write-over");
        dir.write("f.txt", "old");
        write(&dir, "f.txt", "new").expect("written");
        assert_eq!(
            fs::read_to_string(dir.0.join("f.txt")).expect("read"),
            "new"
        );
        assert_eq!(fs::read_dir(&dir.0).expect("list").count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_executable_bit() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new("write-mode");
        let path = dir.write("run.sh", "#!/bin/sh\n");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
        write(&dir, "run.sh", "#!/bin/sh\necho hi\n").expect("written");
        let mode = fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    #[test]
    fn refuses_a_directory() {
        let dir = TempDir::new("write-dir");
        fs::create_dir_all(dir.0.join("d")).expect("mkdir");
        assert!(
            write(&dir, "d", "x")
                .unwrap_err()
                .contains("is a directory")
        );
    }

    #[test]
    fn every_property_of_its_schema_is_a_field_of_its_args() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
    }
}
