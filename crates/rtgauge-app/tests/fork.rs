//! A child forked by an instrumented process shares its parent's mapping, rings included:
//! it must not write into them (two writers on one single-writer ring would corrupt it) nor
//! into the point table, nor remove the parent's file. One test function: the process has one
//! file, and fork wants a single thread.

use rtgauge_app::{AppError, Point, Reader};

#[test]
fn a_forked_child_records_nothing_into_its_parents_rings() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: set before any thread of this test binary reads the environment.
    unsafe { std::env::set_var("RTGAUGE_APP_DIR", dir.path()) };
    let compute = Point::interval("parent.compute").unwrap();
    let cycles = Point::counter("parent.cycles").unwrap();
    cycles.count(1); // this thread owns a ring before the fork
    let path = rtgauge_app::file_path().unwrap().to_path_buf();
    let mut reader = Reader::open(&path).unwrap();
    assert_eq!(reader.drain(|_| {}).records, 1);

    // SAFETY: the child only records, registers, shuts down and exits (no locks held: this
    // test has no other thread).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        for _ in 0..1000 {
            drop(compute.begin());
            cycles.count(1);
        }
        let refused = matches!(
            Point::interval("child.compute"),
            Err(AppError::ForkedChild { .. })
        );
        rtgauge_app::shutdown();
        // SAFETY: leave without running the test harness's exit path in the child.
        unsafe { libc::_exit(if refused { 0 } else { 3 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child's registration was not refused (status {status})"
    );
    assert!(path.exists(), "the child removed its parent's file");
    assert_eq!(
        reader.drain(|_| {}).records,
        0,
        "the child wrote into the parent's rings"
    );
    assert_eq!(reader.lost(), 0);
    assert_eq!(
        reader.points().len(),
        2,
        "the child wrote into the point table"
    );
    // The parent records on.
    cycles.count(1);
    assert_eq!(reader.drain(|_| {}).records, 1);
    rtgauge_app::shutdown();
}
