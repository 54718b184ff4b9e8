//! JavaScript's `Date.parse`, for the text other tools put where a timestamp belongs.
//!
//! agent-qa judges a lock stale by `now − Date.parse(timestamp)` (agent-qa-memory §6), and
//! `Date.parse` reads more than ISO 8601 with a zone: a date alone (`2026-04-10`, midnight UTC),
//! a date and time without a zone (local time), and the forms JavaScript itself prints
//! (`toUTCString`'s `Fri, 10 Apr 2026 12:00:00 GMT`, `toString`'s `Fri Apr 10 2026 12:00:00
//! GMT+0200 (…)`) or RFC 2822 mail dates. A lock another tool wrote in one of those forms is
//! aged here as agent-qa ages it. What `Date.parse` gives `NaN` for is `None`.
//!
//! Two grammars, as in V8: first the ECMAScript Date Time String Format (ECMA-262 §21.4.1.32),
//! exactly; otherwise the legacy grammar of those printed and mail forms (weekday optional and
//! unchecked, month by its English name, a zone name, `GMT±hhmm` or none). V8's legacy parser
//! takes still more free-form text (`2026/04/10`, `April 10, 2026`); those are `None` here,
//! which for a lock means "not stale by age", agent-qa's reading of any unparsable stamp.

use jiff::civil::{Date, DateTime, Time};
use jiff::tz::{Offset, TimeZone};
use jiff::{Timestamp, Zoned};

/// `Date.parse(text)` as a timestamp; `None` where JavaScript gives `NaN` (or a date outside
/// what a timestamp holds).
pub fn parse(text: &str) -> Option<Timestamp> {
    parse_in(text, &TimeZone::system())
}

/// [`parse`] with `local` as the local time zone.
pub fn parse_in(text: &str, local: &TimeZone) -> Option<Timestamp> {
    iso(text, local).or_else(|| legacy(text, local))
}

/// Where a parsed date and time sits on the time line.
enum Zone {
    Utc,
    Offset(i32),
    /// No zone written: the machine's local time, as JavaScript reads it.
    Local,
}

fn place(dt: DateTime, zone: Zone, local: &TimeZone) -> Option<Timestamp> {
    let tz = match zone {
        Zone::Utc => TimeZone::UTC,
        Zone::Offset(seconds) => TimeZone::fixed(Offset::from_seconds(seconds).ok()?),
        Zone::Local => local.clone(),
    };
    dt.to_zoned(tz).ok().map(|z: Zoned| z.timestamp())
}

/// The ECMAScript format: `YYYY[-MM[-DD]]` or `±YYYYYY…`, then optionally `THH:mm[:ss[.s…]]`
/// and `Z` or `±HH:mm`. A date alone is UTC; a date and time without a zone is local time.
fn iso(text: &str, local: &TimeZone) -> Option<Timestamp> {
    let mut s = Scanner(text.as_bytes());
    let year = match s.peek()? {
        b'+' | b'-' => {
            let negative = s.next()? == b'-';
            let y = s.digits(6)?;
            if negative && y == 0 {
                return None; // "-000000" is refused by the standard
            }
            if negative { -y } else { y }
        }
        _ => s.digits(4)?,
    };
    let (mut month, mut day) = (1, 1);
    if s.eat(b'-') {
        month = s.digits(2)?;
        if s.eat(b'-') {
            day = s.digits(2)?;
        }
    }
    let date = day_of(year, month, day)?;
    if s.is_empty() {
        return place(date.to_datetime(Time::midnight()), Zone::Utc, local);
    }
    // V8 also takes a space or a lower-case `t` here, and `z` for `Z`.
    if !(s.eat(b'T') || s.eat(b't') || s.eat(b' ')) {
        return None;
    }
    let hour = s.digits(2)?;
    s.expect(b':')?;
    let minute = s.digits(2)?;
    let (mut second, mut nanos) = (0, 0);
    if s.eat(b':') {
        second = s.digits(2)?;
        if s.eat(b'.') {
            nanos = s.fraction()?;
        }
    }
    let zone = match s.peek() {
        None => Zone::Local,
        Some(b'Z' | b'z') => {
            s.next();
            Zone::Utc
        }
        Some(b'+' | b'-') => {
            let sign = if s.next()? == b'-' { -1 } else { 1 };
            let h = s.digits(2)?;
            s.eat(b':'); // `+0200` is read as `+02:00`
            let m = s.digits(2)?;
            if h > 23 || m > 59 {
                return None;
            }
            Zone::Offset(sign * (h * 3600 + m * 60) as i32)
        }
        Some(_) => return None,
    };
    if !s.is_empty() {
        return None;
    }
    let dt = clock(date, hour, minute, second, nanos)?;
    place(dt, zone, local)
}

