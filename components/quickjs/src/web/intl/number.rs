//! `Intl.NumberFormat` and `Intl.PluralRules`: ECMA-402's rounding on an exact decimal, then
//! ICU4X's decimal, percent, currency, compact and unit formatting.
//!
//! A styled number is "affix, number, affix": the style's formatter (percent, currency,
//! compact) writes the whole, and the run of digits in it is replaced by the decimal formatter's
//! parts for the value rounded as the options ask (the style's formatters round their own way).

use icu::decimal::input::{Decimal, SignDisplay};
use icu::decimal::options::{DecimalFormatterOptions, GroupingStrategy};
use icu::decimal::{CompactDecimalFormatter, DecimalFormatter};
use icu::experimental::dimension::currency::CurrencyType;
use icu::experimental::dimension::currency::formatter::CurrencyFormatter;
use icu::experimental::dimension::percent::formatter::PercentFormatter;
use icu::experimental::dimension::provider::units::display_names::UnitsDisplayNames;
use icu::plurals::{PluralCategory, PluralRules};
use icu_provider::prelude::*;
use rquickjs::{Array, Ctx, Function, Object, Result};
use writeable::Writeable;

use super::{Data, cached, locale, parts_of, range_error};
use fixed_decimal::{SignedRoundingMode, UnsignedRoundingMode};

/// The digit options of ECMA-402's `SetNumberFormatDigitOptions`, as the script resolved them.
struct Digits {
    min_integer: i16,
    fraction: Option<(i16, i16)>,
    significant: Option<(i16, i16)>,
    mode: SignedRoundingMode,
    strip_if_integer: bool,
}

fn digits(options: &Object<'_>) -> Result<Digits> {
    let get = |name: &str| -> Result<Option<i16>> { options.get::<_, Option<i16>>(name) };
    let fraction = match (get("minimumFractionDigits")?, get("maximumFractionDigits")?) {
        (Some(min), Some(max)) => Some((min, max)),
        _ => None,
    };
    let significant = match (
        get("minimumSignificantDigits")?,
        get("maximumSignificantDigits")?,
    ) {
        (Some(min), Some(max)) => Some((min, max)),
        _ => None,
    };
    let mode = match options.get::<_, Option<String>>("roundingMode")?.as_deref() {
        Some("ceil") => SignedRoundingMode::Ceil,
        Some("floor") => SignedRoundingMode::Floor,
        Some("expand") => SignedRoundingMode::Unsigned(UnsignedRoundingMode::Expand),
        Some("trunc") => SignedRoundingMode::Unsigned(UnsignedRoundingMode::Trunc),
        Some("halfCeil") => SignedRoundingMode::HalfCeil,
        Some("halfFloor") => SignedRoundingMode::HalfFloor,
        Some("halfTrunc") => SignedRoundingMode::Unsigned(UnsignedRoundingMode::HalfTrunc),
        Some("halfEven") => SignedRoundingMode::Unsigned(UnsignedRoundingMode::HalfEven),
        _ => SignedRoundingMode::Unsigned(UnsignedRoundingMode::HalfExpand),
    };
    Ok(Digits {
        min_integer: get("minimumIntegerDigits")?.unwrap_or(1),
        fraction,
        significant,
        mode,
        strip_if_integer: options
            .get::<_, Option<String>>("trailingZeroDisplay")?
            .as_deref()
            == Some("stripIfInteger"),
    })
}

/// `value` rounded and padded as `digits` say.
fn round(mut value: Decimal, digits: &Digits) -> Decimal {
    if let Some((min, max)) = digits.significant {
        let top = value.absolute.nonzero_magnitude_start();
        value.round_with_mode(top - max + 1, digits.mode);
        value.absolute.trim_end();
        let top = value.absolute.nonzero_magnitude_start();
        value.absolute.pad_end(top - min + 1);
    } else if let Some((min, max)) = digits.fraction {
        value.round_with_mode(-max, digits.mode);
        value.absolute.trim_end();
        value.absolute.pad_end(-min);
    }
    if digits.strip_if_integer {
        value.absolute.trim_end_if_integer();
    }
    value.absolute.pad_start(digits.min_integer);
    value
}

