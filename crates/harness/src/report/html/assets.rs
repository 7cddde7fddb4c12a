//! The page's style sheet and script, inline (the page is one file; the CSP allows them by hash).

pub(super) const STYLE: &str = r#"
:root { color-scheme: light; --fail: #b3261e; --pass: #1e6b34; --warn: #8a5a00; --rec: #a14f00; --muted: #5f6368; --line: #d7dae0; }
* { box-sizing: border-box; }
table.coverage { border-collapse: collapse; font-size: 13px; } table.coverage th, table.coverage td { border-bottom: 1px solid var(--line); padding: .2rem .5rem; text-align: left; vertical-align: top; } tr[data-outcome="failed"] td { color: var(--fail); } tr[data-outcome="not-tried"] td { color: var(--muted); }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1.5rem; color: #1f1f1f; background: #fff; overflow-wrap: anywhere; }
table { width: 100%; table-layout: fixed; }
table.failed { border-collapse: collapse; font-size: 14px; margin-bottom: 1rem; } table.failed th, table.failed td { border-bottom: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; } table.failed th:nth-child(1) { width: 34%; } table.failed th:nth-child(2) { width: 13%; } table.failed th:nth-child(3) { width: 11%; }
tr[data-verdict="failed"][data-gated="true"] a { color: var(--fail); }
.group > h2 { border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
[hidden] { display: none !important; }
h1 { font-size: 1.9rem; margin: 0 0 .25rem; }
h2 { font-size: 1.3rem; margin: 2rem 0 .75rem; }
h3 { font-size: 1.05rem; margin: 0; }
h4 { font-size: .95rem; margin: .9rem 0 .3rem; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .85rem; }
pre { background: #f6f7f9; border: 1px solid var(--line); border-radius: 4px; padding: .6rem .75rem; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 28rem; overflow: auto; }
.conformance { display: inline-block; padding: .15rem .6rem; border-radius: 4px; color: #fff; background: var(--warn); letter-spacing: .02em; }
.conformance[data-conformance="conforms"] { background: var(--pass); }
.conformance[data-conformance="does-not-conform"] { background: var(--fail); }
dl.run { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 1rem 0; }
dl.run dt { color: var(--muted); }
dl.run dd { margin: 0; overflow-wrap: anywhere; }
.notice { border-left: 4px solid var(--warn); padding: .4rem .75rem; background: #fff8e6; }
#totals { font-weight: 600; }
#filters { position: sticky; top: 0; background: #fff; border-bottom: 1px solid var(--line); padding: .6rem 0; display: flex; flex-wrap: wrap; gap: .4rem 1.5rem; align-items: center; z-index: 1; }
#filters .group { display: flex; flex-wrap: wrap; gap: .35rem; align-items: center; }
#filters button { font: inherit; font-size: .85rem; border: 1px solid var(--line); border-radius: 999px; padding: .2rem .7rem; background: #fff; color: var(--muted); cursor: pointer; text-decoration: line-through; }
#filters button[aria-pressed="true"] { background: #e8eefc; border-color: #7b9cf0; color: #1f1f1f; text-decoration: none; }
.rule { border: 1px solid var(--line); border-left-width: 5px; border-radius: 4px; padding: .75rem 1rem; margin: .6rem 0; }
.rule[data-verdict="failed"] { border-left-color: var(--fail); }
.rule[data-verdict="passed"] { border-left-color: var(--pass); }
.rule[data-verdict="known-failure"], .rule[data-verdict="inconclusive"], .rule[data-verdict="skipped"] { border-left-color: var(--warn); }
.badge { display: inline-block; margin-right: .4rem; font-size: .75rem; font-weight: 700; letter-spacing: .03em; }
.rule[data-verdict="failed"] .badge { color: var(--fail); }
.rule[data-verdict="failed"][data-level="recommended"] { border-left-color: var(--rec); }
.rule[data-verdict="failed"][data-level="recommended"] .badge { color: var(--rec); }
.rule[data-verdict="passed"] .badge { color: var(--pass); }
.rule[data-verdict="known-failure"] .badge, .rule[data-verdict="inconclusive"] .badge, .rule[data-verdict="skipped"] .badge { color: var(--warn); }
.meta { color: var(--muted); font-size: .85rem; margin: .2rem 0 .4rem; }
blockquote.citation { margin: .4rem 0; padding: .1rem .75rem; border-left: 3px solid var(--line); color: #3c4043; }
blockquote.citation p { margin: .2rem 0; }
blockquote.citation footer { font-size: .8rem; color: var(--muted); }
.message { font-weight: 600; overflow-wrap: anywhere; }
@media print { #filters { display: none; } pre { max-height: none; } .rule { break-inside: avoid; } }
"#;

/// Shows a rule when both its verdict's and its level's filter are on. Without script every
/// rule shows and the filters stay hidden.
pub(super) const SCRIPT: &str = r##"
"use strict";
(function () {
  var filters = document.getElementById("filters");
  var buttons = Array.prototype.slice.call(filters.querySelectorAll("button"));
  var rules = Array.prototype.slice.call(document.querySelectorAll("#rules .rule"));
  var groups = Array.prototype.slice.call(document.querySelectorAll("#rules .group"));
  var shown = document.getElementById("shown");
  function on(kind, value) {
    return buttons.some(function (button) {
      return button.getAttribute("data-filter-" + kind) === value &&
        button.getAttribute("aria-pressed") === "true";
    });
  }
  function apply() {
    var count = 0;
    rules.forEach(function (rule) {
      var visible = on("verdict", rule.getAttribute("data-verdict")) &&
        on("level", rule.getAttribute("data-level"));
      rule.hidden = !visible;
      if (visible) { count += 1; }
    });
    groups.forEach(function (group) {
      group.hidden = !group.querySelector(".rule:not([hidden])");
    });
    shown.textContent = count + " of " + rules.length + " rules shown";
  }
  buttons.forEach(function (button) {
    button.addEventListener("click", function () {
      var pressed = button.getAttribute("aria-pressed") === "true";
      button.setAttribute("aria-pressed", pressed ? "false" : "true");
      apply();
    });
  });
  filters.hidden = false;
  apply();
})();
"##;
