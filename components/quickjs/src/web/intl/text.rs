//! `Intl.Collator`, `Intl.ListFormat`, `Intl.RelativeTimeFormat` and `Intl.Segmenter`.

use icu::collator::Collator;
use icu::collator::options::{AlternateHandling, CaseLevel, CollatorOptions, Strength};
use icu::decimal::input::Decimal;
use icu::experimental::relativetime::options::Numeric;
use icu::experimental::relativetime::{RelativeTimeFormatter, RelativeTimeFormatterOptions};
use icu::list::ListFormatter;
use icu::list::options::{ListFormatterOptions, ListLength};
use icu::segmenter::options::{SentenceBreakOptions, WordBreakOptions};
use icu::segmenter::{GraphemeClusterSegmenter, SentenceSegmenter, WordSegmenter};
use rquickjs::{Array, Ctx, Function, Object, Result};

use super::{Data, cached, locale, parts_of, range_error};

/// `native.intl.compare(locale, sensitivity, ignorePunctuation, a, b)`: -1, 0 or 1. The
/// locale's `-u-kn` and `-u-kf` keywords carry `numeric` and `caseFirst`.
fn compare(
    ctx: Ctx<'_>,
    tag: String,
    sensitivity: String,
    ignore_punctuation: bool,
    a: String,
    b: String,
) -> Result<i32> {
    let prefs = (&locale(&ctx, &tag)?).into();
    let collator = cached(
        format!("collator|{tag}|{sensitivity}|{ignore_punctuation}"),
        || {
            let mut options = CollatorOptions::default();
            let (strength, case_level) = match sensitivity.as_str() {
                "base" => (Strength::Primary, CaseLevel::Off),
                "accent" => (Strength::Secondary, CaseLevel::Off),
                "case" => (Strength::Primary, CaseLevel::On),
                _ => (Strength::Tertiary, CaseLevel::Off),
            };
            options.strength = Some(strength);
            options.case_level = Some(case_level);
            if ignore_punctuation {
                options.alternate_handling = Some(AlternateHandling::Shifted);
            }
            Collator::try_new_unstable(&Data, prefs, options).map_err(|e| e.to_string())
        },
    )
    .map_err(|e| range_error(&ctx, "no collation data", e))?;
    Ok(collator.as_borrowed().compare(&a, &b) as i32)
}

fn list_part(part: &writeable::Part) -> Option<&'static str> {
    (*part == icu::list::parts::ELEMENT).then_some("element")
}

/// `native.intl.formatList(locale, type, style, items)`: the list's parts.
fn format_list<'js>(
    ctx: Ctx<'js>,
    tag: String,
    kind: String,
    style: String,
    items: Vec<String>,
) -> Result<Array<'js>> {
    let prefs = (&locale(&ctx, &tag)?).into();
    let formatter = cached(format!("list|{tag}|{kind}|{style}"), || {
        let length = match style.as_str() {
            "short" => ListLength::Short,
            "narrow" => ListLength::Narrow,
            _ => ListLength::Wide,
        };
        let options = ListFormatterOptions::default().with_length(length);
        match kind.as_str() {
            "disjunction" => ListFormatter::try_new_or_unstable(&Data, prefs, options),
            "unit" => ListFormatter::try_new_unit_unstable(&Data, prefs, options),
            _ => ListFormatter::try_new_and_unstable(&Data, prefs, options),
        }
        .map_err(|e| e.to_string())
    })
    .map_err(|e| range_error(&ctx, "no list data", e))?;
    parts_of(&ctx, &formatter.format(items.iter()), list_part)
}

macro_rules! relative_formatters {
    ($($style:literal, $unit:literal => $constructor:ident),* $(,)?) => {
        fn relative_formatter(
            style: &str,
            unit: &str,
            prefs: icu::experimental::relativetime::RelativeTimeFormatterPreferences,
            options: RelativeTimeFormatterOptions,
        ) -> std::result::Result<RelativeTimeFormatter, String> {
            match (style, unit) {
                $(($style, $unit) => RelativeTimeFormatter::$constructor(&Data, prefs, options),)*
                _ => return Err(format!("unknown unit {unit}")),
            }
            .map_err(|e| e.to_string())
        }
    };
}

