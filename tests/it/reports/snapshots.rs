//! The JSON, JUnit, Markdown and HTML renderings of a fixed report, pinned as insta snapshots in
//! `tests/snapshots/`: a change in a report is a reviewed diff. The report is a real one (seed
//! 3, four faults) and the input of every rendering is the JSON snapshot itself, so each
//! rendering is pinned against the model it renders. Ports, dates and durations are normalised
//! by insta's filters, so a report taken again from a real run pins the same renderings.
//! After a deliberate change: `INSTA_UPDATE=always cargo test --test it reports::snapshots`
//! (or `cargo insta review`), and review the diff.

use std::path::Path;

use petstore_conformance::report::{
    Report, render_html, render_json, render_junit, render_markdown,
};

use crate::common;

/// The snapshot of report.json (insta's header, then the report), less its header.
fn pinned_report_json() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/report.json.snap");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let body = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map(|(_, body)| body)
        .unwrap_or_else(|| panic!("{}: no insta header", path.display()));
    body.to_string()
}

fn fixed_report() -> Report {
    serde_json::from_str(&pinned_report_json())
        .expect("the fixed report reads into the report model")
}

/// Snapshots next to the fixture, named as the files a run writes, with what varies from run
/// to run held fixed at the values the fixture was taken with.
fn pinned(name: &str, rendered: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:8080");
    for (pattern, fixed) in [
        (
            r#""started_at": "[^"]*""#,
            r#""started_at": "2026-11-22T00:00:00Z""#,
        ),
        (
            r#""finished_at": "[^"]*""#,
            r#""finished_at": "2026-11-22T00:00:01Z""#,
        ),
        (
            r#"timestamp="[^"]*""#,
            r#"timestamp="2026-11-22T00:00:00Z""#,
        ),
        (
            r"<dd>[^<]*Z to [^<]*Z \(\d+ ms\)</dd>",
            "<dd>2026-11-22T00:00:00Z to 2026-11-22T00:00:01Z (0 ms)</dd>",
        ),
    ] {
        settings.add_filter(pattern, fixed);
    }
    settings.add_filter(r#""(duration_ms|waited_ms)": \d+"#, r#""$1": 0"#);
    settings.add_filter(r#"time="\d+(\.\d+)?""#, r#"time="0.000""#);
    settings.add_filter(r"(round trip\(s\)|case\(s\)) · \d+ ms", "$1 · 0 ms");
    settings.add_filter(r"(?m) · \d+ ms$", " · 0 ms");
    settings.bind(|| insta::assert_snapshot!(name, rendered));
}

#[test]
fn junit_rendering_is_pinned() {
    pinned("junit.xml", &render_junit(&fixed_report()));
}

#[test]
fn markdown_rendering_is_pinned() {
    pinned("summary.md", &render_markdown(&fixed_report()));
}

#[test]
fn html_rendering_is_pinned() {
    pinned("report.html", &render_html(&fixed_report()));
}

#[test]
fn the_json_rendering_reads_back_unchanged() {
    let rendered = render_json(&fixed_report());
    let value: serde_json::Value = serde_json::from_str(&rendered).unwrap();
    common::assert_valid_report(&value);
    pinned("report.json", &rendered);
}

#[test]
fn the_report_schema_refuses_what_a_report_is_not() {
    let good: serde_json::Value = serde_json::from_str(&pinned_report_json()).unwrap();
    common::assert_valid_report(&good);
    let mut bad = good.clone();
    bad["rules"][0]["verdict"] = "maybe".into();
    assert!(std::panic::catch_unwind(|| common::assert_valid_report(&bad)).is_err());
    let mut bad = good;
    bad["totals"]["surprises"] = 1.into();
    assert!(std::panic::catch_unwind(|| common::assert_valid_report(&bad)).is_err());
}
