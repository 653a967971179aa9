// graphile-worker's figures for scripts/compare-graphile.sh, on one fresh database:
//   1. `addJobs` of --n no-op jobs in batches of --batch from --callers concurrent callers
//      (jobs/s, the figure next to nudge's BatchEnroll);
//   2. then a worker in graphile-worker's documented best configuration starts with all of
//      them due, and completes them (jobs/s until the jobs table is empty, the figure next to
//      nudge's due steps).
//   With `--job-keys`, every job has a `jobKey` (`enrollment-<i>`): the uniqueness nudge keeps
//   for an enrollment key, so this is the fair peer of BatchEnroll (docs/benchmarks.md).
// Prints one `graphile:` line per figure and a last `RESULT` line the script reads.
//
// `--mode wake-latency --rate R --secs S --poll-interval P`: the worker runs while, every 10 ms,
// `addJobs` adds R/100 jobs due two seconds later, for S seconds; a job's lateness is when its
// task starts minus its `run_at` (nudge-bench --mode wake-latency measures the same). Prints
// p50/p90/p99/max and a `RESULT` line.
//
//   NO_LOG_SUCCESS=1 node graphile.mjs --database-url postgres://postgres@127.0.0.1:5432/gw --n 100000 --callers 4
//   NO_LOG_SUCCESS=1 node graphile.mjs --database-url … --mode wake-latency --rate 10000 --secs 10 --poll-interval 20
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { performance } from "node:perf_hooks";

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const connectionString = arg("--database-url");
if (!connectionString) {
  console.error("graphile.mjs: give --database-url postgres://… (an empty database)");
  process.exit(2);
}
const n = Number(arg("--n", "100000"));
const callers = Number(arg("--callers", "1"));
const batch = Number(arg("--batch", "1000"));
const jobKeys = process.argv.includes("--job-keys");
const mode = arg("--mode", "throughput");

// Warnings and errors only: the per-job info lines would measure the console.
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") console.error(`graphile ${level}: ${message}`);
});

// graphile-worker's own "optimal conditions" (docs, Performance): 24 concurrent jobs, a pool of
// 25, a local queue of 500, completions and failures batched.
const preset = {
  worker: {
    connectionString,
    concurrentJobs: 24,
    maxPoolSize: 25,
    localQueue: { size: 500 },
    completeJobBatchDelay: 0,
    failJobBatchDelay: 0,
    logger,
  },
};

const utils = await makeWorkerUtils({ preset });
await utils.migrate();

if (mode === "wake-latency") {
  await wakeLatency();
  process.exit(0);
} else if (mode !== "throughput") {
  console.error(`graphile.mjs: unknown --mode ${mode}: throughput or wake-latency`);
  process.exit(2);
}

// 1. Enqueue: calls of `batch` jobs, `callers` of them in flight, each taking the next batch.
const runAt = new Date(Date.now() - 60_000);
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: Math.max(1, callers) }, async () => {
    while (next < n) {
      const from = next;
      next = Math.min(n, next + batch);
      const specs = [];
      for (let i = from; i < next; i++) {
        specs.push(
          jobKeys ? { identifier: "noop", payload: { i }, runAt, jobKey: `enrollment-${i}` } : { identifier: "noop", payload: { i }, runAt },
        );
      }
      const jobs = await utils.addJobs(specs);
      if (jobs.length !== specs.length) throw new Error(`addJobs returned ${jobs.length} of ${specs.length}`);
    }
  }),
);
const enqueueSecs = (performance.now() - started) / 1000;
const enqueueRate = n / enqueueSecs;
console.log(
  `graphile: addJobs ${n} jobs in ${enqueueSecs.toFixed(2)} s = ${enqueueRate.toFixed(0)} jobs/s (${callers} callers, batches of ${batch}${jobKeys ? ", a jobKey on every job" : ""})`,
);

