#!/usr/bin/env bash
# End-to-end check of scripts/slurm/okfbench-array.sbatch on a real Slurm:
# starts a single-node cluster on this machine (munged, slurmctld and slurmd
# with a generated slurm.conf, all state under a temporary folder, ports
# chosen free on 127.0.0.1), submits the default experiment as a 4-task array
# with the dependent merge job, waits (bounded), checks that the merged records
# equal those of an unsharded run (timings aside), and stops every daemon it
# started, by PID.
#   scripts/test-slurm.sh [--build DIR]     (default build/; okfbench must be built)
# Installs Debian's slurm-wlm and munge when they are missing; when they cannot
# be installed it prints a [SKIP] line and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build=build
[[ "${1:-}" == "--build" ]] && build=${2:?--build needs a folder}
bin=$(cd "$build/cli" 2>/dev/null && pwd)/okfbench
[[ -x "$bin" ]] || { echo "test-slurm: $build/cli/okfbench is not built" >&2; exit 1; }

# Every wait is bounded; these are generous for a loaded 2-core machine.
daemon_wait=60      # s for a daemon to answer
jobs_wait=900       # s for the array and the merge to finish

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null ||
   ! command -v sbatch >/dev/null; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo -n"
  echo "test-slurm: installing slurm-wlm and munge" >&2
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
           slurm-wlm munge; } >/dev/null 2>&1; then
    echo "test-slurm: [SKIP] slurm-wlm and munge cannot be installed here (apt-get failed)" >&2
    exit 0
  fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/okfbench-slurm.XXXXXX")
chmod 700 "$tmp"
pids=()
fail() {
  echo "test-slurm: FAIL: $*" >&2
  for log in slurmctld.log slurmd.log munged.log; do
    [[ -f "$tmp/$log" ]] && { echo "--- last lines of $log" >&2; tail -5 "$tmp/$log" >&2; }
  done
  exit 1
}
cleanup() {
  local rc=$?
  if [[ -n "${SLURM_CONF:-}" ]] && ((${#pids[@]} > 1)); then scancel --quiet --user="$(id -un)" 2>/dev/null || true; fi
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [[ $rc -eq 0 ]]; then rm -rf "$tmp"; else echo "test-slurm: state kept in $tmp" >&2; fi
}
trap cleanup EXIT

# Waits until "$@" succeeds, at most $1 seconds; the rest is the command.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what did not happen within $seconds s"
    sleep 1
  done
}

# A free TCP port on 127.0.0.1: the first of a range that nothing listens on.
free_port() {
  local port
  for port in $(seq "$1" $(($1 + 200))); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  fail "no free port in $1..$(($1 + 200))"
}

user=$(id -un)
mkdir -p "$tmp/munge" "$tmp/ctld" "$tmp/spool"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
socket="$tmp/munge/munge.socket"
munged --foreground --force --key-file="$tmp/munge/munge.key" --socket="$socket" --pid-file="$tmp/munge/munged.pid" \
  --seed-file="$tmp/munge/munged.seed" --log-file="$tmp/munged.log" >"$tmp/munged.out" 2>&1 &
pids+=($!)
wait_for "$daemon_wait" "munged answering on $socket" bash -c "munge -S '$socket' -n | unmunge -S '$socket'"

ctld_port=$(free_port 17817)
slurmd_port=$(free_port $((ctld_port + 1)))
host=$(hostname -s)
node=$(slurmd -C | head -1)  # NodeName=<host> CPUs=... RealMemory=..., as this machine is
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=okfbench
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$tmp/ctld
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MailProg=/bin/true
MinJobAge=3600
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=okfbench Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
wait_for "$daemon_wait" "slurmctld answering on port $ctld_port" scontrol ping
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
wait_for "$daemon_wait" "node $host becoming idle" bash -c "sinfo -h -n '$host' -o %T | grep -qx idle"

# The sharded run, through the shipped recipe; each task takes one CPU.
out="$tmp/run"
submitted=$(scripts/slurm/okfbench-array.sbatch --out "$out" --shards 4 --okfbench "$bin" -- --cpus-per-task=1) ||
  fail "okfbench-array.sbatch could not submit"
echo "test-slurm: $submitted" >&2
read -r _ array _ _ _ merge _ <<<"$submitted"
merge=${merge%:}
deadline=$((SECONDS + jobs_wait))
while [[ -n "$(squeue -h -j "$array,$merge" -o %i 2>/dev/null)" ]]; do
  ((SECONDS < deadline)) || fail "the array and the merge job were still queued or running after $jobs_wait s: $(squeue -h)"
  sleep 2
done
for job in "$array" "$merge"; do
  states=$(scontrol show job "$job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')
  [[ "$states" == "JobState=COMPLETED " ]] || fail "job $job ended as: ${states:-unknown}; logs in $out"
done
[[ -f "$out/merged/results.jsonl" ]] || fail "the merge job wrote no $out/merged/results.jsonl"

# The same experiment unsharded, with the same bundle cache.
(cd "$tmp" && "$bin" run --out "$tmp/whole" --set "cache_dir=$out/cache" --progress quiet >"$tmp/whole.txt" 2>&1) ||
  fail "the unsharded run failed: $(tail -3 "$tmp/whole.txt")"

# Records by trial key, timings aside (they are the only run-dependent part).
node -e '
  const fs = require("fs");
  const load = (f) => fs.readFileSync(f, "utf8").split("\n").filter(Boolean).map(JSON.parse)
    .map((r) => { delete r.timings; return r; }).sort((a, b) => a.trial_key < b.trial_key ? -1 : 1);
  const [merged, whole] = [load(process.argv[1]), load(process.argv[2])];
  if (merged.length !== whole.length) { console.error(`${merged.length} merged records, ${whole.length} unsharded`); process.exit(1); }
  for (let i = 0; i < whole.length; i++) {
    if (JSON.stringify(merged[i]) !== JSON.stringify(whole[i])) { console.error(`trial ${whole[i].trial_key} differs`); process.exit(1); }
  }
  console.log(`${whole.length} records`);
' "$out/merged/results.jsonl" "$tmp/whole/results.jsonl" >"$tmp/compare.txt" 2>&1 ||
  fail "the merged records differ from the unsharded run's: $(cat "$tmp/compare.txt")"
echo "test-slurm: OK in $SECONDS s: 4 array tasks and the merge job completed; merged $(cat "$tmp/compare.txt") equal the unsharded run's"
