#!/usr/bin/env python3
"""Where a benchmark's CPU goes, phase by phase: runs a command (a `nudge-bench` run) and, at
each line it prints, reports what was spent since the previous line: CPU seconds of every
PostgreSQL process on the machine, CPU seconds of the command's own process tree, how busy the
whole machine was, and the WAL PostgreSQL wrote (with the LSN, for `pg_waldump --stats`).

    scripts/cpu-per-phase.py --per 100000 -- \\
        nudge-bench --database-url postgres://postgres@127.0.0.1:5432/prof --n 100000 --enroll-batch 1000

`--per N` adds the figures per item (µs of each side's CPU, WAL bytes) for phases of N items.
`nudge-bench` prints a line when its setup ends, one after BatchEnroll and one after the drain,
so each line of output is one phase. Linux only (reads /proc); PostgreSQL on this machine, read
with `psql` as user postgres on 127.0.0.1 (PGHOST and friends are honoured by psql).
"""
import os
import subprocess
import sys
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


def processes():
    """pid -> (parent pid, CPU ticks so far, command name) for every process."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(pid)] = (int(fields[1]), int(fields[11]) + int(fields[12]), name)
    return found


def machine():
    """(idle ticks, all ticks) of the whole machine."""
    with open("/proc/stat") as f:
        ticks = list(map(int, f.readline().split()[1:]))
    return ticks[3] + ticks[4], sum(ticks)


def wal():
    """(bytes of WAL written so far, the current LSN)."""
    out = subprocess.run(
        ["psql", "-qtAX", "-h", os.environ.get("PGHOST", "127.0.0.1"), "-U", "postgres", "-d", "postgres",
         "-c", "select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, pg_current_wal_lsn()"],
        capture_output=True, text=True,
    ).stdout.strip()
    if "|" not in out:
        return 0, "?"
    size, lsn = out.split("|")
    return int(size), lsn


def main():
    args = sys.argv[1:]
    per = None
    if args[:1] == ["--per"]:
        per = float(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit(__doc__)

    # A process's CPU is only readable while it lives, so sample often and keep the last
    # reading of each (PostgreSQL's backends live as long as their connections).
    seen = {}
    lock = threading.Lock()

    def sample():
        while True:
            now = processes()
            with lock:
                seen.update(now)
            time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)

    def totals():
        with lock:
            pg = sum(t for (_, t, name) in seen.values() if name.startswith("postgres"))
            tree, grew = {child.pid}, True
            while grew:
                grew = False
                for pid, (parent, _, _) in seen.items():
                    if parent in tree and pid not in tree:
                        tree.add(pid)
                        grew = True
            own = sum(seen[p][1] for p in tree if p in seen and not seen[p][2].startswith("postgres"))
        return pg, own

    time.sleep(0.1)
    last_at, (last_pg, last_own), (last_idle, last_all), (last_wal, _) = time.time(), totals(), machine(), wal()
    for line in child.stdout:
        at, (pg, own), (idle, all_ticks), (written, lsn) = time.time(), totals(), machine(), wal()
        pg_s, own_s = (pg - last_pg) / TICK, (own - last_own) / TICK
        busy = 100 * (1 - (idle - last_idle) / max(1, all_ticks - last_all))
        text = f"[{at - last_at:6.2f} s  postgres {pg_s:6.2f} s  bench {own_s:6.2f} s  busy {busy:3.0f} %  wal {(written - last_wal) / 1e6:7.1f} MB"
        if per:
            text += f" | per item: postgres {pg_s / per * 1e6:.1f} µs, bench {own_s / per * 1e6:.1f} µs, wal {(written - last_wal) / per:.0f} B"
        print(f"{text}; lsn {lsn}] {line}", end="", flush=True)
        last_at, last_pg, last_own, last_idle, last_all, last_wal = at, pg, own, idle, all_ticks, written
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
