# Shared by tools/record-perf/record.sh and tools/record-reads/record.sh (sourced, not run):
# the tick steal recording (steal.bt under bpftrace, docs/perf.md "Steal") and the input of
# `kacct identify` kept beside a recording. Callers set `tmp` (a scratch directory) and `here_steal`
# (this directory), and call steal_stop from their EXIT trap too.
bt_pid=
steal_txt=
# Start steal.bt unless KACCT_STEAL=0; waits until its probes are attached.
steal_start() {
  [ "${KACCT_STEAL:-1}" != 0 ] || return 0
  command -v bpftrace >/dev/null || { echo "record: bpftrace not found (apt-get install bpftrace; or KACCT_STEAL=0)" >&2; exit 1; }
  local tick_fn=tick_nohz_handler
  grep -q ' tick_nohz_handler$' /proc/kallsyms || tick_fn=tick_sched_timer
  { printf 'BEGIN\n{\n  printf("ready\\n");\n}\n'; sed "s/TICK_FN/$tick_fn/" "$here_steal/steal.bt"; } > "$tmp/steal.bt"
  # Room for 262144 ticks (HZ * CPUs * seconds); ticks beyond are not known (later reads: unverifiable).
  : > "$tmp/steal.txt"   # before the loop below greps it
  BPFTRACE_MAP_KEYS_MAX=262144 stdbuf -oL bpftrace "$tmp/steal.bt" > "$tmp/steal.txt" 2> "$tmp/steal.err" &
  bt_pid=$!
  for _ in $(seq 600); do grep -q '^ready$' "$tmp/steal.txt" && break; kill -0 $bt_pid 2>/dev/null || break; sleep 0.1; done
  grep -q '^ready$' "$tmp/steal.txt" || { echo "record: bpftrace did not start:" >&2; cat "$tmp/steal.err" >&2; exit 1; }
}
# Stop steal.bt (it prints its map at exit); sets steal_txt to its output ("" without steal).
steal_stop() {
  [ -n "$bt_pid" ] || return 0
  # SIGINT makes bpftrace print the map and exit; one was seen lost once: repeated every 5 s.
  for _ in $(seq 12); do
    kill -INT $bt_pid 2>/dev/null || break
    for _ in $(seq 50); do kill -0 $bt_pid 2>/dev/null || break; sleep 0.1; done
  done
  wait $bt_pid || true
  bt_pid=
  steal_txt=$tmp/steal.txt
  grep -i 'lost' "$tmp/steal.err" >&2 || true   # bpftrace reports lost output events on stderr
}
# {"ticks", "ns"} of all ticks steal.bt saw, or null.
steal_all_json() {
  [ -n "$steal_txt" ] || { echo null; return; }
  awk '/^@steal\[/{n++; s+=$NF} END{printf "{\"ticks\": %d, \"ns\": %d}", n+0, s+0}' "$steal_txt"
}
# {"ticks", "ns"} of the kacct:tick_steal lines kept in a reduced trace (.xz).
steal_kept_json() {
  xz -dc "$1" | awk '/kacct:tick_steal:/{n++; sub(/.*steal=/, ""); s+=$0} END{printf "{\"ticks\": %d, \"ns\": %d}", n+0, s+0}'
}
# What `kacct identify --root DIR` reads, as tools/record-qemu keeps it: DIR/proc/... and the config.
identify_input() {
  local d=$1/identify f
  mkdir -p "$d/proc/sys/kernel" "$d/boot"
  for f in sys/kernel/osrelease version cmdline cpuinfo; do cat "/proc/$f" > "$d/proc/$f"; done
  if [ -r "/boot/config-$(uname -r)" ]; then cp "/boot/config-$(uname -r)" "$d/boot/"
  elif [ -r /proc/config.gz ]; then cat /proc/config.gz > "$d/proc/config.gz"; fi
}
# meta.json's "hz", "config", "cpu" from `kacct identify --root OUT/identify` (after identify_input),
# which also leaves its whole answer in OUT/identify.json.
identify_meta() {
  "$kacct" identify --root "$1/identify" --json > "$1/identify.json"
  python3 - "$1/identify.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f'"hz": {j["kernel"]["hz"]}, "config": "{j["config"]}", "cpu": "{j["cpu"]}"', end='')
PY
}
