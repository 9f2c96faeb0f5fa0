//! Files rtgauge writes get the permissions the umask allows (not the 0600 of a temporary
//! file), and under sudo a file made new where the invoking user may write belongs to them.
//! One test: the umask and the environment belong to the whole process.

use rtgauge_result::output::{create_new, write, AtomicFile, Existing};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn set_umask(mask: u32) {
    // SAFETY: umask only sets the process's mask; this test binary holds one test.
    unsafe { libc::umask(mask as libc::mode_t) };
}

fn all_outputs(dir: &Path, tag: &str) -> Vec<std::path::PathBuf> {
    let atomic = dir.join(format!("result-{tag}.json"));
    write(&atomic, b"{}").unwrap();
    let streamed = dir.join(format!("export-{tag}.csv"));
    let mut f = AtomicFile::new(&streamed).unwrap();
    f.write_all(b"a,b\n").unwrap();
    f.commit(Existing::Refuse).unwrap();
    let recording = dir.join(format!("rec-{tag}.rtgr"));
    drop(create_new(&recording).unwrap());
    let nested = dir.join(format!("new-{tag}/sub/report.html"));
    write(&nested, b"<html>").unwrap();
    vec![atomic, streamed, recording, nested]
}

#[test]
fn output_files_follow_the_umask_and_belong_to_the_sudo_user() {
    let dir = tempfile::tempdir().unwrap();
    std::env::remove_var("SUDO_UID");
    std::env::remove_var("SUDO_GID");

    set_umask(0o022);
    for path in all_outputs(dir.path(), "022") {
        assert_eq!(mode(&path), 0o644, "{}: readable by others", path.display());
    }
    set_umask(0o077);
    for path in all_outputs(dir.path(), "077") {
        assert_eq!(mode(&path), 0o600, "{}: private", path.display());
    }
    // Replacing a file takes the umask too, not the old file's mode.
    set_umask(0o002);
    let replaced = dir.path().join("result-077.json");
    write(&replaced, b"{\"again\":1}").unwrap();
    assert_eq!(mode(&replaced), 0o664);
    set_umask(0o022);

    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped the sudo part: needs root to give files away");
        return;
    }
    let (uid, gid) = (4242u32, 4343u32);
    std::env::set_var("SUDO_UID", uid.to_string());
    std::env::set_var("SUDO_GID", gid.to_string());
    // Their own directory: new files and directories become theirs.
    let theirs = dir.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(uid), Some(gid)).unwrap();
    for path in all_outputs(&theirs, "sudo") {
        let m = fs::metadata(&path).unwrap();
        assert_eq!((m.uid(), m.gid()), (uid, gid), "{}", path.display());
    }
    let made = fs::metadata(theirs.join("new-sudo/sub")).unwrap();
    assert_eq!(made.uid(), uid, "a directory made for an output is theirs");
    // A directory they cannot write (root's, 0755): files stay root's.
    let roots = dir.path().join("roots");
    fs::create_dir(&roots).unwrap();
    fs::set_permissions(&roots, fs::Permissions::from_mode(0o755)).unwrap();
    for path in all_outputs(&roots, "root") {
        assert_eq!(fs::metadata(&path).unwrap().uid(), 0, "{}", path.display());
    }
    // Replacing someone else's file in their directory does not give it to them.
    let other = theirs.join("other.json");
    fs::write(&other, "{}").unwrap();
    std::os::unix::fs::chown(&other, Some(4444), Some(4444)).unwrap();
    write(&other, b"{\"new\":1}").unwrap();
    assert_eq!(fs::metadata(&other).unwrap().uid(), 0, "not theirs to get");
    std::env::remove_var("SUDO_UID");
    std::env::remove_var("SUDO_GID");
}
