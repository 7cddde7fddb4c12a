//! The API key in no byte written: reports, logs, curl lines, the terminal. What the modules
//! share is here: a run with the key in its variable, a key no test has seen, and a reader that
//! decodes what was written as any reader may before looking for the key.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;

mod channels;
mod command_line;
mod disguised;
mod shapes;
mod spellings;

fn temp_dir(name: &str) -> PathBuf {
    common::temp_dir("leaks", name)
}

/// `run ARGS` with KEY in PETSTORE_API_KEY, nothing else of PETSTORE_* inherited.
fn run(args: &[&str], key: &str, report_dir: &Path) -> Output {
    let mut command = common::bin();
    command.current_dir(report_dir.parent().unwrap_or(Path::new(".")));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("PETSTORE_") {
            command.env_remove(name);
        }
    }
    command
        .arg("run")
        .args(args)
        .arg("--report-dir")
        .arg(report_dir)
        .arg("--no-regressions")
        .env("PETSTORE_API_KEY", key)
        .output()
        .unwrap()
}

/// A long key no test has seen: random, mixed case, with a `/` and a `-` (the characters
/// escapes treat apart).
fn random_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut parts = Vec::new();
    for n in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(n);
        parts.push(format!("{:016x}", hasher.finish()));
    }
    format!("Rk9/{}-Zq{}", parts[0], parts[1].to_uppercase())
}

/// `text` as any reader may decode it, as often as it likes: HTML character references
/// (decimal or hex, any number of leading zeros, with or without `;`) and `\u` escapes,
/// wherever they stand. Written here apart from the harness's own decoder.
fn decoded(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..3 {
        let mut out = String::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            // Only `&` and `\` start an escape: the rest is copied without looking ahead (the
            // HAR of a run holds megabytes).
            if !matches!(chars[i], '&' | '\\') {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            let rest: String = chars[i..chars.len().min(i + 12)].iter().collect();
            // (radix, characters before the digits, most digits, a reference: `;` may follow)
            let (radix, skip, most, reference) =
                if rest.starts_with("&#x") || rest.starts_with("&#X") {
                    (16, 3, 10, true)
                } else if rest.starts_with("&#") {
                    (10, 2, 10, true)
                } else if rest.starts_with("\\u") {
                    (16, 2, 4, false)
                } else {
                    out.push(chars[i]);
                    i += 1;
                    continue;
                };
            let digits: String = rest
                .chars()
                .skip(skip)
                .take_while(|c| c.is_digit(radix))
                .take(most)
                .collect();
            let complete = reference || digits.len() == 4;
            match u32::from_str_radix(&digits, radix)
                .ok()
                .and_then(char::from_u32)
            {
                Some(c) if !digits.is_empty() && complete => {
                    out.push(c);
                    i += skip + digits.len();
                    if reference && chars.get(i) == Some(&';') {
                        i += 1;
                    }
                }
                _ => {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        text = out.replace("&amp;", "&");
    }
    text
}

/// Each character of `key` written by `spell`.
fn spelled(key: &str, spell: impl Fn(usize, char) -> String) -> String {
    key.chars().enumerate().map(|(i, c)| spell(i, c)).collect()
}

/// Fails if `key`, or `key` reversed, is in any of `written` as it is or decoded.
fn assert_absent_decoded(key: &str, written: &[(String, Vec<u8>)]) {
    let reversed: String = key.chars().rev().collect();
    for (name, bytes) in written {
        let text = String::from_utf8_lossy(bytes);
        for view in [text.to_string(), decoded(&text)] {
            let view = view.to_ascii_lowercase();
            for (what, secret) in [("the key", key), ("the key reversed", &reversed)] {
                if let Some(at) = view.find(&secret.to_ascii_lowercase()) {
                    let start = view[..at]
                        .char_indices()
                        .rev()
                        .nth(60)
                        .map_or(0, |(i, _)| i);
                    panic!(
                        "{what} in {name}: ...{}...",
                        &view[start..(at + secret.len()).min(view.len())]
                    );
                }
            }
        }
    }
}

/// Every file under `dir`, with its name.
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_file() {
            files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    files
}

/// A whole run against `url` under `--gate all`, with a request log and a HAR in `dir`.
fn run_logged(url: &str, key: &str, dir: &Path, reports: &Path) -> Output {
    let log = dir.join("requests.jsonl");
    let har = dir.join("run.har");
    run(
        &[
            "--base-url",
            url,
            "--gate",
            "all",
            "--cases",
            "4",
            "--timeout",
            "5",
            "--request-log",
            log.to_str().unwrap(),
            "--har",
            har.to_str().unwrap(),
        ],
        key,
        reports,
    )
}

/// Every byte a run wrote: its output, and the files in `dir` and `reports`.
fn written_by(output: &Output, dir: &Path, reports: &Path) -> Vec<(String, Vec<u8>)> {
    let mut written = vec![
        ("stdout".to_string(), output.stdout.clone()),
        ("stderr".to_string(), output.stderr.clone()),
    ];
    written.extend(files_in(dir));
    written.extend(files_in(reports));
    written
}
