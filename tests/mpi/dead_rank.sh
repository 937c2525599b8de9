#!/usr/bin/env bash
# dead_rank.sh BINARY - a rank that dies mid-training must end the job with an error, not a
# hang: run BINARY (tests/mpi/dead_rank.cpp) on 2 ranks under a 60 s timeout, once with
# rank 1 crashing (abort) and once exiting with an error code (exit 3), and require a
# non-zero exit that is not timeout's (124), and mpirun's message naming the dead rank.
set -u
bin=$1
mpirun=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
out=$(mktemp)
fail() { echo "dead_rank.sh: FAILED ($mode): $*"; sed 's/^/  | /' "$out"; rm -f "$out"; exit 1; }
for mode in abort exit; do
  start=$(date +%s)
  timeout 60 $mpirun -np 2 "$bin" "$mode" >"$out" 2>&1
  rc=$?
  took=$(( $(date +%s) - start ))
  [ "$rc" -eq 124 ] && fail "the job hung (killed by timeout after 60 s)"
  [ "$rc" -eq 0 ] && fail "the job exited 0 although rank 1 died"
  grep -q "rank 1 dies ($mode) at step 5" "$out" || fail "rank 1 did not reach its death"
  grep -q "finished, which it must not" "$out" && fail "a surviving rank ran to the end"
  if [ "$mode" = abort ]; then
    grep -Eq "mpirun noticed that process rank 1 .* exited on signal 6" "$out" ||
      fail "mpirun's report of the dead rank is missing"
  else
    grep -q "mpirun detected that one or more processes exited with non-zero status" "$out" &&
      grep -Eq "Process name: \[\[[0-9]+,[0-9]+\],1\]" "$out" && grep -Eq "Exit code: +3" "$out" ||
      fail "mpirun's report of the dead rank is missing"
  fi
  echo "dead_rank.sh: rank 1 died ($mode), the job ended in ${took} s with exit code $rc and mpirun named rank 1"
done
rm -f "$out"
