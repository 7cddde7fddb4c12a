//! The JUnit, Markdown and HTML renderings of a fixed report, pinned as golden files: a change in a
//! report is a reviewed diff. `tests/snapshots/report.json` is a real report (seed 3, three
//! faults, ports, dates and durations fixed); `UPDATE_SNAPSHOTS=1 cargo test --test snapshots`
//! rewrites the renderings after a deliberate change.

use std::path::{Path, PathBuf};

use petstore_conformance::report::{
    Report, render_html, render_json, render_junit, render_markdown,
};

use crate::common;

fn snapshots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

fn fixed_report() -> Report {
    let text = std::fs::read_to_string(snapshots().join("report.json")).unwrap();
    serde_json::from_str(&text).expect("the fixed report reads into the report model")
}

fn assert_snapshot(name: &str, rendered: &str) {
    let path = snapshots().join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, rendered).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_SNAPSHOTS=1 writes it)", path.display()));
    if pinned != rendered {
        let first = pinned
            .lines()
            .zip(rendered.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(pinned.lines().count().min(rendered.lines().count()));
        panic!(
            "{name} differs from its snapshot from line {}:\n  pinned:   {:?}\n  rendered: {:?}\n(UPDATE_SNAPSHOTS=1 rewrites it after a deliberate change)",
            first + 1,
            pinned.lines().nth(first),
            rendered.lines().nth(first)
        );
    }
}

#[test]
fn junit_rendering_is_pinned() {
    assert_snapshot("junit.xml", &render_junit(&fixed_report()));
}

#[test]
fn markdown_rendering_is_pinned() {
    assert_snapshot("summary.md", &render_markdown(&fixed_report()));
}

#[test]
fn html_rendering_is_pinned() {
    assert_snapshot("report.html", &render_html(&fixed_report()));
}

#[test]
fn the_json_rendering_reads_back_unchanged() {
    let report = fixed_report();
    let rendered_value: serde_json::Value = serde_json::from_str(&render_json(&report)).unwrap();
    common::assert_valid_report(&rendered_value);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(snapshots().join("report.json"), render_json(&report)).unwrap();
        return;
    }
    let rendered: serde_json::Value = serde_json::from_str(&render_json(&report)).unwrap();
    let pinned: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snapshots().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(rendered, pinned);
}

#[test]
fn the_report_schema_refuses_what_a_report_is_not() {
    let text = std::fs::read_to_string(snapshots().join("report.json")).unwrap();
    let good: serde_json::Value = serde_json::from_str(&text).unwrap();
    common::assert_valid_report(&good);
    let mut bad = good.clone();
    bad["rules"][0]["verdict"] = "maybe".into();
    assert!(std::panic::catch_unwind(|| common::assert_valid_report(&bad)).is_err());
    let mut bad = good;
    bad["totals"]["surprises"] = 1.into();
    assert!(std::panic::catch_unwind(|| common::assert_valid_report(&bad)).is_err());
}
