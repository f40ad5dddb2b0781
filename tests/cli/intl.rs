//! `Intl` in the JavaScript engine (issue 40): ICU4X's formatters over CLDR's data for the
//! languages the engine carries, IANA time zones from jiff's database, and the locale methods
//! of `Number`, `Date` and `String` through them. The expected strings are CLDR's (as Node and
//! browsers print them), so a test fails if the data or the option handling drifts.

use serde_json::{Value, json};

use crate::util::{NO_ARGS, Sandbox};

#[track_caller]
fn value_of(sandbox: &Sandbox, source: &str) -> Value {
    sandbox.run_js(source, NO_ARGS).assert_succeeded()["value"].clone()
}

#[test]
fn numbers_format_by_locale_style_and_digits() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const f = (l, o, v) => new Intl.NumberFormat(l, o).format(v);\n\
         return [\n\
           f('en-US', {}, 1234567.891),\n\
           f('de-DE', {style: 'currency', currency: 'EUR'}, 1234.5),\n\
           f('en-US', {style: 'currency', currency: 'USD'}, -1234.5),\n\
           f('ja-JP', {style: 'currency', currency: 'JPY'}, 5000),\n\
           f('en', {style: 'percent'}, 0.256),\n\
           f('es', {style: 'percent', maximumFractionDigits: 1}, 0.4567),\n\
           f('en', {notation: 'compact'}, 1234567),\n\
           f('en', {notation: 'compact', compactDisplay: 'long'}, 1234567),\n\
           f('zh-CN', {notation: 'compact'}, 123456789),\n\
           f('en', {style: 'unit', unit: 'kilometer', unitDisplay: 'long'}, 12),\n\
           f('ru', {style: 'unit', unit: 'kilogram', unitDisplay: 'long'}, 5),\n\
           f('en', {minimumFractionDigits: 2}, 3),\n\
           f('en', {maximumSignificantDigits: 2}, 1234),\n\
           f('en', {roundingMode: 'floor', maximumFractionDigits: 0}, -1.5),\n\
           f('en', {signDisplay: 'always'}, 5),\n\
           (1234.5).toLocaleString(),\n\
           (1234.5).toLocaleString('ar-EG'),\n\
           12345678901234567890n.toLocaleString('en-IN'),\n\
         ];",
    );
    assert_eq!(
        value,
        json!([
            "1,234,567.891",
            "1.234,50\u{a0}€",
            "-$1,234.50",
            "￥5,000",
            "26%",
            "45,7\u{a0}%",
            "1.2M",
            "1.2 million",
            "1.2亿",
            "12 kilometers",
            "5 килограмм",
            "3.00",
            "1,200",
            "-2",
            "+5",
            "1,234.5",
            "١٬٢٣٤٫٥",
            "1,23,45,67,89,01,23,45,67,890",
        ])
    );
}

#[test]
fn format_to_parts_types_each_piece() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const types = (parts) => parts.map((p) => p.type + ':' + p.value);\n\
         return {\n\
           number: types(new Intl.NumberFormat('en').formatToParts(-1234.56)),\n\
           currency: types(new Intl.NumberFormat('en', {style: 'currency', currency: 'USD'}).formatToParts(9.5)),\n\
           date: types(new Intl.DateTimeFormat('en-US', {month: 'short', day: 'numeric'}).formatToParts(0)),\n\
           list: types(new Intl.ListFormat('en').formatToParts(['a', 'b'])),\n\
         };",
    );
    assert_eq!(
        value,
        json!({
            "number": ["minusSign:-", "integer:1", "group:,", "integer:234", "decimal:.", "fraction:56"],
            "currency": ["currency:$", "integer:9", "decimal:.", "fraction:50"],
            "date": ["month:Jan", "literal: ", "day:1"],
            "list": ["element:a", "literal: and ", "element:b"],
        })
    );
}

#[test]
fn dates_format_in_iana_time_zones_with_daylight_saving() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const ny = new Intl.DateTimeFormat('en-US', {timeZone: 'America/New_York', hour: 'numeric', minute: '2-digit', timeZoneName: 'short'});\n\
         const at = Date.UTC(2026, 11, 4, 12, 30);\n\
         return {\n\
           summer: ny.format(Date.UTC(2026, 6, 1, 16, 0)),\n\
           winter: ny.format(Date.UTC(2026, 0, 1, 16, 0)),\n\
           paris: new Intl.DateTimeFormat('fr-FR', {timeZone: 'Europe/Paris', dateStyle: 'full'}).format(Date.UTC(2026, 11, 4, 23, 30)),\n\
           tokyo: new Date(at).toLocaleString('en-US', {timeZone: 'Asia/Tokyo'}),\n\
           utc: new Date(at).toLocaleDateString(),\n\
           time: new Date(at).toLocaleTimeString('en-GB'),\n\
           zh: new Intl.DateTimeFormat('zh-CN', {dateStyle: 'long'}).format(0),\n\
           zone: new Intl.DateTimeFormat('en', {timeZone: 'asia/kolkata'}).resolvedOptions().timeZone,\n\
           fallback: new Intl.DateTimeFormat().resolvedOptions().timeZone,\n\
           invalid: new Date(NaN).toLocaleString(),\n\
         };",
    );
    assert_eq!(
        value,
        json!({
            "summer": "12:00\u{202f}PM EDT",
            "winter": "11:00\u{202f}AM EST",
            "paris": "samedi 5 décembre 2026",
            "tokyo": "12/4/2026, 9:30:00\u{202f}PM",
            "utc": "12/4/2026",
            "time": "12:30:00",
            "zh": "1970年1月1日",
            "zone": "Asia/Kolkata",
            "fallback": "UTC",
            "invalid": "Invalid Date",
        })
    );
}

