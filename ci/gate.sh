#!/bin/sh
# The CI gate of petstore-conformance, shared by ci/github.yml and ci/gitlab.yml.
#
#   sh ci/gate.sh [PREVIOUS_REPORT]        (or PETSTORE_CI_PREVIOUS=PREVIOUS_REPORT)
#
# Runs the suite (its options from petstore-conformance.toml and PETSTORE_* variables, e.g.
# PETSTORE_PROFILE=nightly), checks the report is intact, compares it with the previous
# night's report when one is named, and ends with one exit code. It fails closed: a target
# that does not conform fails the gate whatever the comparison finds, a first night included
# (a team that knows of a breakage lists it in known_failures, and the run conforms but for
# it); the comparison says what is new. A previous report that is named must be there: no
# report where one was expected (its download failed) is an error, not a first night.
#   0  pass: the target conforms (known failures aside), and no gated rule newly fails
#   1  fail: the target does not conform (the log says which gated rules newly fail since the
#      previous report, PETSTORE_CI_GATE=new-failures, and which failed already)
#   2  error: no base URL (PETSTORE_BASE_URL unset, and no base_url in the profile), the
#      suite could not run (unreachable, key refused, configuration, no operation at the base
#      URL), the report is not intact, or the previous report named is missing, edited, or of
#      another target or catalogue
# The gate judges only the target it is given: with no base URL anywhere it stops, rather than
# run the built-in reference in the target's place and call that green. PETSTORE_CI_TARGET=
# reference asks for the reference by name (a smoke test of the gate itself).
#   3  undetermined: a required rule reached no verdict; PETSTORE_CI_UNDETERMINED=pass makes
#      it 0 (said in the log), the default keeps it 3, which CI shows as a failure
#   130/143  interrupted
set -u
previous="${1:-${PETSTORE_CI_PREVIOUS:-}}"
gate="${PETSTORE_CI_GATE:-run}"
undetermined="${PETSTORE_CI_UNDETERMINED:-fail}"
# Beside the reports, not among them: a signed report directory holds only what its
# attestation covers.
comparison="${PETSTORE_CI_COMPARISON:-compare.md}"

case "$gate" in run | new-failures) ;; *)
    echo "PETSTORE_CI_GATE=$gate: run or new-failures" >&2
    exit 2
    ;;
esac

# The options as the run will take them (flags aside: the gate passes none): where the
# reports go (a profile's report_dir included) and whether a target was named.
if ! config=$(petstore-conformance run --print-config); then
    echo "petstore-conformance run --print-config: the configuration does not read" >&2
    exit 2
fi
reports=$(printf '%s\n' "$config" | sed -n 's/^report_dir = "\(.*\)" *#.*$/\1/p; s/^report_dir = "\(.*\)"$/\1/p' | head -n 1)
reports="${reports:-${PETSTORE_REPORT_DIR:-reports}}"
if [ "${PETSTORE_CI_TARGET:-}" != reference ] &&
    ! printf '%s\n' "$config" | grep '^base_url = ' >/dev/null; then
    echo "no base URL: set PETSTORE_BASE_URL to the target's address, /v1 included (or base_url in the profile); the gate runs against no target it was not given" >&2
    exit 2
fi

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

# 0 nothing new, 1 a gated rule newly fails, 2 no comparison where one was asked for.
compared=0
if [ -z "$previous" ]; then
    echo "no previous report: nothing to compare with"
elif [ ! -f "$previous" ]; then
    echo "the previous report $previous is not there (its download failed?): nothing compared" >&2
    compared=2
else
    petstore-conformance compare "$previous" "$reports/report.json" \
        --markdown "$comparison" || compared=$?
    if [ "$compared" -ne 0 ] && [ "$compared" -ne 1 ]; then
        echo "the previous report $previous cannot be compared with tonight's" >&2
        compared=2
    elif [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        cat "$comparison" >>"$GITHUB_STEP_SUMMARY"
    fi
fi

if [ "$status" -eq 1 ]; then
    if [ "$compared" -eq 1 ]; then
        echo "does not conform: a gated rule newly fails since the previous report" >&2
    elif [ "$gate" = new-failures ]; then
        echo "does not conform: no gated rule newly fails since the previous report, but the gate fails on every gated failure (list a known one in known_failures to gate on what is new)" >&2
    fi
    exit 1
fi
if [ "$compared" -eq 2 ]; then
    exit 2
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
