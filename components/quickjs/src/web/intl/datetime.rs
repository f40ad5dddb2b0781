//! `Intl.DateTimeFormat`: an instant, placed in an IANA time zone by jiff's copy of the time
//! zone database, written by ICU4X in the Gregorian calendar from a UTS #35 skeleton (the
//! script turns ECMA-402's options into one: `yMMMd`, `jm`, `EEEEyMMMMd`...).

use icu::calendar::{Date, Gregorian};
use icu::datetime::FixedCalendarDateTimeFormatter;
use icu::datetime::fieldbag::DateTimeFieldBag;
use icu::datetime::fieldsets::enums::CompositeFieldSet;
use icu::time::zone::{IanaParser, UtcOffset, ZoneNameTimestamp};
use icu::time::{Time, ZonedDateTime};
use jiff::tz::TimeZone;
use rquickjs::{Array, Ctx, Function, Object, Result};

use super::{Data, cached, locale, parts_of, range_error};

/// The zone a script names: an IANA name in any case (`"europe/paris"`), or an offset
/// (`"+05:30"`).
fn zone(ctx: &Ctx<'_>, name: &str) -> Result<TimeZone> {
    if name.eq_ignore_ascii_case("utc")
        || name.eq_ignore_ascii_case("etc/utc")
        || name.eq_ignore_ascii_case("gmt")
    {
        return Ok(TimeZone::UTC);
    }
    if let Some(sign) = name.chars().next().filter(|c| *c == '+' || *c == '-') {
        let digits: String = name[1..].chars().filter(char::is_ascii_digit).collect();
        let (hours, minutes) = match digits.len() {
            2 => (&digits[..2], "00"),
            4 => (&digits[..2], &digits[2..]),
            _ => return Err(range_error(ctx, "Invalid time zone specified", name)),
        };
        let seconds =
            hours.parse::<i32>().unwrap_or(99) * 3600 + minutes.parse::<i32>().unwrap_or(99) * 60;
        if seconds >= 24 * 3600 || (name[1..].len() == 5 && name.as_bytes()[3] != b':') {
            return Err(range_error(ctx, "Invalid time zone specified", name));
        }
        let offset = jiff::tz::Offset::from_seconds(if sign == '-' { -seconds } else { seconds })
            .map_err(|e| range_error(ctx, "Invalid time zone specified", e))?;
        return Ok(TimeZone::fixed(offset));
    }
    TimeZone::get(name).map_err(|_| range_error(ctx, "Invalid time zone specified", name))
}

/// `native.intl.timeZone(name)`: the zone's name as ECMA-402 reports it (`"UTC"`,
/// `"Europe/Paris"`, `"+05:30"`), or a `RangeError`.
fn time_zone_name(ctx: Ctx<'_>, name: String) -> Result<String> {
    let found = zone(&ctx, &name)?;
    if let Some(iana) = found.iana_name() {
        return Ok(match iana {
            "UTC" | "Etc/UTC" | "Etc/GMT" | "GMT" => "UTC".to_owned(),
            other => other.to_owned(),
        });
    }
    let offset = found
        .to_fixed_offset()
        .map_err(|e| range_error(&ctx, "Invalid time zone specified", e))?;
    let seconds = offset.seconds();
    let sign = if seconds < 0 { '-' } else { '+' };
    let seconds = seconds.unsigned_abs();
    Ok(format!(
        "{sign}{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60
    ))
}

fn date_part(part: &writeable::Part) -> Option<&'static str> {
    use icu::datetime::parts;
    Some(match *part {
        p if p == parts::ERA => "era",
        p if p == parts::YEAR || p == parts::EXTENDED_YEAR => "year",
        p if p == parts::RELATED_YEAR => "relatedYear",
        p if p == parts::YEAR_NAME => "yearName",
        p if p == parts::MONTH => "month",
        p if p == parts::DAY => "day",
        p if p == parts::WEEKDAY => "weekday",
        p if p == parts::DAY_PERIOD => "dayPeriod",
        p if p == parts::HOUR => "hour",
        p if p == parts::MINUTE => "minute",
        p if p == parts::SECOND => "second",
        p if p == parts::TIME_ZONE_NAME => "timeZoneName",
        p if p == icu::decimal::parts::FRACTION => "fractionalSecond",
        p if p == icu::decimal::parts::DECIMAL => "literal",
        _ => return None,
    })
}

/// `native.intl.formatDate(locale, skeleton, timeZone, epochMilliseconds)`: the parts of the
/// instant in the zone, with the fields the skeleton names.
fn format_date<'js>(
    ctx: Ctx<'js>,
    tag: String,
    skeleton: String,
    zone_name: String,
    epoch_ms: f64,
) -> Result<Array<'js>> {
    let tz = zone(&ctx, &zone_name)?;
    let timestamp = jiff::Timestamp::from_millisecond(epoch_ms as i64)
        .map_err(|e| range_error(&ctx, "Invalid time value", e))?;
    let zoned = timestamp.to_zoned(tz.clone());
    let civil = zoned.datetime();
    let date = Date::try_new_gregorian(
        i32::from(civil.year()),
        civil.month() as u8,
        civil.day() as u8,
    )
    .map_err(|e| range_error(&ctx, "Invalid time value", e))?;
    let time = Time::try_new(
        civil.hour() as u8,
        civil.minute() as u8,
        civil.second() as u8,
        civil.subsec_nanosecond() as u32,
    )
    .map_err(|e| range_error(&ctx, "Invalid time value", e))?;
    let parser = cached("iana".to_owned(), || {
        IanaParser::try_new_unstable(&Data).map_err(|e| e.to_string())
    })
    .map_err(|e| range_error(&ctx, "no time zone data", e))?;
    let icu_zone = match tz.iana_name() {
        Some(name) => parser.as_borrowed().parse(name),
        None => icu::time::TimeZone::UNKNOWN,
    };
    let offset = UtcOffset::from_seconds_unchecked(zoned.offset().seconds());
    let zone = icu_zone
        .with_offset(Some(offset))
        .with_zone_name_timestamp(ZoneNameTimestamp::from_epoch_seconds(timestamp.as_second()));
    let input = ZonedDateTime { date, time, zone };
    let prefs = (&locale(&ctx, &tag)?).into();
    let formatter = cached(format!("date|{tag}|{skeleton}"), || {
        let fields = DateTimeFieldBag::from_skeleton(&skeleton).to_composite_field_set();
        FixedCalendarDateTimeFormatter::<Gregorian, CompositeFieldSet>::try_new_unstable(
            &Data, prefs, fields,
        )
        .map_err(|e| e.to_string())
    })
    .map_err(|e| range_error(&ctx, "no date data", e))?;
    parts_of(&ctx, &formatter.format(&input), date_part)
}

pub fn install<'js>(ctx: &Ctx<'js>, intl: &Object<'js>) -> Result<()> {
    intl.set("timeZone", Function::new(ctx.clone(), time_zone_name)?)?;
    intl.set("formatDate", Function::new(ctx.clone(), format_date)?)?;
    Ok(())
}
