//! Dates as Elasticsearch reads them: ISO 8601 text (`strict_date_optional_time`) and epoch
//! milliseconds or seconds, kept as milliseconds since 1970-01-01T00:00:00Z.

use std::fmt;

/// One of the formats a date field accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateForm {
    /// `yyyy[-MM[-dd]][Thh[:mm[:ss[.fraction]]]][Z|±hh[:]mm]`: `strict_date_optional_time`
    /// (and `date_optional_time`, which apcache reads the same, strictly).
    OptionalTime,
    /// `yyyy-MM-dd` only: `strict_date`, `date`, `yyyy-MM-dd`.
    Date,
    /// Milliseconds since the epoch, as a number or a string of digits.
    EpochMillis,
    /// Seconds since the epoch.
    EpochSecond,
}

impl DateForm {
    fn name(self) -> &'static str {
        match self {
            DateForm::OptionalTime => "strict_date_optional_time",
            DateForm::Date => "strict_date",
            DateForm::EpochMillis => "epoch_millis",
            DateForm::EpochSecond => "epoch_second",
        }
    }
}

/// The formats a date field accepts, tried in order (`a||b`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateFormat(Vec<DateForm>);

impl Default for DateFormat {
    /// Elasticsearch's default: `strict_date_optional_time||epoch_millis`.
    fn default() -> DateFormat {
        DateFormat(vec![DateForm::OptionalTime, DateForm::EpochMillis])
    }
}

impl fmt::Display for DateFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|form| form.name()).collect();
        f.write_str(&names.join("||"))
    }
}

impl DateFormat {
    /// The formats of a mapping's `format` (`"strict_date_optional_time||epoch_millis"`).
    pub fn parse(text: &str) -> Result<DateFormat, String> {
        let mut forms = Vec::new();
        for name in text.split("||") {
            forms.push(match name.trim() {
                "strict_date_optional_time" | "date_optional_time" => DateForm::OptionalTime,
                "strict_date" | "date" | "yyyy-MM-dd" => DateForm::Date,
                "epoch_millis" => DateForm::EpochMillis,
                "epoch_second" => DateForm::EpochSecond,
                other => {
                    return Err(format!(
                        "apcache reads the date formats strict_date_optional_time, strict_date, epoch_millis and epoch_second, not {other:?}"
                    ))
                }
            });
        }
        Ok(DateFormat(forms))
    }

    /// `value` (a JSON string or number) as milliseconds since the epoch, by the first form that
    /// reads it.
    pub fn read(&self, value: &serde_json::Value) -> Result<i64, String> {
        for form in &self.0 {
            let millis = match (form, value) {
                (DateForm::OptionalTime, serde_json::Value::String(text)) => parse_iso(text, true),
                (DateForm::Date, serde_json::Value::String(text)) => parse_iso(text, false),
                (DateForm::EpochMillis, value) => epoch(value, 1),
                (DateForm::EpochSecond, value) => epoch(value, 1000),
                _ => None,
            };
            if let Some(millis) = millis {
                return Ok(millis);
            }
        }
        Err(format!("{value} is not a date in the format {self}"))
    }
}

/// Whether `text` looks like a date to dynamic mapping (`strict_date_optional_time` with at
/// least a full date, as Elasticsearch's date detection needs).
pub fn detect(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.len() < 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    parse_iso(text, true)
}

/// An epoch number (`unit` milliseconds per unit), from a JSON integer or a string of digits.
fn epoch(value: &serde_json::Value, unit: i64) -> Option<i64> {
    let count = match value {
        serde_json::Value::Number(n) => n.as_i64()?,
        serde_json::Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()?
        }
        _ => return None,
    };
    count.checked_mul(unit)
}

