//! What a person sees at a terminal: colour when asked for or on a terminal (never under
//! NO_COLOR), failure lines that fit the terminal's width, one failure count on the bar and in
//! the summary; and the shell's completions, the man page and `rules --format json`.
//! The terminal is a real pseudo-terminal (util-linux `script`), sized with `stty cols`.

use std::path::Path;
use std::process::{Command, Output};

use crate::common;

use common::BIN;

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn bin(args: &[&str]) -> Output {
    common::bin()
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("PETSTORE_COLOR")
        .output()
        .unwrap()
}

/// Without ANSI escape sequences (colour, and the bar's line clearing).
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `run ARGS` on a pseudo-terminal `columns` wide; what the terminal received.
fn on_terminal(name: &str, columns: u16, args: &str, no_color: bool) -> String {
    let dir = common::temp_dir("terminal", name);
    let mut command = Command::new("script");
    command
        .arg("-qec")
        .arg(format!(
            "stty cols {columns}; {BIN} run --seed 5 --cases 2 --report-dir {} {args}",
            dir.display()
        ))
        .arg("/dev/null")
        .env_remove("PETSTORE_COLOR")
        .env_remove("COLUMNS");
    if no_color {
        command.env("NO_COLOR", "1");
    } else {
        command.env_remove("NO_COLOR");
    }
    let output = command.output().expect("util-linux script");
    let _ = std::fs::remove_dir_all(&dir);
    text(&output)
}

const FAULTS: &str = "--reference-fault auth-one-char-short,long-name-500";

#[test]
fn no_line_wraps_and_the_bar_counts_what_the_summary_counts() {
    for columns in [80u16, 200] {
        let said = on_terminal(&format!("width-{columns}"), columns, FAULTS, false);
        let shown = plain(&said);
        let lines: Vec<&str> = shown.split(['\r', '\n']).collect();
        let failures: Vec<&&str> = lines.iter().filter(|l| l.starts_with("FAILED ")).collect();
        assert!(failures.len() >= 2, "no live failure lines:\n{shown}");
        for line in &lines {
            // indicatif pads a printed line to the width and draws the bar on the row after
            // it, without a newline: each is what comes before the padding, and the bar.
            let bar_at = line
                .char_indices()
                .skip(1)
                .find(|(_, c)| matches!(c, '█' | '░'))
                .map_or(line.len(), |(at, _)| at);
            for part in [&line[..bar_at], &line[bar_at..]] {
                let part = part.trim_end();
                assert!(
                    part.chars().count() <= usize::from(columns),
                    "{} columns wide on a {columns}-column terminal: {part}",
                    part.chars().count()
                );
            }
        }
        // Colour on a terminal: the verdict word of a failure line is red.
        assert!(said.contains("\u{1b}[1;31mFAILED "), "{said:?}");
        // The closing lines are broken at the width: the verdict reads whole once joined.
        let from = shown
            .find("petstore-conformance: DOES NOT CONFORM")
            .unwrap_or_else(|| panic!("no summary:\n{shown}"));
        let to = shown[from..].find("  the answer:").expect("the answer") + from;
        let summary = shown[from..to].replace("\r", "").replace("\n  ", " ");
        let failed: u64 = summary
            .split(" passed, ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{summary}"));
        let bar = lines
            .iter()
            .rev()
            .find(|l| l.contains(" rules ") && l.contains(" failed"))
            .unwrap_or_else(|| panic!("no bar:\n{shown}"));
        // No --time-budget: the bar says no time left in one.
        assert!(!bar.contains(" s left"), "{bar}");
        let counted = bar
            .split(" requests, ")
            .nth(1)
            .and_then(|rest| rest.split(" failed").next())
            .and_then(|n| n.trim().parse::<u64>().ok());
        assert!(
            counted == Some(failed),
            "the bar's last state says otherwise than the summary ({failed} failed): {bar}"
        );
    }
}

#[test]
fn no_color_or_never_leaves_out_every_colour() {
    let said = on_terminal("no-color", 120, FAULTS, true);
    assert!(!said.contains("\u{1b}[1;31m"), "NO_COLOR: {said:?}");
    assert!(plain(&said).contains("FAILED "), "{said:?}");
    let piped = bin(&["run", "--seed", "5", "--cases", "2", "--report-dir"]
        .into_iter()
        .chain([common::temp_dir("terminal", "piped").to_str().unwrap()])
        .chain(["--reference-fault", "auth-one-char-short"])
        .collect::<Vec<_>>());
    assert_eq!(piped.status.code(), Some(1));
    assert!(!text(&piped).contains('\u{1b}'), "colour into a pipe");
    let forced = common::bin()
        .args(["--color", "always", "run", "--seed", "5", "--cases", "2"])
        .arg("--report-dir")
        .arg(common::temp_dir("terminal", "forced"))
        .args(["--reference-fault", "auth-one-char-short"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let forced = String::from_utf8_lossy(&forced.stderr).into_owned();
    assert!(
        forced.contains("\u{1b}[1;31mDOES NOT CONFORM\u{1b}[0m"),
        "--color always: {forced}"
    );
    let never = on_terminal("never", 120, &format!("--color never {FAULTS}"), false);
    assert!(!never.contains("\u{1b}[1;31m"), "--color never: {never:?}");
}

#[test]
fn rules_lists_as_json_what_run_list_lists() {
    let rules = bin(&["rules", "--format", "json"]);
    assert!(rules.status.success(), "{}", text(&rules));
    let listed = bin(&["run", "--list", "--format", "json"]);
    assert_eq!(rules.stdout, listed.stdout);
    let parsed: serde_json::Value = serde_json::from_slice(&rules.stdout).unwrap();
    let ids: Vec<&str> = parsed
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"list-pets/limit/above-maximum"), "{ids:?}");
    let text_lines = String::from_utf8_lossy(&bin(&["rules"]).stdout)
        .lines()
        .count();
    assert_eq!(ids.len(), text_lines);
}

