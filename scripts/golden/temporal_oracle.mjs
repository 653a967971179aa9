// Independent oracle for nudge's timing golden file: TC39 Temporal (the @js-temporal/polyfill
// reference implementation, pinned in package.json / package-lock.json).
//
// Reads JSON Lines on stdin, one question per line, and writes one JSON line per question:
//   {"op":"add", "start_ms":N, "tz":"Europe/Prague", "dur":{years,months,weeks,days,milliseconds}}
//       -> {"ms":N}   ZonedDateTime.add with the defaults (overflow 'constrain', compatible)
//   {"op":"plain_add", "local":"2026-01-31T10:00:00", "dur":{years,months,weeks,days}}
//       -> {"local":"..."}   PlainDateTime.add (wall-clock calendar arithmetic, month-end clamp)
//   {"op":"wall", "local":"2026-03-29T02:30:00", "tz":"Europe/Prague"}
//       -> {"ms":N}   the instant of a wall clock, disambiguation 'compatible'
//   {"op":"local", "ms":N, "tz":"Europe/Prague"}
//       -> {"local":"..."}   the wall clock at an instant
import { Temporal } from '@js-temporal/polyfill';
import { createInterface } from 'node:readline';

function answer(q) {
  switch (q.op) {
    case 'add': {
      const start = Temporal.Instant.fromEpochMilliseconds(q.start_ms).toZonedDateTimeISO(q.tz);
      const end = start.add(q.dur);
      return { ms: end.epochMilliseconds };
    }
    case 'plain_add': {
      const end = Temporal.PlainDateTime.from(q.local).add(q.dur);
      return { local: end.toString({ smallestUnit: 'millisecond' }) };
    }
    case 'wall': {
      const zdt = Temporal.PlainDateTime.from(q.local).toZonedDateTime(q.tz, { disambiguation: 'compatible' });
      return { ms: zdt.epochMilliseconds };
    }
    case 'local': {
      const zdt = Temporal.Instant.fromEpochMilliseconds(q.ms).toZonedDateTimeISO(q.tz);
      return { local: zdt.toPlainDateTime().toString({ smallestUnit: 'millisecond' }) };
    }
    default:
      throw new Error(`unknown op ${q.op}`);
  }
}

const out = [];
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (line.trim() === '') continue;
  out.push(JSON.stringify(answer(JSON.parse(line))));
}
process.stdout.write(out.join('\n') + '\n');
