// Writes crates/curator-core/tests/fixtures/js-date-parse.json: what node's Date.parse gives
// for lock timestamps in many spellings (ISO and its variants, the forms JavaScript prints,
// RFC 2822 mail dates, and near misses). Run with a fixed zone, so "local time" is defined:
//   TZ=Etc/GMT-3 node scripts/js_date_vectors.mjs > crates/curator-core/tests/fixtures/js-date-parse.json
const base = new Date(Date.UTC(2026, 3, 10, 12, 34, 56, 789));
const texts = new Set([
  base.toISOString(), base.toUTCString(), base.toString(), base.toJSON(),
  new Date(Date.UTC(2026, 0, 1)).toString(), new Date(Date.UTC(1999, 11, 31, 23, 59, 59)).toUTCString(),
]);
const dates = ["2026-04-10", "2026-02-28", "2026-02-29", "2026-02-30", "2026-02-31", "2026-02-32",
  "2024-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-04-00", "2026-4-10", "2026-04",
  "2026", "+002026-04-10", "-000001-01-01", "-000000-01-01", "99999-01-01", "20260410"];
const times = ["", "T12:00", "T12:00:00", "T12:00:00.5", "T12:00:00.123", "T12:00:00.123456789",
  "T24:00:00", "T24:00:01", "T23:59:59", "T25:00", "T12:60", "T12:00:60", "T1:00", "T12",
  " 12:00:00", "t12:00:00", "T12:00:00.", "T12:00:00,5"];
const zones = ["", "Z", "z", "+02:00", "-05:30", "+0200", "+24:00", "+02", " Z", "GMT", " +02:00", "+02:0"];
for (const d of dates) for (const t of times) for (const z of zones) texts.add(d + t + z);
const days = ["Fri, ", "Fri ", "Friday, ", "Sat, ", ""];
const legacy = ["10 Apr 2026 12:00:00", "10 Apr 26 12:00:00", "10 April 2026 12:00", "Apr 10 2026 12:00:00",
  "Apr 10, 2026 12:00:00", "31 Feb 2026 12:00:00", "32 Apr 2026 12:00:00", "10 Foo 2026 12:00:00",
  "10 Apr 2026", "Apr 10 2026", "10 Apr 1950 12:00:00", "10 Apr 49 12:00:00", "10 Apr 50 12:00:00"];
const lzones = ["", " GMT", " UTC", " UT", " Z", " EST", " EDT", " CST", " PDT", " +0000", " -0500",
  " GMT+0200", " GMT+2", " GMT-0530", " GMT+0200 (Central European Summer Time)", " (comment)", " XYZ"];
for (const d of days) for (const l of legacy) for (const z of lzones) texts.add(d + l + z);
for (const t of ["", " ", "yesterday", "now", "0", "1712750000000", "null", "2026-04-10T12:00:00Z ",
  " 2026-04-10T12:00:00Z", "2026-04-10 ", "12:00 10 Apr 2026 GMT"]) texts.add(t);
const out = [...texts].map((text) => {
  const v = Date.parse(text);
  return { text, ms: Number.isNaN(v) ? null : v };
});
console.log(JSON.stringify({ node: process.version, tz: process.env.TZ, vectors: out }, null, 0)
  .replace(/\},\{/g, "},\n{"));