/// The script's value: an exact decimal string, or `NaN` / `Infinity` / `-Infinity`.
enum Value {
    Finite(Decimal),
    NotANumber,
    Infinite { negative: bool },
}

fn value(ctx: &Ctx<'_>, text: &str) -> Result<Value> {
    Ok(match text {
        "NaN" => Value::NotANumber,
        "Infinity" => Value::Infinite { negative: false },
        "-Infinity" => Value::Infinite { negative: true },
        _ => Value::Finite(
            Decimal::try_from_str(text).map_err(|e| range_error(ctx, "not a number", e))?,
        ),
    })
}

fn decimal_formatter(
    ctx: &Ctx<'_>,
    tag: &str,
    grouping: &str,
) -> Result<std::rc::Rc<DecimalFormatter>> {
    let prefs = (&locale(ctx, tag)?).into();
    let strategy = match grouping {
        "always" => GroupingStrategy::Always,
        "min2" => GroupingStrategy::Min2,
        "false" => GroupingStrategy::Never,
        _ => GroupingStrategy::Auto,
    };
    let mut options = DecimalFormatterOptions::default();
    options.grouping_strategy = Some(strategy);
    cached(format!("decimal|{tag}|{grouping}"), || {
        DecimalFormatter::try_new_unstable(&Data, prefs, options).map_err(|e| e.to_string())
    })
    .map_err(|e| range_error(ctx, "no decimal data", e))
}

fn decimal_part(part: &writeable::Part) -> Option<&'static str> {
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

/// Splits `whole` around its run of digits (and the separators between them), and puts the
/// decimal formatter's parts for `number` in its place; the affixes' text is typed `affix`,
/// except signs and spaces.
fn splice<'js>(
    ctx: &Ctx<'js>,
    whole: &str,
    number: Array<'js>,
    affix: &'static str,
) -> Result<Array<'js>> {
    let digit_at = |i: usize| whole[i..].chars().next().is_some_and(|c| c.is_numeric());
    let first = whole.char_indices().map(|(i, _)| i).find(|&i| digit_at(i));
    let last = whole.char_indices().map(|(i, _)| i).rfind(|&i| digit_at(i));
    let out = Array::new(ctx.clone())?;
    let mut push = |kind: &str, text: &str| -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let pair = Array::new(ctx.clone())?;
        pair.set(0, kind)?;
        pair.set(1, text)?;
        out.set(out.len(), pair)
    };
    let (Some(first), Some(last)) = (first, last) else {
        push(affix, whole)?;
        return Ok(out);
    };
    let end = last + whole[last..].chars().next().map_or(0, char::len_utf8);
    let affix_parts = |text: &str, push: &mut dyn FnMut(&str, &str) -> Result<()>| -> Result<()> {
        let mut run = String::new();
        let mut run_kind = "";
        for c in text.chars() {
            let kind = match c {
                '-' | '\u{2212}' => "minusSign",
                '+' => "plusSign",
                c if c.is_whitespace() || c == '\u{200e}' || c == '\u{200f}' || c == '\u{61c}' => {
                    "literal"
                }
                _ => affix,
            };
            if kind != run_kind && !run.is_empty() {
                push(run_kind, &run)?;
                run.clear();
            }
            run_kind = kind;
            run.push(c);
        }
        push(run_kind, &run)
    };
    affix_parts(&whole[..first], &mut push)?;
    for pair in number.iter::<Array>() {
        let pair = pair?;
        let kind: String = pair.get(0)?;
        if kind == "minusSign" || kind == "plusSign" {
            continue;
        }
        push(&kind, &pair.get::<String>(1)?)?;
    }
    affix_parts(&whole[end..], &mut push)?;
    Ok(out)
}

