#!/usr/bin/env bash
# Many hosts, emulated: 1 coordinator, 2 servers and 4 workers, each in a
# network namespace of its own with its own address on a bridge (10.77.0.0/24
# inside a hub namespace: nothing leaves the namespaces this test makes),
# started as Kubernetes starts pods - the environment only
# (KUBERNETES_SERVICE_HOST, LOCKSTEP_COORDINATOR, POD_IP,
# JOB_COMPLETION_INDEX), no launcher, no loopback, no shared Unix sockets -
# with the snapshot folder on one tmpfs every server sees. Mid-job a whole
# "host" dies (every process of server 1's namespace, SIGKILL) and comes
# back (the engine replacing the pod); the job recovers from its newest
# round and reaches the target. Two workers sit behind shaped links
# (`--real-link`, as `--links real` shapes them).
#   multihost_test.sh BIN_DIR
set -euo pipefail
bin="$(realpath "$1")"
target=0.85
tag="ls$$"
hub="$tag-hub"
work="$(mktemp -d /tmp/lockstep-netns.XXXXXX)"
roles=(coordinator server0 server1 worker0 worker1 worker2 worker3)
ns() { echo "$tag-$1"; }

cleanup() {
  set +e
  for r in "${roles[@]}"; do
    for pid in $(ip netns pids "$(ns "$r")" 2>/dev/null); do kill -9 "$pid"; done
  done
  sleep 0.5
  for r in "${roles[@]}"; do ip netns del "$(ns "$r")" 2>/dev/null; done
  ip netns del "$hub" 2>/dev/null
  mountpoint -q "$work/shared" && umount "$work/shared"
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do echo "== $f"; grep -v "@progress" "$f" | tail -8; done >&2
  exit 1
}

# The network: a bridge in the hub namespace, one veth pair per host.
ip netns add "$hub"
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
i=1
for r in "${roles[@]}"; do
  ip netns add "$(ns "$r")"
  ip link add "v$tag$i" type veth peer name eth0 netns "$(ns "$r")"
  ip link set "v$tag$i" netns "$hub"
  ip -n "$hub" link set "v$tag$i" master br0 up
  ip -n "$(ns "$r")" addr add "10.77.0.$i/24" dev eth0
  ip -n "$(ns "$r")" link set eth0 up
  ip -n "$(ns "$r")" link set lo up
  i=$((i + 1))
done
addr() {
  local i
  for i in "${!roles[@]}"; do
    if [ "${roles[$i]}" = "$1" ]; then echo "10.77.0.$((i + 1))"; fi
  done
}

# The snapshot folder: one tmpfs every server (and the coordinator) sees.
mkdir -p "$work/shared"
mount -t tmpfs -o size=256m lockstep-shared "$work/shared"

coordinator="tcp://$(addr coordinator):7400"
# The job's keys, as the engine would mount them in every pod.
"$bin/lockstep-keys" --out "$work/keys" >/dev/null || fail "no job keys"
# Starts role $1 (binary $2, rank $3) in its namespace, as a pod.
start() {
  local role="$1" binary="$2" rank="$3"; shift 3
  ip netns exec "$(ns "$role")" env -i PATH=/usr/bin:/bin \
    KUBERNETES_SERVICE_HOST=10.96.0.1 LOCKSTEP_COORDINATOR="$coordinator" \
    POD_IP="$(addr "$role")" JOB_COMPLETION_INDEX="$rank" \
    LOCKSTEP_KEYS="$work/keys" \
    "$bin/$binary" "$@" >> "$work/$role.log" 2>&1 &
}
start coordinator lockstep-coordinator 0 --servers 2 --workers 4 \
  --evaluators 0 --sync bsp --model mlp:256,128 --data fashion-mnist \
  --batch 32 --optimizer momentum --lr 0.05 --epochs 3 --lr-schedule cosine \
  --eval-every 0 --heartbeat-ms 200 --snapshot-dir "$work/shared/rounds" \
  --snapshot-every-clocks 100 --run-dir "$work/run"
coordinator_pid=$!
for s in 0 1; do start "server$s" lockstep-server "$s"; done
for w in 0 1; do start "worker$w" lockstep-worker "$w"; done
# Workers 2 and 3 sit behind a real 1 Gbit/s link with 1 ms latency
# (--links real's shaping: tc on both ends of their pair; on a kernel
# without netem a tbf at the rate, the latency waited out by the worker).
for w in 2 3; do
  start "worker$w" lockstep-worker "$w" --hetero net=1000/1 \
    --real-link "$hub:v$tag$((w + 4)):eth0"
done

# Once a round is durable and training went on past it, host server1 dies.
rounds() { grep -c "snapshot round .* complete" "$work/coordinator.log" || true; }
for _ in $(seq 600); do [ "$(rounds)" -ge 2 ] && break; sleep 0.2; done
[ "$(rounds)" -ge 2 ] || fail "no snapshot rounds"
shaping="$(ip netns exec "$(ns worker2)" tc qdisc show dev eth0)"
echo "$shaping" | grep -Eq "qdisc (tbf|netem)" || fail "worker 2's link is not shaped: $shaping"
ip -n "$hub" -d link show "v${tag}6" >/dev/null || fail "no hub end for worker 2"
hub_shaping="$(ip netns exec "$hub" tc qdisc show dev "v${tag}6")"
echo "$hub_shaping" | grep -Eq "qdisc (tbf|netem)" || fail "the hub's end of worker 2's link is not shaped"
pids="$(ip netns pids "$(ns server1)")"
[ -n "$pids" ] || fail "no process on host server1"
kill -9 $pids
sleep 1
start server1 lockstep-server 1   # the engine replaces the pod

for _ in $(seq 900); do kill -0 "$coordinator_pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$coordinator_pid" 2>/dev/null && fail "the job did not end"
wait "$coordinator_pid" || fail "the coordinator failed"
summary="$work/run/summary.json"
[ -f "$summary" ] || fail "no summary"
read -r accuracy recoveries < <(/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["test_accuracy"], s["recoveries"])' "$summary")
[ "$recoveries" -ge 1 ] || fail "no recovery recorded"
/usr/bin/python3 -c "import sys; sys.exit(0 if $accuracy >= $target else 1)" ||
  fail "test accuracy $accuracy is below $target"
grep -q "placed by kubernetes" "$work/server0.log" || fail "roles were not placed by the environment"
recovered="$(grep -m1 -o "recovered in [0-9.]* s" "$work/coordinator.log" || true)"
first="$(grep -m1 -o "first commit after the recovery: clock [0-9]*, [0-9.]* s" "$work/coordinator.log" || true)"
qdisc="$(echo "$shaping" | grep -Eo "qdisc (tbf|netem)|rate [0-9.]+[A-Za-z]+" | tr '\n' ' ')"
echo "PASS: 7 hosts on a bridge; workers 2-3 on shaped links (${qdisc% });" \
     "host server1 killed and replaced; $recoveries" \
     "recovery ($recovered, $first); final test accuracy $accuracy"
