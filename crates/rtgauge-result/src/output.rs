//! Every file rtgauge writes goes through here, so each gets the same guarantees:
//!
//! - checked before any work is done ([`check`]): the directory exists or can be made, accepts
//!   new files, and the path is not a directory, not an input ([`ensure_distinct`]) and not
//!   given for two outputs;
//! - written to an exclusive temporary file with an unpredictable name in the target
//!   directory (never following a symlink planted there), flushed to disk, then renamed over
//!   the target, so a reader sees the old file or the complete new one ([`write`],
//!   [`AtomicFile`]);
//! - files that grow while a run measures (recordings) are created exclusively at their final
//!   name ([`create_new`]), so they never replace or follow anything;
//! - every file gets the permissions the umask allows (a temporary file alone would be 0600),
//!   and under `sudo` a file made new where the invoking user may write belongs to that user,
//!   so `sudo rtgauge run` in one's own directory leaves files one can open ([`settle`]).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Why an output cannot be written; each message names the path, the problem and the fix.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}: {problem}; {fix}")]
    Unusable {
        path: PathBuf,
        problem: String,
        fix: String,
    },
    #[error("{path} already exists; choose another file, or add --force to replace it")]
    Exists { path: PathBuf },
    #[error("{path} is also an input ({input}): writing it would destroy the input; choose another output file")]
    IsInput { path: PathBuf, input: PathBuf },
    #[error("{path} is given for two outputs ({first} and {second}); give each its own file")]
    Clash {
        path: PathBuf,
        first: String,
        second: String,
    },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

impl OutputError {
    fn io(path: &Path, source: io::Error) -> OutputError {
        OutputError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Whether an existing file at the path may be replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    Replace,
    Refuse,
}

/// The directory a file at `path` lives in (`.` for a bare name).
pub fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn unusable(path: &Path, problem: impl Into<String>, fix: impl Into<String>) -> OutputError {
    OutputError::Unusable {
        path: path.to_path_buf(),
        problem: problem.into(),
        fix: fix.into(),
    }
}

/// Checks, before any measuring, that a file can be written at `path`: makes its directory if
/// missing and proves it accepts new files by creating (and removing) a temporary file there.
pub fn check(path: &Path, existing: Existing) -> Result<(), OutputError> {
    let text = path.as_os_str().as_encoded_bytes();
    if text.ends_with(b"/") || path.is_dir() {
        return Err(unusable(
            path,
            "is a directory",
            "give a file name inside it (e.g. DIR/result.json)",
        ));
    }
    usable_directory(path, &directory_of(path))?;
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(unusable(
                path,
                "is a directory",
                "give a file name inside it (e.g. DIR/result.json)",
            ))
        }
        Ok(_) if existing == Existing::Refuse => {
            return Err(OutputError::Exists {
                path: path.to_path_buf(),
            })
        }
        _ => {}
    }
    Ok(())
}

/// Checks that files can be written into `dir` (for outputs that are a directory of files,
/// such as `report --images DIR`), making it if missing.
pub fn check_directory(dir: &Path) -> Result<(), OutputError> {
    usable_directory(dir, dir)
}

/// `dir` (where `path` goes) exists or can be made, and accepts new files: proven by creating
/// and removing a temporary file there.
fn usable_directory(path: &Path, dir: &Path) -> Result<(), OutputError> {
    // The nearest existing ancestor must be a directory: `file.json/x.json` cannot be made.
    if let Some(blocker) = dir.ancestors().find(|a| a.exists() && !a.is_dir()) {
        return Err(unusable(
            path,
            format!("{} is a file, not a directory", blocker.display()),
            "choose a path inside a directory",
        ));
    }
    make_dirs(dir).map_err(|e| refused(path, dir, &e))?;
    NamedTempFile::new_in(dir)
        .map(drop)
        .map_err(|e| refused(path, dir, &e))
}

/// Says why `dir` refused a new file, and what to do about it.
fn refused(path: &Path, dir: &Path, e: &io::Error) -> OutputError {
    let fix = "choose a writable place for it";
    let problem = match e.kind() {
        io::ErrorKind::PermissionDenied => format!(
            "the directory {} is not writable by this user",
            dir.display()
        ),
        io::ErrorKind::ReadOnlyFilesystem => {
            format!(
                "the directory {} is on a read-only file system",
                dir.display()
            )
        }
        _ if is_kernel_filesystem(dir) => format!(
            "the directory {} is in a kernel file system that does not accept new files",
            dir.display()
        ),
        _ => format!(
            "the directory {} does not accept new files ({e})",
            dir.display()
        ),
    };
    unusable(path, problem, fix)
}

fn is_kernel_filesystem(dir: &Path) -> bool {
    let absolute = std::env::current_dir().unwrap_or_default().join(dir);
    // The directory itself may be the thing that could not be made.
    let existing = absolute
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(&absolute);
    let dir = fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|root| dir.starts_with(root))
}

/// Whether `a` and `b` name the same file: by device and inode where both exist (hard links,
/// `./x`, symlinks), else by their resolved directory and name.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(ma), Ok(mb)) => ma.dev() == mb.dev() && ma.ino() == mb.ino(),
        (Err(_), Err(_)) => resolved(a) == resolved(b),
        _ => false,
    }
}

