//! The JSON boundary: every JSON text a guest hands the host (a tool call's input, a state value,
//! the result, a `text()` value) is checked here before it is parsed. Two things an honest engine
//! can send are the script's doing, not the engine's: nesting deeper than [`MAX_DEPTH`], and a
//! `\uD800`-style escape of a lone surrogate, which is JSON syntax but not Unicode text. The check
//! walks the text once with a counter instead of recursion, so no input, however deep, can
//! exhaust the host's stack; the parse that follows recurses at most [`MAX_DEPTH`] levels.
//! Numbers keep every bit (`float_roundtrip`).

use serde_json::Value;

/// Deepest nesting of arrays and objects accepted at the boundary.
pub const MAX_DEPTH: usize = 512;

/// Why a JSON text was refused.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// Nested deeper than [`MAX_DEPTH`] (the script's doing).
    #[error("it nests deeper than the {MAX_DEPTH} levels allowed (at least {depth})")]
    TooDeep {
        /// The depth reached when the check stopped.
        depth: usize,
    },
    /// A `\u` escape of a surrogate without its pair (the script's doing).
    #[error(
        "it holds a lone surrogate (\\u{code:04x}) at byte {offset}, which is not Unicode text"
    )]
    LoneSurrogate {
        /// The surrogate.
        code: u16,
        /// Where its escape starts.
        offset: usize,
    },
    /// Not JSON at all (an engine broke its contract).
    #[error("{0}")]
    Syntax(#[from] serde_json::Error),
}

impl JsonError {
    /// Whether the script caused it (too deep, a lone surrogate) rather than the engine.
    pub fn is_script_error(&self) -> bool {
        !matches!(self, JsonError::Syntax(_))
    }
}

fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    let digits = bytes.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u16::from_str_radix(text, 16).ok()
}

/// Checks nesting depth and surrogate escapes without parsing (and without recursion). Syntax
/// is left to the parser.
pub fn check(text: &str) -> Result<(), JsonError> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if in_string {
            match byte {
                b'"' => in_string = false,
                b'\\' if bytes.get(at + 1) == Some(&b'u') => {
                    if let Some(code) = hex4(bytes, at + 2) {
                        let lone = |code| JsonError::LoneSurrogate { code, offset: at };
                        if (0xDC00..=0xDFFF).contains(&code) {
                            return Err(lone(code));
                        }
                        if (0xD800..=0xDBFF).contains(&code) {
                            let paired = bytes.get(at + 6..at + 8) == Some(b"\\u")
                                && hex4(bytes, at + 8)
                                    .is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
                            if !paired {
                                return Err(lone(code));
                            }
                            at += 12;
                            continue;
                        }
                    }
                    at += 6;
                    continue;
                }
                b'\\' => {
                    at += 2;
                    continue;
                }
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(JsonError::TooDeep { depth });
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        at += 1;
    }
    Ok(())
}

/// Parses a JSON text from a guest, after [`check`].
pub fn parse(text: &str) -> Result<Value, JsonError> {
    parse_as(text)
}

/// Parses a JSON text from a guest into `T`, after [`check`].
pub fn parse_as<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    check(text)?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    // The check bounded the depth; serde_json's own limit (128) is below the boundary's.
    deserializer.disable_recursion_limit();
    let value = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn nesting_up_to_the_limit_parses_and_deeper_is_refused_without_recursion() {
        assert!(parse(&nested(MAX_DEPTH)).is_ok());
        let object = format!("{}1{}", "{\"a\":".repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
        assert!(parse(&object).is_ok());
        let refused = parse(&nested(MAX_DEPTH + 1)).expect_err("too deep");
        assert!(refused.is_script_error());
        assert!(matches!(refused, JsonError::TooDeep { depth } if depth == MAX_DEPTH + 1));
        // A million levels: refused by a counter, the stack never grows with the input.
        let huge = parse(&nested(1_000_000)).expect_err("too deep");
        assert!(matches!(huge, JsonError::TooDeep { .. }));
        // Brackets inside strings do not count.
        let text = format!("[\"{}\"]", "[".repeat(10_000));
        assert!(parse(&text).is_ok());
    }

    #[test]
    fn lone_surrogates_are_the_scripts_error_and_pairs_are_text() {
        assert_eq!(
            parse(r#""\ud83d\ude00""#).expect("a pair"),
            Value::from("😀")
        );
        for lone in [
            r#""\ud800""#,
            r#""\udc00""#,
            r#"["x\ud800y"]"#,
            r#""\ud800\u0041""#,
        ] {
            let refused = parse(lone).expect_err(lone);
            assert!(
                matches!(refused, JsonError::LoneSurrogate { .. }),
                "{lone}: {refused}"
            );
            assert!(refused.is_script_error());
        }
        assert!(
            parse(r#""\\ud800""#).is_ok(),
            "an escaped backslash is no escape"
        );
        let syntax = parse("[1,").expect_err("syntax");
        assert!(!syntax.is_script_error());
        assert!(parse("1 2").is_err(), "trailing data");
    }

    #[test]
    fn doubles_cross_bit_for_bit() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut values = vec![
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            5e-324,
            f64::MAX,
            -0.1,
            9_007_199_254_740_993.0,
        ];
        for _ in 0..10_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = f64::from_bits(state);
            if value.is_finite() {
                values.push(value);
            }
        }
        for value in values {
            let text = serde_json::to_string(&value).expect("finite");
            let back: f64 = parse_as(&text).expect("parses");
            assert_eq!(back.to_bits(), value.to_bits(), "{text}");
        }
        for integer in [(1u64 << 53) - 1, 1 << 53, (1 << 53) + 1] {
            let back = parse(&integer.to_string()).expect("integer");
            assert_eq!(back.as_u64(), Some(integer));
        }
    }

    /// Arbitrary JSON values of a few levels, for the property below.
    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".*".prop_map(Value::from),
        ];
        leaf.prop_recursive(8, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::from),
                proptest::collection::btree_map(".*", inner, 0..8)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any text: checked and parsed without a panic; what serde_json reads (depth within the
        /// boundary, no lone surrogate) the boundary reads alike.
        #[test]
        fn any_text_is_judged_like_serde_json_within_the_boundary(text in ".{0,200}") {
            let ours = parse(&text);
            let theirs: Result<Value, _> = serde_json::from_str(&text);
            if let (Ok(ours), Ok(theirs)) = (&ours, &theirs) {
                proptest::prop_assert_eq!(ours, theirs);
            }
            if theirs.is_err() {
                proptest::prop_assert!(ours.is_err());
            }
        }

        /// Every value a well-behaved engine sends comes back the same.
        #[test]
        fn values_round_trip(value in json_value()) {
            let text = value.to_string();
            proptest::prop_assert_eq!(parse(&text).expect("valid"), value);
        }
    }
}
