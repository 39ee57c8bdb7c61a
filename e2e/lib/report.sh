# Shared pass/fail bookkeeping for bash suites. Source it, call `pass NAME`,
# `fail NAME DETAIL`, and `finish` at the end. Counts go to $E2E_RESULTS/$SUITE.counts
# ("PASSED FAILED") so run.sh can add up the totals.
PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "  ok     ${SUITE}: $1"; }
fail() { FAILED=$((FAILED + 1)); printf '  FAIL   %s: %s -- %s\n' "$SUITE" "$1" "$(printf '%s' "${2:-}" | tr '\n' ' ' | head -c 1500)"; }
# check NAME CONDITION-EXIT-CODE DETAIL
check() { if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1" "${3:-}"; fi; }
finish() {
  echo "${SUITE} suite: ${PASSED} passed, ${FAILED} failed"
  if [ -n "${E2E_RESULTS:-}" ]; then echo "${PASSED} ${FAILED}" > "${E2E_RESULTS}/${SUITE}.counts"; fi
  [ "$FAILED" -eq 0 ]
}