fn resolved(path: &Path) -> PathBuf {
    let dir = fs::canonicalize(directory_of(path)).unwrap_or_else(|_| directory_of(path));
    dir.join(path.file_name().unwrap_or_default())
}

/// Refuses an output that is one of the inputs, or two outputs on one file. `outputs` are
/// (what, path) pairs, e.g. ("the result", …), ("the HTML report", …).
pub fn ensure_distinct(inputs: &[&Path], outputs: &[(&str, &Path)]) -> Result<(), OutputError> {
    for (i, (what, path)) in outputs.iter().enumerate() {
        if let Some(input) = inputs.iter().find(|input| same_file(path, input)) {
            return Err(OutputError::IsInput {
                path: path.to_path_buf(),
                input: input.to_path_buf(),
            });
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| same_file(path, p)) {
            return Err(OutputError::Clash {
                path: path.to_path_buf(),
                first: other.to_string(),
                second: what.to_string(),
            });
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically, replacing what was there.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut file = AtomicFile::new(path)?;
    file.write_all(bytes)
        .map_err(|e| OutputError::io(path, e))?;
    file.commit(Existing::Replace)
}

/// A file written in full before it appears at its path: an exclusive temporary file in the
/// target directory, renamed over the target by [`AtomicFile::commit`]. Dropped without a
/// commit, the temporary file is removed and the target left untouched. Writes are buffered,
/// so large exports stream through it.
pub struct AtomicFile {
    path: PathBuf,
    out: BufWriter<NamedTempFile>,
}

impl AtomicFile {
    pub fn new(path: &Path) -> Result<AtomicFile, OutputError> {
        let dir = directory_of(path);
        make_dirs(&dir).map_err(|e| refused(path, &dir, &e))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "rtgauge".into());
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| refused(path, &dir, &e))?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 20, tmp),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, syncs and renames the file into place; `Existing::Refuse` fails rather than
    /// replace a file that appeared at the path meanwhile.
    pub fn commit(self, existing: Existing) -> Result<(), OutputError> {
        let path = self.path;
        let tmp = self
            .out
            .into_inner()
            .map_err(|e| OutputError::io(&path, e.into_error()))?;
        let previous = fs::symlink_metadata(&path).ok().filter(|m| m.is_file());
        settle(tmp.as_file(), &path, previous.as_ref()).map_err(|e| OutputError::io(&path, e))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| OutputError::io(&path, e))?;
        let persisted = match existing {
            Existing::Replace => tmp.persist(&path),
            Existing::Refuse => tmp.persist_noclobber(&path),
        };
        match persisted {
            Ok(_) => {}
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                return Err(OutputError::Exists { path })
            }
            Err(e) => return Err(OutputError::io(&path, e.error)),
        }
        // The rename itself is durable only once the directory is synced.
        if let Ok(dir) = File::open(directory_of(&path)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Creates a new file at `path` for writing in place (a recording that must be readable even
/// if the run is killed): fails if anything, a symlink included, is already there.
pub fn create_new(path: &Path) -> Result<File, OutputError> {
    let dir = directory_of(path);
    make_dirs(&dir).map_err(|e| refused(path, &dir, &e))?;
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => OutputError::Exists {
                path: path.to_path_buf(),
            },
            _ => OutputError::io(path, e),
        })?;
    settle(&file, path, None).map_err(|e| OutputError::io(path, e))?;
    Ok(file)
}

/// The process's file-mode creation mask, read without changing it (Linux reports it in
/// /proc/self/status); 022 when it cannot be read.
pub fn umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// The user who ran `sudo rtgauge …`: their user and group IDs when this process runs as root
/// and sudo named someone else (SUDO_UID, SUDO_GID).
pub fn invoking_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let id = |name: &str| std::env::var(name).ok()?.trim().parse::<u32>().ok();
    let (uid, gid) = (id("SUDO_UID")?, id("SUDO_GID")?);
    (uid != 0).then_some((uid, gid))
}

/// Whether `user` (uid, gid) could make files in `dir` on their own: they own it, or its group
/// or everyone may write there.
fn may_write(dir: &Path, (uid, gid): (u32, u32)) -> bool {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {
            let mode = m.mode();
            (m.uid() == uid && mode & 0o200 != 0)
                || (m.gid() == gid && mode & 0o020 != 0)
                || mode & 0o002 != 0
        }
        _ => false,
    }
}

/// Gives a file rtgauge just made, `file` about to appear at `path`, the permissions the
/// umask allows and, under sudo, the invoking user as owner: when it replaces that user's own
/// file (`previous`), or is new in a directory they may write. Never someone else's file:
/// only the new file's own descriptor changes.
pub fn settle(file: &File, path: &Path, previous: Option<&fs::Metadata>) -> io::Result<()> {
    file.set_permissions(fs::Permissions::from_mode(0o666 & !umask()))?;
    let Some(user) = invoking_user() else {
        return Ok(());
    };
    let theirs = match previous {
        Some(m) => m.uid() == user.0,
        None => may_write(&directory_of(path), user),
    };
    if theirs {
        std::os::unix::fs::fchown(file, Some(user.0), Some(user.1))?;
    }
    Ok(())
}