/// Day `day` of a month, as V8 reads it: any day from 1 to 31 is taken, and one past the
/// month's end rolls over into the next (`2026-02-30` is 2 March).
fn day_of(year: i64, month: i64, day: i64) -> Option<Date> {
    if !(1..=31).contains(&day) {
        return None;
    }
    let first = Date::new(i16::try_from(year).ok()?, i8::try_from(month).ok()?, 1).ok()?;
    first.checked_add(jiff::Span::new().days(day - 1)).ok()
}

/// A time of day on `date`; `24:00:00` (and only that at hour 24) is the next midnight.
fn clock(date: Date, hour: i64, minute: i64, second: i64, nanos: i32) -> Option<DateTime> {
    if hour == 24 && minute == 0 && second == 0 && nanos == 0 {
        return date.tomorrow().ok().map(|d| d.to_datetime(Time::midnight()));
    }
    let time = Time::new(
        i8::try_from(hour).ok()?,
        i8::try_from(minute).ok()?,
        i8::try_from(second).ok()?,
        nanos,
    )
    .ok()?;
    Some(date.to_datetime(time))
}

const MONTHS: [&str; 12] =
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// `toUTCString`, `toString` and RFC 2822 forms: words separated by spaces (a comma after the
/// weekday and a parenthesised zone name are allowed), one month name, day and year as numbers
/// in either order of `toString` (`Apr 10 2026`) or RFC 2822 (`10 Apr 2026`), `HH:mm[:ss]`, and
/// a zone (`GMT`, `UTC`, `UT`, `Z`, the US zone names, `±hhmm`, `GMT±hhmm`) or none (local).
fn legacy(text: &str, local: &TimeZone) -> Option<Timestamp> {
    // A trailing "(Central European Standard Time)" is a comment.
    let text = match text.find('(') {
        Some(i) if text.ends_with(')') => text[..i].trim_end(),
        _ => text,
    };
    let mut words = text.split([' ', ',']).filter(|w| !w.is_empty()).peekable();
    if let Some(w) = words.peek()
        && WEEKDAYS.iter().any(|d| w.len() >= 3 && w.to_ascii_lowercase().starts_with(d))
    {
        words.next();
    }
    let (mut month, mut numbers, mut time, mut zone) = (None, Vec::new(), None, None);
    for word in words {
        let lower = word.to_ascii_lowercase();
        if let Some(m) = MONTHS.iter().position(|m| lower.len() >= 3 && lower.starts_with(m)) {
            if month.replace(m as i8 + 1).is_some() {
                return None;
            }
        } else if word.contains(':') && time.is_none() {
            time = Some(hh_mm_ss(word)?);
        } else if let Some(z) = zone_of(&lower) {
            if zone.replace(z).is_some() || time.is_none() {
                return None;
            }
        } else if word.bytes().all(|b| b.is_ascii_digit()) && word.len() <= 4 {
            numbers.push(word.parse::<i32>().ok()?);
        } else {
            return None;
        }
    }
    let (day, year) = match numbers.as_slice() {
        [day, year] if *day <= 31 => (*day, *year),
        _ => return None,
    };
    // Two-digit years, as JavaScript reads them: 00–49 are 2000s, 50–99 1900s.
    let year = match year {
        0..=49 if year < 100 => year + 2000,
        50..=99 => year + 1900,
        y => y,
    };
    let date = day_of(i64::from(year), i64::from(month?), i64::from(day))?;
    let (h, m, s) = time.unwrap_or((0, 0, 0));
    let dt = clock(date, h, m, s, 0)?;
    place(dt, zone.unwrap_or(Zone::Local), local)
}

