//! Bakes the Unicode data `Intl` needs into `$OUT_DIR/intl_data`, for the locales in
//! [`LOCALES`] only.
//!
//! ICU4X's data crates hold CLDR's data for every locale (tens of megabytes); the engine keeps
//! what [`LOCALES`] and their regional variants need, deduplicated against their parents, so a
//! locale costs tens of kilobytes. The export runs natively, reads nothing but those crates, and
//! is redone only when this script or the crates change.

extern crate alloc;

use std::path::PathBuf;

use icu_provider_export::baked_exporter::{BakedExporter, Options};
use icu_provider_export::prelude::*;

/// The locales `Intl` has data for, each with its regional variants (`en` brings `en-GB`,
/// `en-IN`, ...): English and the most used languages on the web. Any other locale a script
/// asks for resolves to the default, `en-US`, as the spec allows.
const LOCALES: &[&str] = &[
    "en", "zh", "es", "hi", "ar", "fr", "pt", "ru", "de", "ja", "ko", "it", "id", "tr", "bn",
];

/// The provider the export reads: ICU4X's full compiled data, marker by marker.
mod source {
    use icu_calendar_data::*;
    use icu_collator_data::*;
    use icu_datetime_data::*;
    use icu_decimal_data::*;
    use icu_experimental_data::*;
    use icu_list_data::*;
    use icu_locale_data::*;
    use icu_locale_fallback_data::*;
    use icu_normalizer_data::*;
    use icu_plurals_data::*;
    use icu_provider::prelude::*;
    use icu_segmenter_data::*;
    use icu_time_data::*;

    pub struct Source;
    icu_decimal_data::make_provider!(Source);

    macro_rules! markers {
        (
            locale { $($per_locale:ident => $locale_marker:path,)* }
            singleton { $($whole:ident => $singleton_marker:path,)* }
        ) => {
            $( $per_locale!(Source, ITER); )*
            $(
                $whole!(Source);
                // The data crates' own `ITER` form of a singleton does not compile (2.4.0), so
                // a singleton's one identifier is listed here.
                impl icu_provider::IterableDataProvider<$singleton_marker> for Source {
                    fn iter_ids(
                        &self,
                    ) -> Result<std::collections::BTreeSet<DataIdentifierCow<'static>>, DataError>
                    {
                        Ok([Default::default()].into_iter().collect())
                    }
                }
            )*
            icu_provider::export::make_exportable_provider!(
                Source,
                [$($locale_marker,)* $($singleton_marker,)*]
            );
            pub const MARKERS: &[DataMarkerInfo] = &[
                $(<$locale_marker as DataMarker>::INFO,)*
                $(<$singleton_marker as DataMarker>::INFO,)*
            ];
        };
    }

    include!("build/markers.rs");
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/markers.rs");
    println!("cargo:rustc-env=FORGE_INTL_LOCALES={}", LOCALES.join(","));
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("intl_data");
    let families = LOCALES.iter().map(|tag| {
        DataLocaleFamily::with_descendants(tag.parse().expect("LOCALES are valid locale tags"))
    });
    let provider = source::Source;
    let fallbacker = icu::locale::fallback::LocaleFallbacker::try_new_unstable(&provider)
        .expect("the fallback data is among the markers");
    let mut options = Options::default();
    options.overwrite = true;
    options.use_separate_crates = false;
    let exporter = BakedExporter::new(out, options).expect("OUT_DIR is writable");
    ExportDriver::new(families, DeduplicationStrategy::Maximal.into(), fallbacker)
        .with_markers(source::MARKERS.iter().copied())
        .export(&provider, exporter)
        .expect("ICU4X's data exports");
}
