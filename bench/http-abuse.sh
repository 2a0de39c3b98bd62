#!/usr/bin/env bash
# The monitor's HTTP server under attack (issue 25): a root `tickscope monitor -i 1ms -a 0`
# (mlockall, the server on the housekeeping CPUs) takes SECONDS of abuse from an
# unprivileged user (uid 65534, `setpriv`) — declared 10^12-byte bodies, partial bodies
# left open, pipelining clients that never read, 300 idle connections kept open, slowloris
# heads, 8 MiB header lines, malformed requests — while root scrapes /metrics every 100 ms.
# Prints the slowest scrape, RSS, threads and descriptors before, at their peak during and
# after the attack, where every server thread may run, and how long SIGTERM took.
#
# Usage (as root): bench/http-abuse.sh [SECONDS=60] [BINARY=target/release/tickscope]
# SKIP=huge_body,idle,… leaves attacks out (huge_body, long_header, malformed, slowloris,
# partial_body, pipeline, idle) — e.g. to see what else a server that dies at once suffers.
# Needs python3 at /usr/bin/python3 (readable by uid 65534), curl and setpriv (util-linux).
# Nothing is left running: the monitor and the attacker are stopped on exit.
set -euo pipefail
secs=${1:-60}
bin=${2:-target/release/tickscope}
py=/usr/bin/python3
[ "$(id -u)" = 0 ] || { echo "run as root (the monitor runs as root, the attacker as uid 65534)" >&2; exit 2; }
for tool in "$py" curl setpriv; do
  command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
