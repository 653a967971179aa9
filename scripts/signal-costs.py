#!/usr/bin/env python3
"""What PostgreSQL spends on each signal of `benches/signals.rs`: runs the bench's binary and
measures its signal phase only, on the bench's own database (the machine is shared, so
PostgreSQL-wide figures would include other users' work).

Stops the bench (SIGSTOP) when it prints its `setup:` line and when it prints `signals:`,
waits for the backends to flush their statistics, and reads at each stop:
  - CPU ticks of every backend of the bench's database (/proc), and of the bench process
  - pg_stat_database / pg_stat_user_tables / pg_stat_user_indexes of that database
  - the WAL LSN (cluster-wide: other users add to it)
  - the server log offset (when statements are logged, they are summed per statement text)

usage: scripts/signal-costs.py BENCH_BINARY [--log] [--signals N]
  BENCH_BINARY: what `cargo bench --bench signals --no-run` names (target/release/deps/signals-…)
  --log: every statement logged (`log_min_duration_statement = 0` on the bench's connections
         only) and summed per statement text: counts and server time per signal. Logging slows
         the server: take CPU figures from a run without it.
Linux only (/proc); PostgreSQL on 127.0.0.1, its log in /var/log/postgresql (Debian's layout).
"""
import os, re, signal, subprocess, sys, time, json, collections

TICK = os.sysconf("SC_CLK_TCK")
LOG = "/var/log/postgresql/postgresql-15-main.log"
ADMIN = "postgres://postgres@127.0.0.1:5432/test"


def psql(db, sql):
    out = subprocess.run(["psql", "-qtAX", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-F", "\t", "-c", sql],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    return [l.split("\t") for l in out.stdout.strip().splitlines() if l]


def ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def backend_ticks(db):
    pids = [int(r[0]) for r in psql("postgres", f"select pid from pg_stat_activity where datname = '{db}'")]
    return {p: ticks(p) for p in pids}


def snapshot(db, bench_pid, backend):
    dbrow = psql(db, "select xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted, blks_hit, blks_read from pg_stat_database where datname = current_database()")[0]
    tables = {r[0]: list(map(int, r[1:])) for r in psql(db, "select relname, coalesce(seq_scan,0), coalesce(seq_tup_read,0), coalesce(idx_scan,0), coalesce(idx_tup_fetch,0), n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del from pg_stat_user_tables")}
    indexes = {r[0] + "." + r[1]: int(r[2]) for r in psql(db, "select relname, indexrelname, idx_scan from pg_stat_user_indexes")}
    iotables = {r[0]: list(map(int, r[1:])) for r in psql(db, "select relname, coalesce(heap_blks_hit,0)+coalesce(heap_blks_read,0), coalesce(idx_blks_hit,0)+coalesce(idx_blks_read,0) from pg_statio_user_tables")}
    lsn = int(psql("postgres", "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")[0][0])
    return dict(backend=backend, db=list(map(int, dbrow)), tables=tables, indexes=indexes, io=iotables,
                lsn=lsn, bench=ticks(bench_pid), log=os.path.getsize(LOG), t=time.time())


def main():
    binary = sys.argv[1]
    args = sys.argv[2:]
    log = "--log" in args
    n = int(args[args.index("--signals") + 1]) if "--signals" in args else 20000
    env = dict(os.environ)
    url = ADMIN + ("?options=-c%20log_min_duration_statement%3D0" if log else "")
    env.update(NUDGE_BENCH_DATABASE_URL=url, NUDGE_BENCH_SIGNALS=str(n))
    p = subprocess.Popen([binary, "--bench"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    db = f"nudge_bench_{p.pid}"
    snaps = []
    out = []
    for line in p.stdout:
        out.append(line)
        sys.stdout.write(line)
        sys.stdout.flush()
        if line.startswith("setup:") or line.startswith("signals:"):
            os.kill(p.pid, signal.SIGSTOP)
            cpu = backend_ticks(db)  # before the pool could close a connection
            time.sleep(11.5)  # idle backends flush their statistics after 10 s
            snaps.append(snapshot(db, p.pid, cpu))
            os.kill(p.pid, signal.SIGCONT)
    p.wait()
    a, b = snaps
    print(f"--- per signal ({n}) ---")
    cpu = 0
    for pid, t in b["backend"].items():
        if t is None:
            continue
        cpu += t - (a["backend"].get(pid) or 0)
    print(f"backends: {len(b['backend'])}; PostgreSQL CPU {cpu / TICK * 1e6 / n:.0f} us/signal; bench CPU {(b['bench'] - a['bench']) / TICK * 1e6 / n:.0f} us/signal")
    names = "xact_commit xact_rollback tup_returned tup_fetched tup_inserted tup_updated tup_deleted blks_hit blks_read".split()
    print("  " + ", ".join(f"{k} {(y - x) / n:.2f}" for k, x, y in zip(names, a["db"], b["db"])))
    print(f"  WAL (cluster) {(b['lsn'] - a['lsn']) / n:.0f} B/signal")
    cols = "seq_scan seq_tup_read idx_scan idx_tup_fetch ins upd hot_upd del".split()
    for t in sorted(b["tables"]):
        d = [y - x for x, y in zip(a["tables"].get(t, [0] * 8), b["tables"][t])]
        io = [y - x for x, y in zip(a["io"].get(t, [0, 0]), b["io"].get(t, [0, 0]))]
        if any(d) or any(io):
            print(f"  {t:24s} " + " ".join(f"{c}={v / n:.2f}" for c, v in zip(cols, d) if v) + f" heap_blks={io[0] / n:.2f} idx_blks={io[1] / n:.2f}")
    for i in sorted(b["indexes"]):
        d = b["indexes"][i] - a["indexes"].get(i, 0)
        if d:
            print(f"    idx {i:40s} scans={d / n:.2f}")
    if log:
        with open(LOG, "rb") as f:
            f.seek(a["log"])
            text = f.read(b["log"] - a["log"]).decode("utf-8", "replace")
        stats = collections.defaultdict(lambda: [0, 0.0])
        phase = collections.defaultdict(lambda: [0, 0.0])
        rx = re.compile(r"@" + db + r" LOG:  duration: ([0-9.]+) ms  (parse|bind|execute|statement)([^:]*): (.*)")
        entries = []
        cur = None
        for line in text.splitlines():
            m = rx.search(line)
            if m:
                cur = [float(m.group(1)), m.group(2), m.group(4)]
                entries.append(cur)
            elif cur is not None and line.startswith("\t"):
                cur[2] += " " + line.strip()
            else:
                cur = None
        total = 0.0
        for ms, kind, sql in entries:
            key = re.sub(r"\s+", " ", sql)[:150]
            stats[key][1] += ms
            if kind in ("execute", "statement"):
                stats[key][0] += 1
            phase[kind][0] += 1
            phase[kind][1] += ms
            total += ms
        print(f"  statements logged: executes {phase['execute'][0] / n:.2f}/signal, simple {phase['statement'][0] / n:.2f}/signal; server time {total * 1000 / n:.0f} us/signal (" + ", ".join(f"{k} {v[1] * 1000 / n:.0f}" for k, v in phase.items()) + ")")
        for key, (c, ms) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
            print(f"  {c / n:6.3f}/sig {ms * 1000 / n:7.1f} us/sig {ms * 1000 / max(c, 1):8.1f} us/each  {key}")


main()
