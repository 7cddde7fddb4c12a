#!/bin/sh
# The CI gate of petstore-conformance, shared by ci/github.yml and ci/gitlab.yml.
#
#   sh ci/gate.sh [PREVIOUS_REPORT]
#
# Runs the suite (its options from petstore-conformance.toml and PETSTORE_* variables, e.g.
# PETSTORE_PROFILE=nightly), checks the report is intact, compares it with the previous
# night's report when there is one, and ends with one exit code:
#   0  pass
#   1  fail: the target does not conform (PETSTORE_CI_GATE=run, the default), or a gated rule
#      newly fails since the previous report (PETSTORE_CI_GATE=new-failures)
#   2  error: the suite could not run (unreachable, key refused, configuration), or the
#      previous report is of another target or catalogue
#   3  undetermined: a required rule reached no verdict; PETSTORE_CI_UNDETERMINED=pass makes
#      it 0 (said in the log), the default keeps it 3, which CI shows as a failure
#   130/143  interrupted
set -u
previous="${1:-}"
reports="${PETSTORE_REPORT_DIR:-reports}"
gate="${PETSTORE_CI_GATE:-run}"
undetermined="${PETSTORE_CI_UNDETERMINED:-fail}"

case "$gate" in run | new-failures) ;; *)
    echo "PETSTORE_CI_GATE=$gate: run or new-failures" >&2
    exit 2
    ;;
esac

status=0
petstore-conformance run || status=$?
case "$status" in
0 | 1 | 3) ;;
*)
    # 2 (could not run) and 130/143 (interrupted) leave no verdict to compare.
    echo "petstore-conformance run: exit $status, no verdict" >&2
    exit "$status"
    ;;
esac
if ! petstore-conformance verify-report "$reports/report.json"; then
    echo "the report is not intact" >&2
    exit 2
fi

compared=0
if [ -n "$previous" ] && [ -f "$previous" ]; then
    petstore-conformance compare "$previous" "$reports/report.json" \
        --markdown "$reports/compare.md" || compared=$?
else
    echo "no previous report: nothing to compare with"
fi
if [ "$compared" -ne 0 ] && [ "$compared" -ne 1 ]; then
    exit 2
fi

if [ "$gate" = run ] && [ "$status" -eq 1 ]; then
    exit 1
fi
if [ "$compared" -eq 1 ]; then
    echo "a gated rule newly fails since the previous report" >&2
    exit 1
fi
if [ "$status" -eq 3 ]; then
    if [ "$undetermined" = pass ]; then
        echo "undetermined (a required rule reached no verdict): passed, as PETSTORE_CI_UNDETERMINED=pass asks"
        exit 0
    fi
    exit 3
fi
exit 0