/// A cursor over ASCII digits and separators.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn digits(&mut self, count: usize) -> Option<i64> {
        let end = self.at.checked_add(count)?;
        let slice = self.bytes.get(self.at..end)?;
        if !slice.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at = end;
        Some(slice.iter().fold(0, |v, &b| v * 10 + i64::from(b - b'0')))
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `yyyy[-MM[-dd]]` and, when `time` is allowed, `[Thh[:mm[:ss[.f]]]][Z|±hh[:]mm]`.
fn parse_iso(text: &str, time: bool) -> Option<i64> {
    let mut scan = Scan {
        bytes: text.as_bytes(),
        at: 0,
    };
    let year = scan.digits(4)?;
    let (mut month, mut day) = (1, 1);
    if scan.eat(b'-') {
        month = scan.digits(2)?;
        if scan.eat(b'-') {
            day = scan.digits(2)?;
        } else if !time {
            return None;
        }
    } else if !time {
        return None;
    }
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut millis = days_from_civil(year, month, day) * 86_400_000;
    if scan.done() {
        return Some(millis);
    }
    if !time || !scan.eat(b'T') {
        return None;
    }
    let hour = scan.digits(2)?;
    let (mut minute, mut second, mut fraction) = (0, 0, 0);
    if scan.eat(b':') {
        minute = scan.digits(2)?;
        if scan.eat(b':') {
            second = scan.digits(2)?;
            if scan.eat(b'.') || scan.eat(b',') {
                let start = scan.at;
                let mut digits = 0;
                while scan.bytes.get(scan.at).is_some_and(u8::is_ascii_digit) {
                    if digits < 3 {
                        fraction = fraction * 10 + i64::from(scan.bytes[scan.at] - b'0');
                        digits += 1;
                    }
                    scan.at += 1;
                }
                if scan.at == start || scan.at - start > 9 {
                    return None;
                }
                while digits < 3 {
                    fraction *= 10;
                    digits += 1;
                }
            }
        }
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    millis += ((hour * 60 + minute) * 60 + second) * 1000 + fraction;
    if scan.done() {
        return Some(millis);
    }
    if scan.eat(b'Z') {
        return scan.done().then_some(millis);
    }
    let sign = if scan.eat(b'+') {
        -1
    } else if scan.eat(b'-') {
        1
    } else {
        return None;
    };
    let zone_hours = scan.digits(2)?;
    scan.eat(b':');
    let zone_minutes = if scan.done() { 0 } else { scan.digits(2)? };
    if !scan.done() || zone_hours > 18 || zone_minutes > 59 {
        return None;
    }
    Some(millis + sign * (zone_hours * 60 + zone_minutes) * 60_000)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: serde_json::Value) -> Result<i64, String> {
        DateFormat::default().read(&value)
    }

    #[test]
    fn iso_dates_and_times_read_as_utc_milliseconds() {
        assert_eq!(read(json!("1970-01-01")), Ok(0));
        assert_eq!(read(json!("2024-02-29")), Ok(1_709_164_800_000));
        assert_eq!(read(json!("2024-02-29T12:30:00Z")), Ok(1_709_209_800_000));
        assert_eq!(read(json!("2024-02-29T12:30:00.5Z")), Ok(1_709_209_800_500));
        assert_eq!(
            read(json!("2024-02-29T14:30:00+02:00")),
            Ok(1_709_209_800_000)
        );
        assert_eq!(read(json!("2024-02-29T10:30-0200")), Ok(1_709_209_800_000));
        assert_eq!(read(json!("1969-12-31T23:59:59.999Z")), Ok(-1));
        assert_eq!(read(json!("2024")), Ok(1_704_067_200_000));
    }

    #[test]
    fn epoch_numbers_and_digit_strings_read_as_milliseconds() {
        assert_eq!(read(json!(1_709_164_800_000i64)), Ok(1_709_164_800_000));
        assert_eq!(read(json!("-5")), Ok(-5));
        let seconds = DateFormat::parse("epoch_second").unwrap();
        assert_eq!(seconds.read(&json!(86_400)), Ok(86_400_000));
    }

    #[test]
    fn impossible_dates_and_other_text_are_refused() {
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-01-01T24:00",
            "yesterday",
            "2024-01-01T",
            "2024-01-01Z",
        ] {
            assert!(read(json!(bad)).is_err(), "{bad}");
        }
        assert!(read(json!(true)).is_err());
        assert!(DateFormat::parse("dd/MM/yyyy").is_err());
    }

    #[test]
    fn detection_wants_a_full_date() {
        assert!(detect("2024-01-02").is_some());
        assert!(detect("2024-01-02T03:04:05Z").is_some());
        assert!(detect("2024").is_none());
        assert!(detect("1.2.3").is_none());
    }

    #[test]
    fn days_agree_with_a_day_by_day_count() {
        let mut days = 0;
        for year in 1970..2101 {
            for month in 1..=12 {
                for day in 1..=days_in_month(year, month) {
                    assert_eq!(days_from_civil(year, month, day), days);
                    days += 1;
                }
            }
        }
    }
}