#[test]
fn collation_plurals_lists_relative_times_and_segments() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "return {\n\
           german: ['z', 'ä', 'a', 'b'].sort(new Intl.Collator('de').compare),\n\
           numeric: ['item10', 'item2'].sort(new Intl.Collator('en', {numeric: true}).compare),\n\
           base: new Intl.Collator('en', {sensitivity: 'base'}).compare('a', 'Á'),\n\
           localeCompare: ['a'.localeCompare('B'), 'résumé'.localeCompare('resume', 'fr', {sensitivity: 'base'})],\n\
           arabic: [0, 1, 2, 5, 11, 100].map((n) => new Intl.PluralRules('ar').select(n)),\n\
           ordinal: [1, 2, 3, 4, 11, 21].map((n) => new Intl.PluralRules('en-US', {type: 'ordinal'}).select(n)),\n\
           and: new Intl.ListFormat('de').format(['Äpfel', 'Birnen', 'Kirschen']),\n\
           or: new Intl.ListFormat('es', {type: 'disjunction'}).format(['a', 'b', 'c']),\n\
           yesterday: new Intl.RelativeTimeFormat('en', {numeric: 'auto'}).format(-1, 'day'),\n\
           hours: new Intl.RelativeTimeFormat('fr').format(3, 'hours'),\n\
           words: [...new Intl.Segmenter('en', {granularity: 'word'}).segment('Hello, world!')].filter((s) => s.isWordLike).map((s) => s.segment),\n\
           graphemes: [...new Intl.Segmenter().segment('👨‍👩‍👧e\\u0301')].length,\n\
           sentences: [...new Intl.Segmenter('en', {granularity: 'sentence'}).segment('Hi there. How are you?')].map((s) => s.segment),\n\
         };",
    );
    assert_eq!(
        value,
        json!({
            "german": ["a", "ä", "b", "z"],
            "numeric": ["item2", "item10"],
            "base": 0,
            "localeCompare": [-1, 0],
            "arabic": ["zero", "one", "two", "few", "many", "other"],
            "ordinal": ["one", "two", "few", "other", "other", "one"],
            "and": "Äpfel, Birnen und Kirschen",
            "or": "a, b o c",
            "yesterday": "yesterday",
            "hours": "dans 3 heures",
            "words": ["Hello", "world"],
            "graphemes": 2,
            "sentences": ["Hi there. ", "How are you?"],
        })
    );
}

#[test]
fn locales_resolve_to_those_with_data_and_bad_input_throws_as_the_spec_says() {
    let sandbox = Sandbox::new();
    let value = value_of(
        &sandbox,
        "const error = (f) => { try { f(); return null; } catch (e) { return e.constructor.name; } };\n\
         return {\n\
           supported: Intl.NumberFormat.supportedLocalesOf(['ja-JP', 'xx', 'pt-BR', 'sw']),\n\
           canonical: Intl.getCanonicalLocales(['EN-us', 'zh-hant-tw']),\n\
           fallback: new Intl.NumberFormat('sw').resolvedOptions().locale,\n\
           badTag: error(() => new Intl.NumberFormat('en-')),\n\
           badZone: error(() => new Intl.DateTimeFormat('en', {timeZone: 'Mars/Olympus'})),\n\
           noCurrency: error(() => new Intl.NumberFormat('en', {style: 'currency'})),\n\
           badUnit: error(() => new Intl.NumberFormat('en', {style: 'unit', unit: 'parsec'})),\n\
           badDigits: error(() => new Intl.NumberFormat('en', {minimumFractionDigits: 3, maximumFractionDigits: 1})),\n\
           styleAndField: error(() => new Intl.DateTimeFormat('en', {dateStyle: 'short', year: 'numeric'})),\n\
           badDate: error(() => new Intl.DateTimeFormat().format(NaN)),\n\
           native: String(Number.prototype.toLocaleString).includes('[native code]'),\n\
         };",
    );
    assert_eq!(
        value,
        json!({
            "supported": ["ja-JP", "pt-BR"],
            "canonical": ["en-US", "zh-Hant-TW"],
            "fallback": "en-US",
            "badTag": "RangeError",
            "badZone": "RangeError",
            "noCurrency": "TypeError",
            "badUnit": "RangeError",
            "badDigits": "RangeError",
            "styleAndField": "TypeError",
            "badDate": "RangeError",
            "native": true,
        })
    );
}