work=$(mktemp -d)
chmod 755 "$work"
pid=
attacker=
cleanup() {
  [ -n "$attacker" ] && kill "$attacker" 2>/dev/null || true
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/attack.py" <<'EOF'
# The attacker: one thread per kind of abuse, each going on until the deadline.
import socket, sys, threading, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
end = time.monotonic() + secs
stats = {}
def count(k, n=1):
    stats[k] = stats.get(k, 0) + n
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    return s
def alive(s):
    # Closed by the server? (a readable socket with nothing to read, or an error)
    try:
        s.setblocking(False)
        return s.recv(65536, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
def keep(n, opener, name, pause):
    held = []
    while time.monotonic() < end:
        kept = []
        for s in held:
            if alive(s):
                kept.append(s)
            else:
                count(name + " closed by the server"); s.close()
        held = kept
        while len(held) < n and time.monotonic() < end:
            try:
                held.append(opener()); count(name + " opened")
            except OSError:
                count(name + " refused"); break
        time.sleep(pause)
    for s in held: s.close()
def huge_body():
    while time.monotonic() < end:
        try:
            s = conn()
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\nA")
            s.recv(1024); count("huge body sent"); s.close()
        except OSError:
            count("huge body error")
        time.sleep(0.2)
def partial():
    s = conn(); s.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\nab"); return s
def pipelined():
    s = conn(); s.setblocking(False)
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 2000
    try:
        while True: s.send(req)
    except OSError:
        pass
    return s
def idle():
    return conn()
def slowloris():
    s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"); return s
def slow_drip():
    held = []
    while time.monotonic() < end:
        held = [s for s in held if alive(s)]
        while len(held) < 50:
            try: held.append(slowloris()); count("slowloris opened")
            except OSError: break
        for s in held:
            try: s.setblocking(True); s.settimeout(0.1); s.send(b"X-a: b\r\n")
            except OSError: pass
        time.sleep(1)
def long_header():
    line = b"GET /metrics HTTP/1.1\r\nX-Long: " + b"a" * (8 << 20)
    while time.monotonic() < end:
        try:
            s = conn(); s.settimeout(2)
            sent = 0
            while sent < len(line): sent += s.send(line[sent:sent + 65536])
            count("long header sent whole")
        except OSError:
            count("long header cut by the server")
        time.sleep(1)
MALFORMED = [b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"\x00\xff\r\n\r\n",
             b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
             b"POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
             b"GET /metrics HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(500)) + b"\r\n"]
def malformed():
    while time.monotonic() < end:
        for raw in MALFORMED:
            try:
                s = conn(); s.sendall(raw); s.recv(1024); s.close(); count("malformed sent")
            except OSError:
                count("malformed error")
        time.sleep(0.2)
jobs = {"huge_body": huge_body, "long_header": long_header, "malformed": malformed,
        "slowloris": slow_drip,
        "partial_body": lambda: keep(20, partial, "partial body", 0.5),
        "pipeline": lambda: keep(10, pipelined, "never-reading pipeline", 0.5),
        "idle": lambda: keep(300, idle, "idle", 1.0)}
skip = set(filter(None, sys.argv[3].split(","))) if len(sys.argv) > 3 else set()
threads = [threading.Thread(target=j, daemon=True) for n, j in jobs.items() if n not in skip]
for t in threads: t.start()
for t in threads: t.join(secs + 10)
for k in sorted(stats): print(f"  attacker: {k}: {stats[k]}")
EOF

cat >"$work/scrape.py" <<'EOF'
# The scraper: GET /metrics every 100 ms until the deadline; the slowest and the failures.
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
end = time.monotonic() + secs
took, failed = [], 0
while time.monotonic() < end:
    t = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b: break
            data += b
        s.close()
        if b" 200 " not in data.split(b"\r\n", 1)[0] or b"# TYPE tickscope_wakeup_latency_seconds histogram" not in data:
            failed += 1
            print(f"  scrape failed: {data[:60]!r} ({len(data)} bytes)")
        else:
            took.append(time.monotonic() - t)
    except OSError as e:
        failed += 1
        print(f"  scrape failed: {e}")
    time.sleep(0.1)
took.sort()
mx = took[-1] * 1000 if took else float("nan")
med = took[len(took) // 2] * 1000 if took else float("nan")
print(f"scrapes: {len(took)} answered, {failed} failed; median {med:.1f} ms, max {mx:.1f} ms")
print(f"SCRAPE_MAX_MS={mx:.0f} SCRAPE_FAILED={failed}")
EOF
chmod 644 "$work"/*.py

port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" monitor -q -i 1ms -a 0 --listen "127.0.0.1:$port" >/dev/null 2>"$work/stderr" &
pid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
sleep 2
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0; }
threads() { ls "/proc/$pid/task" 2>/dev/null | wc -l; }
fds() { ls "/proc/$pid/fd" 2>/dev/null | wc -l; }
echo "binary: $bin ($("$bin" --version 2>/dev/null || echo '?')); attack: ${secs}s as uid 65534${SKIP:+, without $SKIP}"
echo "monitor: $(head -1 "$work/stderr")"
rss0=$(rss); thr0=$(threads); fd0=$(fds)
echo "before: RSS ${rss0} KiB, ${thr0} threads, ${fd0} fds"

setpriv --reuid=65534 --regid=65534 --clear-groups "$py" "$work/attack.py" "$port" "$secs" "${SKIP:-}" >"$work/attack.out" 2>&1 &
attacker=$!
"$py" "$work/scrape.py" "$port" "$secs" >"$work/scrape.out" 2>&1 &
scraper=$!
rssmax=$rss0; thrmax=$thr0; fdmax=$fd0; died=
while kill -0 "$scraper" 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null; then died=1; break; fi
  r=$(rss); t=$(threads); f=$(fds)
  [ "$r" -gt "$rssmax" ] && rssmax=$r
  [ "$t" -gt "$thrmax" ] && thrmax=$t
  [ "$f" -gt "$fdmax" ] && fdmax=$f
  sleep 0.2
done
wait "$scraper" || true
wait "$attacker" || true
attacker=
cat "$work/attack.out"
grep -v '^SCRAPE_' "$work/scrape.out"
if [ -n "$died" ] || ! kill -0 "$pid" 2>/dev/null; then
  wait "$pid" 2>/dev/null && st=0 || st=$?
  echo "RESULT: the monitor DIED during the attack (exit status $st); its stderr:"
  tail -3 "$work/stderr"
  pid=
  exit 1
fi
sleep 1
rss1=$(rss); thr1=$(threads); fd1=$(fds)
echo "peak during: RSS ${rssmax} KiB (+$((rssmax - rss0))), ${thrmax} threads (+$((thrmax - thr0))), ${fdmax} fds (+$((fdmax - fd0)))"
echo "after: RSS ${rss1} KiB (+$((rss1 - rss0))), ${thr1} threads, ${fd1} fds"
placement=ok
for t in /proc/"$pid"/task/*; do
  name=$(cat "$t/comm" 2>/dev/null) || continue
  cpus=$(awk '/^Cpus_allowed_list/ {print $2}' "$t/status" 2>/dev/null) || continue
  echo "  thread $(basename "$t") $name: CPUs $cpus"
  case "$name" in tickscope-http) [ "$cpus" = 0 ] || [[ "$cpus" =~ (^|,)0(-|,|$) ]] && placement=bad ;; esac
done
t0=$(date +%s%N)
kill -TERM "$pid"
wait "$pid" && st=0 || st=$?
term_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
pid=
echo "SIGTERM: exit status $st after ${term_ms} ms"
eval "$(grep '^SCRAPE_MAX_MS=' "$work/scrape.out")"
ok() { [ "${1:-}" = 1 ] && echo yes || echo NO; }
echo "scrapes within 1 s, none failed: $(ok "$([ "$SCRAPE_FAILED" = 0 ] && [ "${SCRAPE_MAX_MS:-99999}" -lt 1000 ] && echo 1)")"
echo "RSS within 4 MiB (peak and after): $(ok $([ $((rssmax - rss0)) -lt 4096 ] && [ $((rss1 - rss0)) -lt 4096 ] && echo 1))"
echo "threads within +0, fds within +65 (64 connections + 1 being closed): $(ok "$([ "$thrmax" -le "$thr0" ] && [ $((fdmax - fd0)) -le 65 ] && echo 1)")"
echo "server threads on housekeeping CPUs (not 0): $(ok $([ $placement = ok ] && echo 1))"
echo "SIGTERM within 1 s: $(ok $([ "$term_ms" -lt 1000 ] && echo 1))"
