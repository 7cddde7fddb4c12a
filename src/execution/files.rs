//! Every file the harness creates (reports, the report directory's lock, logs, saved
//! counterexamples) is opened here, never through a symbolic link planted where it goes: a
//! link there would make the harness truncate or fill whatever file it points to.

use std::fs::{File, OpenOptions};
use std::io::Write;
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

/// `path` appended to, created when absent; a symbolic link there is refused, not followed.
pub fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
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
}