/// `native.intl.formatNumber(locale, options, value)`: the parts of `value` formatted.
fn format_number<'js>(
    ctx: Ctx<'js>,
    tag: String,
    options: Object<'js>,
    text: String,
) -> Result<Array<'js>> {
    let style = options
        .get::<_, Option<String>>("style")?
        .unwrap_or_else(|| "decimal".into());
    let grouping = options
        .get::<_, Option<String>>("useGrouping")?
        .unwrap_or_else(|| "auto".into());
    let sign_display = match options.get::<_, Option<String>>("signDisplay")?.as_deref() {
        Some("always") => SignDisplay::Always,
        Some("never") => SignDisplay::Never,
        Some("exceptZero") => SignDisplay::ExceptZero,
        Some("negative") => SignDisplay::Negative,
        _ => SignDisplay::Auto,
    };
    let mut number = match value(&ctx, &text)? {
        Value::Finite(number) => number,
        Value::NotANumber => return special(&ctx, "nan", "NaN"),
        Value::Infinite { negative } => {
            return special(&ctx, "infinity", if negative { "-∞" } else { "∞" });
        }
    };
    if style == "percent" {
        number.multiply_pow10(2);
    }
    let notation = options
        .get::<_, Option<String>>("notation")?
        .unwrap_or_default();
    let decimal = decimal_formatter(&ctx, &tag, &grouping)?;
    if notation == "compact" {
        let long = options
            .get::<_, Option<String>>("compactDisplay")?
            .as_deref()
            == Some("long");
        let prefs = (&locale(&ctx, &tag)?).into();
        let compact = cached(format!("compact|{tag}|{long}"), || {
            if long {
                CompactDecimalFormatter::try_new_long_unstable(&Data, prefs, Default::default())
            } else {
                CompactDecimalFormatter::try_new_short_unstable(&Data, prefs, Default::default())
            }
            .map_err(|e| e.to_string())
        })
        .map_err(|e| range_error(&ctx, "no compact data", e))?;
        number.apply_sign_display(sign_display);
        let whole = compact.format(&number).write_to_string().into_owned();
        let mut digits_only = whole.clone();
        digits_only.retain(|c| c.is_numeric() || c == '.' || c == ',');
        return splice(
            &ctx,
            &whole,
            parts_of(&ctx, &digits_only, |_| None)?,
            "compact",
        )
        .and_then(|parts| retype_compact_number(&ctx, parts));
    }
    let number = round(number, &digits(&options)?);
    let mut signed = number.clone();
    signed.apply_sign_display(sign_display);
    let mut absolute = number.clone();
    absolute.sign = Default::default();
    let plain = parts_of(&ctx, &decimal.format(&absolute), decimal_part)?;
    match style.as_str() {
        "percent" => {
            let prefs = (&locale(&ctx, &tag)?).into();
            let percent = cached(format!("percent|{tag}"), || {
                PercentFormatter::try_new_unstable(&Data, prefs, Default::default())
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| range_error(&ctx, "no percent data", e))?;
            let whole = percent.format(&signed).write_to_string().into_owned();
            splice(&ctx, &whole, plain, "percentSign")
        }
        "currency" => {
            let code: String = options.get("currency")?;
            let display = options
                .get::<_, Option<String>>("currencyDisplay")?
                .unwrap_or_else(|| "symbol".into());
            let prefs = (&locale(&ctx, &tag)?).into();
            let currency = CurrencyType::try_from_str(&code.to_ascii_lowercase())
                .map_err(|e| range_error(&ctx, "bad currency code", e))?;
            let formatter = cached(format!("currency|{tag}|{code}|{display}"), || {
                match display.as_str() {
                    "narrowSymbol" => CurrencyFormatter::try_new_symbol_narrow_unstable(
                        &Data,
                        prefs,
                        currency,
                        Default::default(),
                    ),
                    "code" => CurrencyFormatter::try_new_code_unstable(
                        &Data,
                        prefs,
                        currency,
                        Default::default(),
                    ),
                    "name" => CurrencyFormatter::try_new_name_unstable(&Data, prefs, currency),
                    _ => CurrencyFormatter::try_new_symbol_unstable(
                        &Data,
                        prefs,
                        currency,
                        Default::default(),
                    ),
                }
                .map_err(|e| e.to_string())
            })
            .map_err(|e| range_error(&ctx, "no currency data", e))?;
            let whole = formatter
                .format_fixed_decimal(&signed)
                .write_to_string()
                .into_owned();
            splice(&ctx, &whole, plain, "currency")
        }
        "unit" => {
            let unit: String = options.get("unit")?;
            let width = options
                .get::<_, Option<String>>("unitDisplay")?
                .unwrap_or_else(|| "short".into());
            let whole = unit_text(&ctx, &tag, &unit, &width, &signed, &decimal)?;
            splice(&ctx, &whole, plain, "unit")
        }
        _ => parts_of(&ctx, &decimal.format(&signed), decimal_part),
    }
}