relative_formatters!(
    "long", "second" => try_new_long_second_unstable,
    "long", "minute" => try_new_long_minute_unstable,
    "long", "hour" => try_new_long_hour_unstable,
    "long", "day" => try_new_long_day_unstable,
    "long", "week" => try_new_long_week_unstable,
    "long", "month" => try_new_long_month_unstable,
    "long", "quarter" => try_new_long_quarter_unstable,
    "long", "year" => try_new_long_year_unstable,
    "short", "second" => try_new_short_second_unstable,
    "short", "minute" => try_new_short_minute_unstable,
    "short", "hour" => try_new_short_hour_unstable,
    "short", "day" => try_new_short_day_unstable,
    "short", "week" => try_new_short_week_unstable,
    "short", "month" => try_new_short_month_unstable,
    "short", "quarter" => try_new_short_quarter_unstable,
    "short", "year" => try_new_short_year_unstable,
    "narrow", "second" => try_new_narrow_second_unstable,
    "narrow", "minute" => try_new_narrow_minute_unstable,
    "narrow", "hour" => try_new_narrow_hour_unstable,
    "narrow", "day" => try_new_narrow_day_unstable,
    "narrow", "week" => try_new_narrow_week_unstable,
    "narrow", "month" => try_new_narrow_month_unstable,
    "narrow", "quarter" => try_new_narrow_quarter_unstable,
    "narrow", "year" => try_new_narrow_year_unstable,
);

fn relative_part(part: &writeable::Part) -> Option<&'static str> {
    use icu::decimal::parts;
    Some(match *part {
        p if p == parts::INTEGER => "integer",
        p if p == parts::FRACTION => "fraction",
        p if p == parts::GROUP => "group",
        p if p == parts::DECIMAL => "decimal",
        p if p == parts::MINUS_SIGN => "minusSign",
        p if p == parts::PLUS_SIGN => "plusSign",
        _ => return None,
    })
}

/// `native.intl.formatRelative(locale, style, numeric, value, unit)`: the parts of "in 3
/// days", "yesterday"...; `value` is an exact decimal string, `unit` singular.
fn format_relative<'js>(
    ctx: Ctx<'js>,
    tag: String,
    style: String,
    numeric: String,
    value: String,
    unit: String,
) -> Result<Array<'js>> {
    let prefs = (&locale(&ctx, &tag)?).into();
    let formatter = cached(format!("relative|{tag}|{style}|{numeric}|{unit}"), || {
        let numeric = if numeric == "auto" {
            Numeric::Auto
        } else {
            Numeric::Always
        };
        relative_formatter(
            &style,
            &unit,
            prefs,
            RelativeTimeFormatterOptions::default().with_numeric(numeric),
        )
    })
    .map_err(|e| range_error(&ctx, "no relative time data", e))?;
    let number = Decimal::try_from_str(&value).map_err(|e| range_error(&ctx, "not a number", e))?;
    parts_of(&ctx, &formatter.format(number), relative_part)
}

/// `native.intl.segment(locale, granularity, text)`: the segments' boundaries in UTF-16 code
/// units, `[0, b1, b2, ..., length]`, and for words whether each segment is word-like.
fn segment<'js>(
    ctx: Ctx<'js>,
    _tag: String,
    granularity: String,
    text: String,
) -> Result<Object<'js>> {
    let utf16: Vec<u16> = text.encode_utf16().collect();
    let out = Object::new(ctx.clone())?;
    let mut breaks = Vec::new();
    let mut word_like = Vec::new();
    match granularity.as_str() {
        "word" => {
            let segmenter = cached("segmenter|word".to_owned(), || {
                WordSegmenter::try_new_for_non_complex_scripts_unstable(
                    &Data,
                    WordBreakOptions::default(),
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| range_error(&ctx, "no segmenter data", e))?;
            let mut iterator = segmenter.as_borrowed().segment_utf16(&utf16);
            while let Some(boundary) = iterator.next() {
                breaks.push(boundary as u32);
                word_like.push(iterator.is_word_like());
            }
        }
        "sentence" => {
            let segmenter = cached("segmenter|sentence".to_owned(), || {
                SentenceSegmenter::try_new_unstable(&Data, SentenceBreakOptions::default())
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| range_error(&ctx, "no segmenter data", e))?;
            breaks.extend(
                segmenter
                    .as_borrowed()
                    .segment_utf16(&utf16)
                    .map(|b| b as u32),
            );
        }
        _ => {
            let segmenter = cached("segmenter|grapheme".to_owned(), || {
                GraphemeClusterSegmenter::try_new_unstable(&Data).map_err(|e| e.to_string())
            })
            .map_err(|e| range_error(&ctx, "no segmenter data", e))?;
            breaks.extend(
                segmenter
                    .as_borrowed()
                    .segment_utf16(&utf16)
                    .map(|b| b as u32),
            );
        }
    }
    out.set("breaks", breaks)?;
    out.set("wordLike", word_like)?;
    Ok(out)
}

pub fn install<'js>(ctx: &Ctx<'js>, intl: &Object<'js>) -> Result<()> {
    intl.set("compare", Function::new(ctx.clone(), compare)?)?;
    intl.set("formatList", Function::new(ctx.clone(), format_list)?)?;
    intl.set(
        "formatRelative",
        Function::new(ctx.clone(), format_relative)?,
    )?;
    intl.set("segment", Function::new(ctx.clone(), segment)?)?;
    Ok(())
}