fn hh_mm_ss(word: &str) -> Option<(i64, i64, i64)> {
    let mut parts = word.split(':');
    let mut field = |required: bool| match parts.next() {
        Some(p) if (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse::<i64>().ok()
        }
        None if !required => Some(0),
        _ => None,
    };
    let (h, m, s) = (field(true)?, field(true)?, field(false)?);
    parts.next().is_none().then_some((h, m, s))
}

/// A zone word: a name JavaScript knows, `±hhmm`, or `GMT±hhmm` / `UTC±hhmm`.
fn zone_of(lower: &str) -> Option<Zone> {
    let hours = match lower {
        "gmt" | "utc" | "ut" | "z" => return Some(Zone::Utc),
        "est" => -5,
        "edt" => -4,
        "cst" => -6,
        "cdt" => -5,
        "mst" => -7,
        "mdt" => -6,
        "pst" => -8,
        "pdt" => -7,
        _ => {
            let numeric =
                lower.strip_prefix("gmt").or_else(|| lower.strip_prefix("utc")).unwrap_or(lower);
            let (sign, digits) = match numeric.as_bytes().first()? {
                b'+' => (1, &numeric[1..]),
                b'-' => (-1, &numeric[1..]),
                _ => return None,
            };
            if !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            // `+0200` is hours and minutes, `+2` or `+02` hours alone.
            let (h, m) = match digits.len() {
                1 | 2 => (digits.parse::<i32>().ok()?, 0),
                4 => (digits[..2].parse::<i32>().ok()?, digits[2..].parse::<i32>().ok()?),
                _ => return None,
            };
            if m > 59 {
                return None;
            }
            return Some(Zone::Offset(sign * (h * 3600 + m * 60)));
        }
    };
    Some(Zone::Offset(hours * 3600))
}