/// A compact number's digits, typed as `integer`, `decimal` and `fraction`.
fn retype_compact_number<'js>(ctx: &Ctx<'js>, parts: Array<'js>) -> Result<Array<'js>> {
    let out = Array::new(ctx.clone())?;
    for pair in parts.iter::<Array>() {
        let pair = pair?;
        let kind: String = pair.get(0)?;
        let text: String = pair.get(1)?;
        if kind != "literal" {
            out.set(out.len(), pair)?;
            continue;
        }
        let split = text.find(|c: char| !c.is_numeric());
        let push = |kind: &str, text: &str| -> Result<()> {
            if !text.is_empty() {
                let pair = Array::new(ctx.clone())?;
                pair.set(0, kind)?;
                pair.set(1, text)?;
                out.set(out.len(), pair)?;
            }
            Ok(())
        };
        match split {
            Some(at) if text[at..].chars().nth(1).is_some_and(|c| c.is_numeric()) => {
                let separator = text[at..].chars().next().map_or(1, char::len_utf8);
                push("integer", &text[..at])?;
                push("decimal", &text[at..at + separator])?;
                push("fraction", &text[at + separator..])?;
            }
            _ => push("integer", &text)?,
        }
    }
    Ok(out)
}

fn special<'js>(ctx: &Ctx<'js>, kind: &str, text: &str) -> Result<Array<'js>> {
    let out = Array::new(ctx.clone())?;
    let mut rest = text;
    if let Some(stripped) = text.strip_prefix('-') {
        let pair = Array::new(ctx.clone())?;
        pair.set(0, "minusSign")?;
        pair.set(1, "-")?;
        out.set(0, pair)?;
        rest = stripped;
    }
    let pair = Array::new(ctx.clone())?;
    pair.set(0, kind)?;
    pair.set(1, rest)?;
    out.set(out.len(), pair)?;
    Ok(out)
}

/// The markers that hold unit names, by how common the unit is.
macro_rules! unit_markers {
    ($($marker:ty),* $(,)?) => {
        /// The display-name pattern for `width-unit` (`long-meter`), from whichever marker has
        /// it for the locale.
        fn unit_names(tag: &str, attribute: &str) -> Option<DataPayload<icu::experimental::dimension::provider::units::categorized_display_names::UnitsNamesLengthCoreV1>> {
            let locale: icu::locale::Locale = tag.parse().ok()?;
            let attributes = DataMarkerAttributes::try_from_str(attribute).ok()?;
            // Each marker falls back to the root locale, whose names are the short ones; a
            // locale's own names may be in a later marker (a unit the locale does not use is
            // "extended" or "outlier" there), so a root answer is kept only if none has better.
            let mut root = None;
            $(
                let data_locale = <$marker>::make_locale((&locale).into());
                let request = DataRequest {
                    id: DataIdentifierBorrowed::for_marker_attributes_and_locale(
                        attributes,
                        &data_locale,
                    ),
                    ..Default::default()
                };
                if let Ok(response) = DataProvider::<$marker>::load(&Data, request) {
                    let from_root = response.metadata.locale.as_ref().is_some_and(|l| l.is_unknown());
                    if !from_root {
                        return Some(response.payload.cast());
                    }
                    root.get_or_insert(response.payload.cast());
                }
            )*
            root
        }
    };
}

