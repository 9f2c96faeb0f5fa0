//! On a target board there is no source tree: what rtgauge prints or writes must not send a
//! user to `docs/`, only to what the Debian package or the release tarball installs (the man
//! pages, the guides in /usr/share/doc/rtgauge or the tarball's doc/) and `--help`.

mod common;

fn assert_no_source_tree_path(what: &str, text: &str) {
    assert!(
        !text.contains("docs/"),
        "{what} sends the user to docs/, absent on a target:\n{text}"
    );
}

#[test]
fn help_and_listings_name_no_source_tree_path() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["report", "--help"],
        vec!["suites"],
        vec!["probes"],
        vec!["loads"],
    ] {
        let out = common::rtgauge().args(&args).output().unwrap();
        common::assert_success(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.is_empty(), "rtgauge {args:?} printed nothing");
        assert_no_source_tree_path(&format!("rtgauge {args:?}"), &text);
    }
}

#[test]
fn html_report_names_no_source_tree_path() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    let out = common::rtgauge()
        .arg("report")
        .arg(common::report_fixture("idle.json"))
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    common::assert_success(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    let footer = &page[page.find("<footer>").expect("the report has a footer")..];
    assert!(footer.contains("report.md"), "{footer}");
    assert_no_source_tree_path("the report's footer", footer);
}