// 2. All of them are due: start the worker and time it until the table is empty (a job is
// deleted when its completion is committed).
const remaining = async () => {
  const { rows } = await utils.withPgClient((c) =>
    c.query("select count(*)::int as left from graphile_worker._private_jobs"),
  );
  return rows[0].left;
};
let ran = 0;
let allRan;
const allRanPromise = new Promise((resolve) => (allRan = resolve));
const workStarted = performance.now();
const runner = await run({
  preset,
  noHandleSignals: true,
  taskList: {
    noop: async () => {
      ran += 1;
      if (ran === n) allRan();
    },
  },
});
await allRanPromise;
for (;;) {
  const left = await remaining();
  if (left === 0) break;
  await new Promise((r) => setTimeout(r, 10));
}
const workSecs = (performance.now() - workStarted) / 1000;
const dueRate = n / workSecs;
console.log(
  `graphile: worker completed ${n} due no-op jobs in ${workSecs.toFixed(2)} s = ${dueRate.toFixed(0)} jobs/s (concurrency 24, local queue 500, batched completion)`,
);
await runner.stop();
await utils.release();
if (ran !== n) throw new Error(`${ran} of ${n} jobs ran`);
console.log(
  `RESULT graphile callers=${callers} keys=${jobKeys ? 1 : 0} enqueue=${enqueueRate.toFixed(0)} due=${dueRate.toFixed(0)}`,
);

async function wakeLatency() {
  const rate = Number(arg("--rate", "1000"));
  const secs = Number(arg("--secs", "10"));
  const pollInterval = Number(arg("--poll-interval", "2000"));
  const perTick = Math.max(1, Math.floor(rate / 100));
  const late = [];
  let expected = 0;
  let allRan;
  const allRanPromise = new Promise((resolve) => (allRan = resolve));
  let done = false;
  const runner = await run({
    preset: { worker: { ...preset.worker, pollInterval, localQueue: { size: 500, refetchDelay: { durationMs: pollInterval } } } },
    noHandleSignals: true,
    taskList: {
      noop: async (_payload, helpers) => {
        late.push(Date.now() - new Date(helpers.job.run_at).getTime());
        if (done && late.length === expected) allRan();
      },
    },
  });
  // Every 10 ms (as nudge-bench does), perTick jobs due two seconds after they are added; each
  // tick's addJobs runs on its own so a slow one does not hold back the next.
  const calls = [];
  const started = performance.now();
  let i = 0;
  while (performance.now() - started < secs * 1000) {
    const tickStart = performance.now();
    const runAt = new Date(Date.now() + 2000);
    const specs = [];
    for (let k = 0; k < perTick; k++) specs.push({ identifier: "noop", payload: { i: i++ }, runAt });
    calls.push(utils.addJobs(specs));
    expected += perTick;
    const wait = 10 - (performance.now() - tickStart);
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
  }
  await Promise.all(calls);
  const elapsed = (performance.now() - started) / 1000;
  done = true;
  if (late.length < expected) {
    const timeout = setTimeout(() => allRan(), 60_000);
    await allRanPromise;
    clearTimeout(timeout);
  }
  await runner.stop();
  await utils.release();
  if (late.length !== expected) throw new Error(`${late.length} of ${expected} jobs ran`);
  late.sort((a, b) => a - b);
  const pct = (p) => late[Math.round((late.length - 1) * p)];
  console.log(
    `graphile: wake latency of ${late.length} jobs added at ${(expected / elapsed).toFixed(0)}/s for ${elapsed.toFixed(1)} s (poll interval ${pollInterval} ms, local queue 500): p50 ${pct(0.5)} ms, p90 ${pct(0.9)} ms, p99 ${pct(0.99)} ms, max ${late[late.length - 1]} ms (min ${late[0]} ms)`,
  );
  console.log(`RESULT graphile-wake poll=${pollInterval} p99=${pct(0.99)} max=${late[late.length - 1]}`);
}