/// A cursor over ASCII text.
struct Scanner<'a>(&'a [u8]);

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.0.first().copied()
    }

    fn next(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.0 = &self.0[1..];
        }
        hit
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    /// Exactly `n` ASCII digits.
    fn digits(&mut self, n: usize) -> Option<i64> {
        let (head, rest) = self.0.split_at_checked(n)?;
        if !head.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.0 = rest;
        Some(head.iter().fold(0, |acc, &d| acc * 10 + i64::from(d - b'0')))
    }

    /// One or more fraction digits, as nanoseconds of whole milliseconds: JavaScript keeps
    /// milliseconds and drops the digits after the third.
    fn fraction(&mut self) -> Option<i32> {
        let len = self.0.iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 0 {
            return None;
        }
        let (digits, rest) = self.0.split_at(len);
        self.0 = rest;
        let millis = digits.iter().take(3).fold(0i32, |acc, &d| acc * 10 + i32::from(d - b'0'));
        Some(millis * 10i32.pow(3 - len.min(3) as u32) * 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Option<String> {
        parse(text).map(crate::time::iso_millis)
    }

    #[test]
    fn the_ecmascript_format_is_read_exactly() {
        let cases = [
            ("2026-04-10T12:00:00.000Z", "2026-04-10T12:00:00.000Z"),
            ("2026-04-10T12:00:00Z", "2026-04-10T12:00:00.000Z"),
            ("2026-04-10T12:00Z", "2026-04-10T12:00:00.000Z"),
            ("2026-04-10T12:00:00.1234Z", "2026-04-10T12:00:00.123Z"),
            ("2026-04-10T14:30:00+02:30", "2026-04-10T12:00:00.000Z"),
            ("2026-04-10T24:00:00Z", "2026-04-11T00:00:00.000Z"),
            ("2026-02-30T12:00Z", "2026-03-02T12:00:00.000Z"),
            ("2026-04-10 12:00:00z", "2026-04-10T12:00:00.000Z"),
            ("2026-04-10T14:00:00.000+0200", "2026-04-10T12:00:00.000Z"),
            ("2026-04-10", "2026-04-10T00:00:00.000Z"),
            ("2026-04", "2026-04-01T00:00:00.000Z"),
            ("2026", "2026-01-01T00:00:00.000Z"),
            ("+002026-04-10T12:00:00Z", "2026-04-10T12:00:00.000Z"),
        ];
        for (text, want) in cases {
            assert_eq!(utc(text).as_deref(), Some(want), "{text:?}");
        }
    }

    #[test]
    fn what_javascript_refuses_is_none() {
        for text in [
            "",
            "yesterday",
            "2026-13-01",
            "2026-02-32",
            " 2026-04-10T12:00:00Z",
            "2026-04-10T25:00Z",
            "2026-04-10T24:00:01Z",
            "2026-04-10T12:60Z",
            "2026-04-10T12:00:00.Z",
            "2026-04-10T12Z",
            "2026-04-10T12:00:00+0200x",
            "Fri, 10 Foo 2026 12:00:00 GMT",
        ] {
            assert_eq!(utc(text), None, "{text:?}");
        }
    }

    /// V8's legacy parser reads these (`-000000-01-01` as 2001, a repeated zone once); they are
    /// `None` here, which a lock reads as "not stale by age", never as a wrong time.
    #[test]
    fn free_forms_only_v8s_legacy_parser_reads_are_none() {
        for text in ["-000000-01-01", "10 Apr 2026 12:00:00 GMT GMT"] {
            assert_eq!(utc(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_forms_javascript_prints_are_read() {
        let cases = [
            ("Fri, 10 Apr 2026 12:00:00 GMT", "2026-04-10T12:00:00.000Z"),
            (
                "Fri Apr 10 2026 14:00:00 GMT+0200 (Central European Summer Time)",
                "2026-04-10T12:00:00.000Z",
            ),
            ("10 Apr 2026 07:00:00 -0500", "2026-04-10T12:00:00.000Z"),
            ("Friday, 10 April 2026 05:00 PDT", "2026-04-10T12:00:00.000Z"),
            ("Fri, 10 Apr 26 12:00:00 UT", "2026-04-10T12:00:00.000Z"),
        ];
        for (text, want) in cases {
            assert_eq!(utc(text).as_deref(), Some(want), "{text:?}");
        }
    }

    /// Every answer agrees with node's `Date.parse` (`tests/fixtures/js-date-parse.json`, from
    /// `scripts/js_date_vectors.mjs` in a UTC+3 zone): where this gives a time, node gave the
    /// same one, and the forms JavaScript prints are all read.
    #[test]
    fn answers_agree_with_node() {
        #[derive(serde::Deserialize)]
        struct Vector {
            text: String,
            ms: Option<i64>,
        }
        #[derive(serde::Deserialize)]
        struct Fixture {
            vectors: Vec<Vector>,
        }
        let fixture: Fixture =
            serde_json::from_str(include_str!("../tests/fixtures/js-date-parse.json")).unwrap();
        let local = TimeZone::fixed(Offset::from_hours(3).unwrap());
        let (mut read, mut node_read) = (0, 0);
        for v in &fixture.vectors {
            let ours = parse_in(&v.text, &local).map(|t| t.as_millisecond());
            if let Some(ms) = ours {
                assert_eq!(Some(ms), v.ms, "{:?}: node gave {:?}", v.text, v.ms);
                read += 1;
            }
            node_read += usize::from(v.ms.is_some());
        }
        for printed in &fixture.vectors[..6] {
            assert!(parse_in(&printed.text, &local).is_some(), "{:?}", printed.text);
        }
        assert!(read * 10 >= node_read * 8, "read {read} of the {node_read} node reads");
    }

    #[test]
    fn a_stamp_without_a_zone_is_local_time() {
        let local = parse("2026-04-10T12:00:00").unwrap();
        let want = DateTime::constant(2026, 4, 10, 12, 0, 0, 0)
            .to_zoned(TimeZone::system())
            .unwrap()
            .timestamp();
        assert_eq!(local, want);
        assert_eq!(parse("Apr 10 2026 12:00:00"), Some(want));
    }
}
