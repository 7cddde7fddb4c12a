//! Every file the harness creates (reports, the report directory's lock, logs, saved
//! counterexamples) is opened here, never through a symbolic link planted where it goes: a
//! link there would make the harness truncate or fill whatever file it points to. Every file a
//! user names for reading (a key, a profile, known failures, a report) is read here too, with a
//! bound: regular files only, and no more than a cap, so that `/dev/zero` or a FIFO named by
//! mistake is a one-line refusal, not a process that fills memory or waits for ever.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A new file at `path`; fails when anything (a file, a link) is already there.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// `path` emptied for writing, created when absent; a symbolic link there is refused (ELOOP),
/// not followed.
pub fn create(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// `path` opened for locking, not emptied; a symbolic link there is refused, not followed.
pub fn open_lock(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// A directory held by one process at a time: an exclusive lock on its lock file, which names
/// the holder (its pid and when it started) for a process that finds it held. The kernel lets
/// the lock go when the holder exits, however it exits (a crash, `kill -9`), so a lock left by
/// a dead process is never in the way: the next one takes it over.
pub struct DirLock {
    file: File,
}

/// Why a [`DirLock`] was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it; what its lock file says of it.
    #[error("held by {0}")]
    Held(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl DirLock {
    /// Takes the lock at `path` without waiting, and writes `holder` in it.
    pub fn take(path: &Path, holder: &str) -> Result<DirLock, LockError> {
        let mut file = open_lock(path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let said = read_text(path, 4096).unwrap_or_default();
                let said = said.trim();
                return Err(LockError::Held(if said.is_empty() {
                    "another process, starting".into()
                } else {
                    said.chars().filter(|c| !c.is_control()).collect()
                }));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(LockError::Io(e)),
        }
        file.set_len(0)?;
        file.write_all(holder.as_bytes())?;
        Ok(DirLock { file })
    }
}

impl Drop for DirLock {
    /// Released: the holder's line taken out first, so the file names no one.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// `path` appended to, created when absent; a symbolic link there is refused, not followed.
pub fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// The most a file of settings may hold (a key, a certificate, a profile, known failures): a
/// CA bundle is a few hundred kB.
pub const SETTINGS_CAP: u64 = 4 << 20;

/// The most a file of evidence may hold (a report, an attestation, saved counterexamples): a
/// report against a hostile target stays within a few MB.
pub const EVIDENCE_CAP: u64 = 64 << 20;

/// Why a file a user named was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("not a regular file ({0}): refused")]
    NotRegular(&'static str),
    #[error("{size} bytes, more than the {cap} bytes such a file may hold: refused")]
    TooLarge { size: u64, cap: u64 },
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
}

impl ReadError {
    /// The file is not there (a missing optional file is often an empty one).
    pub fn not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// `path` opened for reading, when it is a regular file (a link to one is followed: the user
/// named it). The open never waits: a FIFO with no writer would block an ordinary open.
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    use std::os::unix::fs::FileTypeExt;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    let refused = if kind.is_file() {
        return Ok(file);
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(ReadError::NotRegular(refused))
}

/// The bytes of the regular file at `path`, at most `cap` of them: a larger file (or one that
/// grows past the cap while it is read) is refused, never read whole.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path)?;
    let size = file.metadata()?.len();
    if size > cap {
        return Err(ReadError::TooLarge { size, cap });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    let read = bytes.len() as u64;
    if read > cap {
        return Err(ReadError::TooLarge { size: read, cap });
    }
    Ok(bytes)
}

/// [`read_capped`], as UTF-8 text.
pub fn read_text(path: &Path, cap: u64) -> Result<String, ReadError> {
    String::from_utf8(read_capped(path, cap)?).map_err(|e| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text ({})", e.utf8_error()),
        ))
    })
}

/// A name beside `path` no other process uses.
fn temporary_beside(path: &Path) -> PathBuf {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}-{nonce:x}.partial", std::process::id()))
}

/// Writes `bytes` to `path` through a new temporary file renamed into place: a link at
/// `path` is replaced, never followed, and a reader never sees half a file.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = temporary_beside(path);
    let written = create_new(&temporary).and_then(|mut file| file.write_all(bytes));
    let renamed = written.and_then(|_| std::fs::rename(&temporary, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

/// A new directory only this user can enter, under the system's temporary directory: files
/// made inside cannot meet a link another user planted.
pub fn private_dir(prefix: &str) -> std::io::Result<PathBuf> {
    let dir = temporary_beside(&std::env::temp_dir().join(prefix));
    let dir = dir.with_file_name(
        dir.file_name()
            .map(|n| n.to_string_lossy().trim_start_matches('.').to_string())
            .unwrap_or_default(),
    );
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_never_followed() {
        let dir = private_dir("files-test").unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_new(&link).is_err());
        assert!(create(&link).is_err());
        assert!(open_lock(&link).is_err());
        assert!(append(&link).is_err());
        replace(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_dir_lock_is_held_by_one_holder_at_a_time_and_names_it() {
        let dir = private_dir("files-lock-test").unwrap();
        let path = dir.join(".lock");
        // A line left by a holder that is gone, with no lock on the file: taken over.
        std::fs::write(&path, "pid 999999999, started long ago").unwrap();
        let first = DirLock::take(&path, "pid 1, started now").unwrap();
        match DirLock::take(&path, "pid 2") {
            Err(LockError::Held(said)) => assert_eq!(said, "pid 1, started now"),
            other => panic!("{:?}", other.map(|_| ())),
        }
        drop(first);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        let second = DirLock::take(&path, "pid 2").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "pid 2");
        drop(second);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_named_file_is_read_only_when_regular_and_within_its_cap() {
        let dir = private_dir("files-read-test").unwrap();
        let small = dir.join("small");
        std::fs::write(&small, "key-0123456789\n").unwrap();
        assert_eq!(read_text(&small, 64).unwrap(), "key-0123456789\n");
        let large = dir.join("large");
        std::fs::write(&large, vec![b'x'; 65]).unwrap();
        assert!(matches!(
            read_capped(&large, 64),
            Err(ReadError::TooLarge { size: 65, cap: 64 })
        ));
        let fifo = dir.join("fifo");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let refused = read_capped(&fifo, 64).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(refused.to_string(), "not a regular file (a FIFO): refused");
        assert!(matches!(
            read_capped(Path::new("/dev/zero"), SETTINGS_CAP),
            Err(ReadError::NotRegular("a character device"))
        ));
        assert!(matches!(
            read_capped(&dir, SETTINGS_CAP),
            Err(ReadError::NotRegular("a directory"))
        ));
        assert!(
            read_capped(&dir.join("absent"), 64)
                .unwrap_err()
                .not_found()
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