#[test]
fn completions_for_each_shell_name_the_commands_and_options() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = bin(&["completions", shell]);
        assert!(output.status.success(), "{shell}: {}", text(&output));
        let script = String::from_utf8_lossy(&output.stdout);
        for word in ["base-url", "verify-report", "serve-reference", "color"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    // The bash script is one bash reads.
    let dir = common::temp_dir("terminal", "bash");
    let file = dir.join("petstore-conformance.bash");
    std::fs::write(&file, bin(&["completions", "bash"]).stdout).unwrap();
    let checked = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(checked.status.success(), "{}", text(&checked));
    assert!(!bin(&["completions", "tcsh"]).status.success());
    // And completes past the sub-command: `run --gate <Tab>` offers the gates, `run --ti<Tab>`
    // the options it starts.
    for (words, current, previous, offered) in [
        (
            r#"(petstore-conformance run --gate "")"#,
            "",
            "--gate",
            "required all certify",
        ),
        (
            "(petstore-conformance run --ti)",
            "--ti",
            "run",
            "--time-budget --timeout",
        ),
    ] {
        let script = format!(
            "source {}; COMP_WORDS={words}; COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _petstore__conformance petstore-conformance '{current}' '{previous}'; echo \"${{COMPREPLY[*]}}\"",
            file.display()
        );
        let completed = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&completed.stdout).trim(),
            offered,
            "{words}: {}",
            text(&completed)
        );
    }
}

/// zsh's candidates for a command line, read from an interactive zsh on a pseudo-terminal
/// (zsh/zpty) with `compadd` printing what it is given: zsh completes only inside its line
/// editor.
const ZSH_CAPTURE: &str = r#"
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "compadd() { builtin compadd -O __hits \"\$@\"; print -rl -- 'HIT:'\${^__hits}; builtin compadd \"\$@\" }"
zpty -w z "bindkey '^I' complete-word; PROMPT=; print DONE-SETUP"
zpty -r z line '*DONE-SETUP*'
zpty -w -n z "$2"$'\t'
sleep 2
while zpty -r -t z line; do
  [[ $line == *HIT:* ]] && print -r -- "${${line#*HIT:}%%$'\r'*}"
done
zpty -d z
"#;

/// `run --gate <Tab>` and `completions <Tab>` in zsh and fish, where they are installed (CI
/// installs both): each offers the values, not files.
#[test]
fn zsh_and_fish_complete_values_past_the_sub_command() {
    let dir = common::temp_dir("terminal", "zsh-fish");
    let cases = [
        ("petstore-conformance run --gate ", "all certify required"),
        (
            "petstore-conformance completions ",
            "bash elvish fish powershell zsh",
        ),
    ];
    let sorted = |text: &[u8]| {
        let mut words: Vec<String> = String::from_utf8_lossy(text)
            .lines()
            // fish gives each value a tab and its description.
            .map(|line| {
                line.split('\t')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            })
            .filter(|word| !word.is_empty())
            .collect();
        words.sort();
        words.dedup();
        words.join(" ")
    };
    if Path::new("/usr/bin/zsh").exists() {
        std::fs::write(
            dir.join("_petstore-conformance"),
            bin(&["completions", "zsh"]).stdout,
        )
        .unwrap();
        let capture = dir.join("capture.zsh");
        std::fs::write(&capture, ZSH_CAPTURE).unwrap();
        for (line, offered) in cases {
            let out = Command::new("zsh")
                .arg(&capture)
                .arg(&dir)
                .arg(line)
                .output()
                .unwrap();
            assert_eq!(
                sorted(&out.stdout),
                offered,
                "zsh, {line:?}: {}",
                text(&out)
            );
        }
    }
    if Path::new("/usr/bin/fish").exists() {
        let script = dir.join("petstore-conformance.fish");
        std::fs::write(&script, bin(&["completions", "fish"]).stdout).unwrap();
        for (line, offered) in cases {
            let out = Command::new("fish")
                .arg("--no-config")
                .arg("-c")
                .arg(format!("source {}; complete -C '{line}'", script.display()))
                .output()
                .unwrap();
            assert_eq!(
                sorted(&out.stdout),
                offered,
                "fish, {line:?}: {}",
                text(&out)
            );
        }
    }
}

#[test]
fn the_man_page_documents_every_command_and_renders() {
    let page = bin(&["man"]);
    assert!(page.status.success(), "{}", text(&page));
    let roff = String::from_utf8_lossy(&page.stdout);
    assert!(roff.contains(".TH petstore-conformance 1"), "{roff}");
    let dir = common::temp_dir("terminal", "man");
    let written = bin(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(written.status.success(), "{}", text(&written));
    for command in ["run", "rules", "merge", "verify-report", "completions"] {
        let path = dir.join(format!("petstore-conformance-{command}.1"));
        assert!(path.is_file(), "{}", path.display());
    }
    let run_page = std::fs::read_to_string(dir.join("petstore-conformance-run.1")).unwrap();
    for option in ["base\\-url", "time\\-budget", "partition", "gate"] {
        assert!(run_page.contains(option), "the run page lacks {option}");
    }
    // man(1) renders it, where it is installed.
    if Path::new("/usr/bin/man").exists() {
        let rendered = Command::new("man")
            .arg("-l")
            .arg(dir.join("petstore-conformance-run.1"))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&rendered.stdout);
        assert!(shown.contains("--base-url"), "{}", text(&rendered));
    }
}