use icu::experimental::dimension::provider::units::categorized_display_names::*;
unit_markers!(
    UnitsNamesLengthCoreV1,
    UnitsNamesMassCoreV1,
    UnitsNamesVolumeCoreV1,
    UnitsNamesAreaCoreV1,
    UnitsNamesDurationCoreV1,
    UnitsNamesLengthExtendedV1,
    UnitsNamesMassExtendedV1,
    UnitsNamesVolumeExtendedV1,
    UnitsNamesAreaExtendedV1,
    UnitsNamesDurationExtendedV1,
    UnitsNamesLengthOutlierV1,
    UnitsNamesMassOutlierV1,
    UnitsNamesVolumeOutlierV1,
    UnitsNamesAreaOutlierV1,
    UnitsNamesDurationOutlierV1,
);

/// `value` with the unit's name for its plural form; a unit without CLDR names here (digital,
/// temperature, speed) is written with its identifier.
fn unit_text(
    ctx: &Ctx<'_>,
    tag: &str,
    unit: &str,
    width: &str,
    value: &Decimal,
    decimal: &DecimalFormatter,
) -> Result<String> {
    let number = decimal.format(value).write_to_string().into_owned();
    let Some(names) = unit_names(tag, &format!("{width}-{unit}")) else {
        return Ok(format!("{number} {unit}"));
    };
    let prefs = (&locale(ctx, tag)?).into();
    let rules = cached(format!("plural|{tag}|cardinal"), || {
        PluralRules::try_new_cardinal_unstable(&Data, prefs).map_err(|e| e.to_string())
    })
    .map_err(|e| range_error(ctx, "no plural data", e))?;
    let names: &UnitsDisplayNames = names.get();
    let pattern = names.get(value.into(), &rules);
    Ok(pattern.interpolate([number]).write_to_string().into_owned())
}

fn category_name(category: PluralCategory) -> &'static str {
    match category {
        PluralCategory::Zero => "zero",
        PluralCategory::One => "one",
        PluralCategory::Two => "two",
        PluralCategory::Few => "few",
        PluralCategory::Many => "many",
        PluralCategory::Other => "other",
    }
}

fn plural_rules(ctx: &Ctx<'_>, tag: &str, ordinal: bool) -> Result<std::rc::Rc<PluralRules>> {
    let prefs = (&locale(ctx, tag)?).into();
    cached(
        format!(
            "plural|{tag}|{}",
            if ordinal { "ordinal" } else { "cardinal" }
        ),
        || {
            if ordinal {
                PluralRules::try_new_ordinal_unstable(&Data, prefs)
            } else {
                PluralRules::try_new_cardinal_unstable(&Data, prefs)
            }
            .map_err(|e| e.to_string())
        },
    )
    .map_err(|e| range_error(ctx, "no plural data", e))
}

/// `native.intl.selectPlural(locale, options, value)`: the plural category of `value` rounded
/// as `options` say.
fn select_plural(
    ctx: Ctx<'_>,
    tag: String,
    options: Object<'_>,
    text: String,
) -> Result<&'static str> {
    let ordinal = options.get::<_, Option<String>>("type")?.as_deref() == Some("ordinal");
    let rules = plural_rules(&ctx, &tag, ordinal)?;
    let Value::Finite(number) = value(&ctx, &text)? else {
        return Ok("other");
    };
    let number = round(number, &digits(&options)?);
    Ok(category_name(rules.category_for(&number)))
}

/// `native.intl.pluralCategories(locale, type)`: the categories the locale's rules use.
fn plural_categories<'js>(ctx: Ctx<'js>, tag: String, kind: String) -> Result<Vec<&'static str>> {
    let rules = plural_rules(&ctx, &tag, kind == "ordinal")?;
    Ok(rules.categories().map(category_name).collect())
}

pub fn install<'js>(ctx: &Ctx<'js>, intl: &Object<'js>) -> Result<()> {
    intl.set("formatNumber", Function::new(ctx.clone(), format_number)?)?;
    intl.set("selectPlural", Function::new(ctx.clone(), select_plural)?)?;
    intl.set(
        "pluralCategories",
        Function::new(ctx.clone(), plural_categories)?,
    )?;
    Ok(())
}
