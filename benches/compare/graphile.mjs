// graphile-worker's figures for scripts/compare-graphile.sh, on one fresh database:
//   1. `addJobs` of --n no-op jobs in batches of --batch from --callers concurrent callers
//      (jobs/s, the figure next to nudge's BatchEnroll);
//   2. then a worker in graphile-worker's documented best configuration starts with all of
//      them due, and completes them (jobs/s until the jobs table is empty, the figure next to
//      nudge's due steps).
// Prints one `graphile:` line per figure and a last `RESULT` line the script reads.
//
//   NO_LOG_SUCCESS=1 node graphile.mjs --database-url postgres://postgres@127.0.0.1:5432/gw --n 100000 --callers 4
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
        specs.push({ identifier: "noop", payload: { i }, runAt });
      }
      const jobs = await utils.addJobs(specs);
      if (jobs.length !== specs.length) throw new Error(`addJobs returned ${jobs.length} of ${specs.length}`);
    }
  }),
);
const enqueueSecs = (performance.now() - started) / 1000;
const enqueueRate = n / enqueueSecs;
console.log(
  `graphile: addJobs ${n} jobs in ${enqueueSecs.toFixed(2)} s = ${enqueueRate.toFixed(0)} jobs/s (${callers} callers, batches of ${batch})`,
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
console.log(`RESULT graphile callers=${callers} enqueue=${enqueueRate.toFixed(0)} due=${dueRate.toFixed(0)}`);