/// Makes `dir` and its missing parents; under sudo, each one made where the invoking user may
/// write belongs to them (an `--output-dir` they can add to and clean up later).
fn make_dirs(dir: &Path) -> io::Result<()> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(dir)?;
    if let Some(user) = invoking_user() {
        for made in missing.iter().rev() {
            if may_write(&directory_of(made), user) {
                std::os::unix::fs::lchown(made, Some(user.0), Some(user.1))?;
            }
        }
    }
    Ok(())
}

/// Claims `path` for a result by creating it empty and exclusively, so a concurrent run
/// choosing the same name fails instead of replacing it. `Existing::Replace` (`--force`)
/// accepts a regular file already there.
pub fn reserve(path: &Path, existing: Existing) -> Result<(), OutputError> {
    match create_new(path) {
        Ok(_) => Ok(()),
        Err(OutputError::Exists { .. }) if existing == Existing::Replace => {
            check(path, Existing::Replace)
        }
        Err(e) => Err(e),
    }
}

/// Saves `bytes` in the system's temporary directory when their own path failed, so nothing
/// measured is lost; returns where they went.
pub fn save_elsewhere(bytes: &[u8], name: &Path) -> Result<PathBuf, OutputError> {
    let stem = name
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "rtgauge".into());
    let ext = name
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let dir = std::env::temp_dir();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{stem}-"))
        .suffix(&ext)
        .tempfile_in(&dir)
        .map_err(|e| OutputError::io(&dir, e))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| OutputError::io(tmp.path(), e))?;
    let (_, path) = tmp.keep().map_err(|e| OutputError::io(&dir, e.error))?;
    Ok(path)
}

/// One CSV field, quoted when it must be (RFC 4180): every CSV rtgauge writes (comparisons,
/// check results, exported recordings) quotes the same way.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_planted_symlink_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let out = dir.path().join("out.json");
        symlink(&victim, &out).unwrap();
        write(&out, b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&out).unwrap(), "new");
        assert!(!fs::symlink_metadata(&out).unwrap().is_symlink());
    }

    #[test]
    fn create_new_refuses_a_symlink_and_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("rec.rtgr");
        symlink(&victim, &link).unwrap();
        assert!(matches!(create_new(&link), Err(OutputError::Exists { .. })));
        assert!(matches!(
            create_new(&victim),
            Err(OutputError::Exists { .. })
        ));
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn temporary_files_are_unpredictable_and_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        let a = AtomicFile::new(&out).unwrap();
        let b = AtomicFile::new(&out).unwrap();
        assert_ne!(a.out.get_ref().path(), b.out.get_ref().path());
        drop((a, b));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn commit_refusing_existing_keeps_the_first_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        fs::write(&out, "first").unwrap();
        let mut f = AtomicFile::new(&out).unwrap();
        f.write_all(b"second").unwrap();
        assert!(matches!(
            f.commit(Existing::Refuse),
            Err(OutputError::Exists { .. })
        ));
        assert_eq!(fs::read_to_string(&out).unwrap(), "first");
    }

    #[test]
    fn check_names_what_is_wrong_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file.json");
        fs::write(&file, "{}").unwrap();
        let e = check(&file.join("x.json"), Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("is a file, not a directory"), "{e}");
        let e = check(dir.path(), Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let e = check(&file, Existing::Refuse).unwrap_err();
        assert!(e.to_string().contains("--force"), "{e}");
        let e = check(Path::new("/proc/x.json"), Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("kernel file system"), "{e}");
        check(&dir.path().join("new/sub/r.json"), Existing::Refuse).unwrap();
        let e = check_directory(&file).unwrap_err();
        assert!(e.to_string().contains("is a file, not a directory"), "{e}");
        check_directory(&dir.path().join("images")).unwrap();
    }

    #[test]
    fn same_file_sees_through_other_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        fs::write(&a, "{}").unwrap();
        let hard = dir.path().join("hard.json");
        fs::hard_link(&a, &hard).unwrap();
        assert!(same_file(&a, &hard));
        assert!(same_file(&a, &dir.path().join(".").join("a.json")));
        let missing = dir.path().join("m.json");
        assert!(same_file(&missing, &dir.path().join("./m.json")));
        assert!(!same_file(&a, &missing));
        let e = ensure_distinct(&[&a], &[("the report", &hard)]).unwrap_err();
        assert!(e.to_string().contains("also an input"), "{e}");
        let e = ensure_distinct(&[], &[("the result", &missing), ("the report", &missing)])
            .unwrap_err();
        assert!(e.to_string().contains("two outputs"), "{e}");
    }

    #[test]
    fn reserve_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        reserve(&out, Existing::Refuse).unwrap();
        assert!(matches!(
            reserve(&out, Existing::Refuse),
            Err(OutputError::Exists { .. })
        ));
        reserve(&out, Existing::Replace).unwrap();
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("cpu"), "cpu");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
