//! Timestamps (PROFILE §1): exactly `YYYY-MM-DDTHH:MM:SS.sssZ`, UTC, millisecond precision.
//!
//! Pure: the core never reads the clock; authors pass the time in (`Timestamp::now`, behind
//! the `clock` feature, reads it for them).

use std::fmt;

use crate::error::{schema, Rejection};

/// A validated timestamp, kept as milliseconds since 1970-01-01T00:00:00.000Z.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The last representable timestamp, 9999-12-31T23:59:59.999Z.
    pub const MAX: Timestamp = Timestamp(253_402_300_799_999);

    /// The timestamp `millis` milliseconds after the epoch (years 1970..=9999).
    pub fn from_millis(millis: u64) -> Result<Self, Rejection> {
        if millis > Timestamp::MAX.0 {
            return Err(schema("timestamp after year 9999"));
        }
        Ok(Timestamp(millis))
    }

    /// Milliseconds since the epoch.
    pub fn millis(self) -> u64 {
        self.0
    }

    /// Parses the exact form `YYYY-MM-DDTHH:MM:SS.sssZ`.
    pub fn parse(s: &str) -> Result<Self, Rejection> {
        let b = s.as_bytes();
        let shape_ok = b.len() == 24
            && b.iter().enumerate().all(|(i, &c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'.',
                23 => c == b'Z',
                _ => c.is_ascii_digit(),
            });
        if !shape_ok {
            return Err(schema(format!(
                "timestamp {s:?} is not YYYY-MM-DDTHH:MM:SS.sssZ"
            )));
        }
        let num = |from: usize, to: usize| -> u64 {
            b.get(from..to)
                .unwrap_or_default()
                .iter()
                .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'))
        };
        let (year, month, day) = (num(0, 4), num(5, 7), num(8, 10));
        let (hour, minute, second, milli) = (num(11, 13), num(14, 16), num(17, 19), num(20, 23));
        let valid = year >= 1970
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month)
            && hour < 24
            && minute < 60
            && second < 60;
        if !valid {
            return Err(schema(format!("timestamp {s:?} is not a valid UTC time")));
        }
        let days = days_from_civil(year, month, day);
        Ok(Timestamp(
            ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milli,
        ))
    }
}

fn is_leap(year: u64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given date (year ≥ 1970), by Howard Hinnant's algorithm.
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01.
pub fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Length of a timestamp's text, `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub(crate) const TIMESTAMP_LEN: usize = 24;

impl Timestamp {
    /// The text `YYYY-MM-DDTHH:MM:SS.sssZ`, written into `buf` (no allocation).
    pub(crate) fn text_in(self, buf: &mut [u8; TIMESTAMP_LEN]) -> &str {
        let ms = self.0;
        let (year, month, day) = civil_from_days(ms / 86_400_000);
        let in_day = ms % 86_400_000;
        let fields: [(u64, usize, usize); 7] = [
            (year, 0, 4),
            (month, 5, 2),
            (day, 8, 2),
            (in_day / 3_600_000, 11, 2),
            (in_day / 60_000 % 60, 14, 2),
            (in_day / 1000 % 60, 17, 2),
            (in_day % 1000, 20, 3),
        ];
        *buf = *b"0000-00-00T00:00:00.000Z";
        for (mut value, at, width) in fields {
            for digit in buf.iter_mut().skip(at).take(width).rev() {
                // `value % 10` is a single digit.
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
        }
        // Digits and the punctuation above are ASCII.
        std::str::from_utf8(buf).unwrap_or_default()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text_in(&mut [0; TIMESTAMP_LEN]))
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
