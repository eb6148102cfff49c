//! A FUSE file system with one file whose reads never return: the stand-in for a file on a hung
//! NFS or sshfs mount, for the tests that show `read_file` and `grep` give up on it.
//!
//! `HungMount::mount` mounts it (root and `/dev/fuse` needed; otherwise it says why, and the
//! test prints that and skips) and answers the kernel on a thread of its own: the root
//! directory, `hung.txt` in it (100 bytes, mode 0644), open and close. A READ of the file and an
//! OPENDIR of the directory are never answered, and neither is the kernel's INTERRUPT for them,
//! as a hung server does: no signal frees the reader. Dropping the mount answers every held
//! request with EINTR and unmounts, so the binary can exit.
//! It implements only what a stat, an open and a read need; everything else is ENOSYS.

use crossbeam_channel::{Receiver, Sender};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LOOKUP: u32 = 1;
const FORGET: u32 = 2;
const GETATTR: u32 = 3;
const OPEN: u32 = 14;
const READ: u32 = 15;
const INIT: u32 = 26;
const OPENDIR: u32 = 27;
const INTERRUPT: u32 = 36;
const BATCH_FORGET: u32 = 42;
const ROOT: u64 = 1;
const FILE: u64 = 2;
/// `FOPEN_DIRECT_IO`: every read goes to the server, none is served from the page cache.
const DIRECT_IO: u32 = 1;

pub struct HungMount {
    pub dir: PathBuf,
    device: Arc<File>,
    /// Uniques of the requests held unanswered; `released` answers them and any that come later.
    held: Arc<Mutex<Vec<u64>>>,
    released: Arc<AtomicBool>,
    reads: Receiver<()>,
}

impl HungMount {
    /// Mount on `dir` (created), or say why it cannot be done here.
    pub fn mount(dir: &Path) -> Result<HungMount, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let device = File::options()
            .read(true)
            .write(true)
            .open("/dev/fuse")
            .map_err(|e| format!("cannot open /dev/fuse: {e}"))?;
        let options = format!(
            "fd={},rootmode=40000,user_id=0,group_id=0",
            device.as_raw_fd()
        );
        let c = |s: &str| CString::new(s).expect("no NUL");
        let target = c(&dir.to_string_lossy());
        let (source, kind, data) = (c("hung"), c("fuse"), c(&options));
        // SAFETY: valid NUL-terminated strings that outlive the call.
        let mounted = unsafe {
            libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                kind.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                data.as_ptr().cast(),
            )
        };
        if mounted != 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("cannot mount a FUSE file system (needs root): {e}"));
        }
        let (found, reads) = crossbeam_channel::unbounded();
        let mount = HungMount {
            dir: dir.to_path_buf(),
            device: Arc::new(device),
            held: Arc::default(),
            released: Arc::default(),
            reads,
        };
        let server = Server {
            device: mount.device.clone(),
            held: mount.held.clone(),
            released: mount.released.clone(),
            found,
        };
        std::thread::spawn(move || server.serve());
        Ok(mount)
    }

    /// Wait until a reader is stuck in a READ of the file or an OPENDIR of the directory.
    pub fn wait_for_stuck(&self, timeout: Duration) -> bool {
        self.reads.recv_timeout(timeout).is_ok()
    }
}

impl Drop for HungMount {
    fn drop(&mut self) {
        self.released.store(true, Ordering::SeqCst);
        for unique in self.held.lock().expect("held").drain(..) {
            reply(&self.device, unique, -libc::EINTR, &[]);
        }
        let target = CString::new(self.dir.to_string_lossy().as_bytes()).expect("no NUL");
        // SAFETY: a valid NUL-terminated path. Detached: it goes once nothing uses it.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}

/// The thread that answers the kernel; it ends when the mount goes (the read fails).
struct Server {
    device: Arc<File>,
    held: Arc<Mutex<Vec<u64>>>,
    released: Arc<AtomicBool>,
    found: Sender<()>,
}

impl Server {
    fn serve(self) {
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let length = match (&*self.device).read(&mut buffer) {
                Ok(length) => length,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            let request = &buffer[..length];
            let (opcode, unique, node) =
                (u32_at(request, 4), u64_at(request, 8), u64_at(request, 16));
            self.answer(opcode, unique, node, &request[40..]);
        }
    }

    fn answer(&self, opcode: u32, unique: u64, node: u64, body: &[u8]) {
        let device = &self.device;
        match opcode {
            INIT => reply(device, unique, 0, &init_out(body)),
            LOOKUP if node == ROOT && body.starts_with(b"hung.txt\0") => {
                let mut out = Vec::new();
                [FILE, 0, 3600, 3600]
                    .iter()
                    .for_each(|v| put64(&mut out, *v));
                [0u32, 0].iter().for_each(|v| put32(&mut out, *v));
                out.extend(attr(FILE));
                reply(device, unique, 0, &out);
            }
            LOOKUP => reply(device, unique, -libc::ENOENT, &[]),
            GETATTR => {
                let mut out = Vec::new();
                put64(&mut out, 3600);
                [0u32, 0].iter().for_each(|v| put32(&mut out, *v));
                out.extend(attr(node));
                reply(device, unique, 0, &out);
            }
            OPEN => {
                let mut out = Vec::new();
                put64(&mut out, 0);
                [DIRECT_IO, 0].iter().for_each(|v| put32(&mut out, *v));
                reply(device, unique, 0, &out);
            }
            READ | OPENDIR if self.released.load(Ordering::SeqCst) => {
                reply(device, unique, -libc::EINTR, &[]);
            }
            READ | OPENDIR => {
                self.held.lock().expect("held").push(unique);
                let _ = self.found.send(());
            }
            // The kernel asks to interrupt a held request: a hung server never answers that either.
            INTERRUPT | FORGET | BATCH_FORGET => {}
            _ => reply(device, unique, -libc::ENOSYS, &[]),
        }
    }
}

/// `fuse_init_out` for protocol 7.31, no optional features.
fn init_out(init_in: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    [7, 31, u32_at(init_in, 8), 0]
        .iter()
        .for_each(|v| put32(&mut out, *v));
    out.extend(16u16.to_le_bytes()); // max_background
    out.extend(12u16.to_le_bytes()); // congestion_threshold
    [4096u32, 1].iter().for_each(|v| put32(&mut out, *v)); // max_write, time_gran
    out.resize(64, 0);
    out
}

/// `fuse_attr` of the root directory or of the file.
fn attr(node: u64) -> Vec<u8> {
    let (size, mode, links) = match node {
        ROOT => (0, libc::S_IFDIR | 0o755, 2),
        _ => (100, libc::S_IFREG | 0o644, 1),
    };
    let mut out = Vec::new();
    [node, size, 1, 0, 0, 0]
        .iter()
        .for_each(|v| put64(&mut out, *v));
    [0, 0, 0, mode, links, 0, 0, 0, 4096, 0]
        .iter()
        .for_each(|v| put32(&mut out, *v));
    out
}

fn reply(mut device: &File, unique: u64, error: i32, body: &[u8]) {
    let mut out = Vec::new();
    put32(&mut out, 16 + body.len() as u32);
    out.extend(error.to_le_bytes());
    put64(&mut out, unique);
    out.extend(body);
    let _ = device.write_all(&out);
}

fn put32(out: &mut Vec<u8>, value: u32) {
    out.extend(value.to_le_bytes());
}

fn put64(out: &mut Vec<u8>, value: u64) {
    out.extend(value.to_le_bytes());
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}
