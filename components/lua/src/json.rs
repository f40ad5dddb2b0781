//! Lua values to JSON text and back, with the rules a script can predict:
//!
//! - `nil` is no value (a result of `nil` is no result; `json.encode(nil)` is `null`);
//!   [`Markers::null`] (`json.null`) is `null`.
//! - Booleans are booleans; integers stay integers and floats stay floats (`1.0` is written
//!   `1.0`); NaN and the infinities are `null`, as `JSON.stringify` writes them.
//! - A string must be UTF-8 text. A lone surrogate written with Lua's `"\u{D800}"` is sent as the
//!   escape `\ud800`, which the host refuses as the script's doing (as it does for JavaScript).
//! - A table marked by `json.array` (every array decoded from JSON is) is an array: its integer
//!   keys are positions and a missing position is `null`. Any other table whose keys are exactly
//!   `1..n` (n >= 1) is an array too. Every other table is an object, an empty one included: its
//!   keys must be strings or integers (written in decimal), in byte order of the key text.
//! - Metatables are ignored (no `__pairs`, no `__index`), except the two markers.
//! - Nesting deeper than [`MAX_DEPTH`] and a table that contains itself are errors.
//!
//! JSON `null` decodes to `json.null` (so an array keeps its positions and an object its keys),
//! numbers without a fraction or exponent to integers when they fit in 64 bits, arrays to tables
//! marked as arrays.

use std::collections::HashSet;
use std::fmt::{self, Write};

use omnilua::{Lua, LuaError, Table, Value};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Deepest nesting of arrays and objects, the host's own cap (`host/src/json.rs`).
pub const MAX_DEPTH: usize = 512;

/// The longest text [`encode`] writes, whatever its limit. A `String` doubles its buffer as it
/// grows, and a buffer of 2 GiB is more than one allocation can be on wasm32: asking for one
/// aborts the instance instead of failing where the host's memory limit would see it. Stopping
/// at 512 MiB keeps every buffer at or under 1 GiB.
pub const LONGEST_TEXT_BYTES: usize = 1 << 29;

/// The two tables the JSON rules recognise by identity.
#[derive(Clone)]
pub struct Markers {
    /// `json.null`.
    pub null: Table,
    /// The metatable `json.array` puts on a table.
    pub array: Table,
    null_pointer: usize,
    array_pointer: usize,
}

impl Markers {
    /// Creates `json.null` (with a `__tostring` of `null`) and the array metatable.
    pub fn new(lua: &Lua) -> omnilua::Result<Markers> {
        let null = lua.create_table()?;
        let null_meta = lua.create_table()?;
        null_meta.raw_set("__name", "json.null")?;
        null_meta.raw_set("__tostring", lua.create_function(|_, _: Value| Ok("null"))?)?;
        null_meta.raw_set("__metatable", "json.null")?;
        null_meta.raw_set(
            "__newindex",
            lua.create_function(|_, _: omnilua::Variadic<Value>| -> omnilua::Result<()> {
                Err(lua_error("json.null cannot be changed"))
            })?,
        )?;
        null.set_metatable(Some(&null_meta))?;
        let array = lua.create_table()?;
        array.raw_set("__name", "json.array")?;
        Ok(Markers {
            null_pointer: null.to_pointer()?,
            array_pointer: array.to_pointer()?,
            null,
            array,
        })
    }

    fn is_null(&self, table: &Table) -> omnilua::Result<bool> {
        Ok(table.to_pointer()? == self.null_pointer)
    }

    fn is_array(&self, table: &Table) -> omnilua::Result<bool> {
        Ok(match table.get_metatable()? {
            Some(meta) => meta.to_pointer()? == self.array_pointer,
            None => false,
        })
    }
}

/// Why a value could not be written as JSON.
#[derive(Debug)]
pub enum EncodeError {
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The text would pass `limit` bytes.
    TooLarge {
        /// The limit it would pass.
        limit: usize,
    },
    /// Anything else (a function, a cycle, a bad key, text that is not UTF-8).
    Invalid(String),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::TooDeep => write!(f, "it nests deeper than {MAX_DEPTH} levels"),
            EncodeError::TooLarge { limit } => write!(f, "it is over {limit} bytes"),
            EncodeError::Invalid(why) => f.write_str(why),
        }
    }
}

impl From<omnilua::Error> for EncodeError {
    fn from(error: omnilua::Error) -> Self {
        EncodeError::Invalid(error.to_string())
    }
}

/// A Lua runtime error with `message`.
pub fn lua_error(message: impl fmt::Display) -> omnilua::Error {
    LuaError::runtime(format_args!("{message}")).into()
}

/// Writes `value` as JSON text of at most `limit` bytes (and [`LONGEST_TEXT_BYTES`]).
pub fn encode(value: &Value, markers: &Markers, limit: usize) -> Result<String, EncodeError> {
    let mut encoder = Encoder {
        markers,
        out: String::new(),
        limit: limit.min(LONGEST_TEXT_BYTES),
        path: HashSet::new(),
    };
    encoder.value(value, 0)?;
    Ok(encoder.out)
}

struct Encoder<'a> {
    markers: &'a Markers,
    out: String,
    limit: usize,
    /// The tables being written, outermost first: meeting one again is a cycle.
    path: HashSet<usize>,
}

fn invalid(why: impl Into<String>) -> EncodeError {
    EncodeError::Invalid(why.into())
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "a boolean",
        Value::Integer(_) | Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Table(_) => "a table",
        Value::Function(_) => "a function",
        Value::UserData(_) | Value::LightUserData(_) => "a userdata",
        Value::Thread(_) => "a coroutine",
    }
}

/// An object key: its text, and the integer it came from (for the duplicate check).
enum Key {
    Text(Vec<u8>),
    Integer(i64),
}

impl Encoder<'_> {
    fn check_size(&self) -> Result<(), EncodeError> {
        if self.out.len() > self.limit {
            return Err(EncodeError::TooLarge { limit: self.limit });
        }
        Ok(())
    }

    fn value(&mut self, value: &Value, depth: usize) -> Result<(), EncodeError> {
        match value {
            Value::Nil => self.out.push_str("null"),
            Value::Boolean(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Integer(i) => {
                let _ = write!(self.out, "{i}");
            }
            Value::Number(n) => match serde_json::Number::from_f64(*n) {
                Some(number) => {
                    let _ = write!(self.out, "{number}");
                }
                None => self.out.push_str("null"),
            },
            Value::String(s) => self.string(&s.as_bytes()?)?,
            Value::Table(t) => self.table(t, depth)?,
            other => {
                return Err(invalid(format!(
                    "{} cannot be written as JSON",
                    type_name(other)
                )));
            }
        }
        self.check_size()
    }

    fn table(&mut self, table: &Table, depth: usize) -> Result<(), EncodeError> {
        if self.markers.is_null(table)? {
            self.out.push_str("null");
            return Ok(());
        }
        if depth >= MAX_DEPTH {
            return Err(EncodeError::TooDeep);
        }
        let pointer = table.to_pointer()?;
        if !self.path.insert(pointer) {
            return Err(invalid(
                "a table that contains itself cannot be written as JSON",
            ));
        }
        let pairs = table.raw_pairs()?;
        let marked = self.markers.is_array(table)?;
        if marked || is_sequence(&pairs) {
            self.array(&pairs, marked, depth)?;
        } else {
            self.object(pairs, depth)?;
        }
        self.path.remove(&pointer);
        Ok(())
    }

    fn array(
        &mut self,
        pairs: &[(Value, Value)],
        marked: bool,
        depth: usize,
    ) -> Result<(), EncodeError> {
        let mut length = 0i64;
        for (key, _) in pairs {
            match key {
                Value::Integer(i) if *i >= 1 => length = length.max(*i),
                other if marked => {
                    return Err(invalid(format!(
                        "a json.array table has a key that is not a position ({})",
                        describe_key(other)
                    )));
                }
                _ => {}
            }
        }
        // Every position takes at least one byte and a comma: a length the byte limit cannot
        // hold fails here, before anything is written for it.
        let room = (self.limit as u64).saturating_sub(self.out.len() as u64);
        if (length as u64).saturating_mul(2) > room {
            return Err(EncodeError::TooLarge { limit: self.limit });
        }
        let mut items: Vec<(i64, &Value)> = pairs
            .iter()
            .filter_map(|(key, value)| match key {
                Value::Integer(i) if *i >= 1 => Some((*i, value)),
                _ => None,
            })
            .collect();
        items.sort_unstable_by_key(|(i, _)| *i);
        let mut items = items.into_iter().peekable();
        self.out.push('[');
        for position in 1..=length {
            if position > 1 {
                self.out.push(',');
            }
            match items.next_if(|(i, _)| *i == position) {
                Some((_, value)) => self.value(value, depth + 1)?,
                // A missing position of a marked array.
                None => {
                    self.out.push_str("null");
                    self.check_size()?;
                }
            }
        }
        self.out.push(']');
        Ok(())
    }

    fn object(&mut self, pairs: Vec<(Value, Value)>, depth: usize) -> Result<(), EncodeError> {
        let mut entries = Vec::with_capacity(pairs.len());
        for (key, value) in pairs {
            let key = match key {
                Value::String(s) => Key::Text(s.as_bytes()?),
                Value::Integer(i) => Key::Integer(i),
                other => {
                    return Err(invalid(format!(
                        "a table key that is {} cannot be written as JSON (keys must be strings \
                         or integers)",
                        describe_key(&other)
                    )));
                }
            };
            let text = match &key {
                Key::Text(bytes) => bytes.clone(),
                Key::Integer(i) => i.to_string().into_bytes(),
            };
            entries.push((text, key, value));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for pair in entries.windows(2) {
            if pair[0].0 == pair[1].0 {
                let text = String::from_utf8_lossy(&pair[0].0);
                return Err(invalid(format!(
                    "the key \"{text}\" is in the table both as a string and as an integer"
                )));
            }
        }
        self.out.push('{');
        for (index, (text, key, value)) in entries.iter().enumerate() {
            if index > 0 {
                self.out.push(',');
            }
            match key {
                Key::Text(_) => self.string(text)?,
                Key::Integer(i) => {
                    let _ = write!(self.out, "\"{i}\"");
                }
            }
            self.out.push(':');
            self.value(value, depth + 1)?;
        }
        self.out.push('}');
        Ok(())
    }

    /// Writes `bytes` as a JSON string. Lua strings are bytes: they must be UTF-8, except that
    /// an encoded surrogate (what `"\u{D800}"` makes) is written as its `\u` escape.
    fn string(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        if bytes.len() > self.limit {
            return Err(EncodeError::TooLarge { limit: self.limit });
        }
        self.out.reserve(bytes.len() + 2);
        self.out.push('"');
        let mut rest = bytes;
        while !rest.is_empty() {
            let (valid, after) = match std::str::from_utf8(rest) {
                Ok(text) => (text, &rest[rest.len()..]),
                Err(error) => {
                    let (good, bad) = rest.split_at(error.valid_up_to());
                    // The prefix was just checked.
                    (std::str::from_utf8(good).unwrap_or_default(), bad)
                }
            };
            self.escape(valid);
            rest = after;
            if rest.is_empty() {
                break;
            }
            match surrogate(rest) {
                Some(code) => {
                    let _ = write!(self.out, "\\u{code:04x}");
                    rest = &rest[3..];
                }
                None => {
                    let offset = bytes.len() - rest.len();
                    return Err(invalid(format!(
                        "a string that is not UTF-8 text (byte 0x{:02x} at offset {offset}) \
                         cannot be written as JSON",
                        rest[0]
                    )));
                }
            }
        }
        self.out.push('"');
        Ok(())
    }

    fn escape(&mut self, text: &str) {
        for c in text.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(self.out, "\\u{:04x}", c as u32);
                }
                c => self.out.push(c),
            }
        }
    }
}

/// A surrogate encoded as UTF-8 would be (`ED A0..BF 80..BF`).
fn surrogate(bytes: &[u8]) -> Option<u32> {
    match bytes {
        [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => {
            Some(0xD000 | (u32::from(b1 & 0x3F) << 6) | u32::from(b2 & 0x3F))
        }
        _ => None,
    }
}

fn describe_key(key: &Value) -> String {
    match key {
        Value::Number(n) => format!("the number {n}"),
        Value::Integer(i) => format!("the integer {i}"),
        Value::String(_) => "a string".to_string(),
        other => type_name(other).to_string(),
    }
}

/// Whether the keys are exactly `1..n` for some n >= 1.
fn is_sequence(pairs: &[(Value, Value)]) -> bool {
    let n = pairs.len() as i64;
    n > 0
        && pairs
            .iter()
            .all(|(key, _)| matches!(key, Value::Integer(i) if (1..=n).contains(i)))
}

/// Reads JSON `text` into Lua values.
pub fn decode(lua: &Lua, markers: &Markers, text: &str) -> omnilua::Result<Value> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    // The seed counts depth itself (MAX_DEPTH), so serde_json's own limit of 128 goes.
    deserializer.disable_recursion_limit();
    let value = Seed {
        lua,
        markers,
        depth: 0,
    }
    .deserialize(&mut deserializer)
    .map_err(|e| lua_error(format!("invalid JSON: {e}")))?;
    deserializer
        .end()
        .map_err(|e| lua_error(format!("invalid JSON: {e}")))?;
    Ok(value)
}

struct Seed<'a> {
    lua: &'a Lua,
    markers: &'a Markers,
    depth: usize,
}

impl<'a> Seed<'a> {
    fn nested<E: de::Error>(&self) -> Result<Seed<'a>, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(format_args!(
                "it nests deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(Seed {
            lua: self.lua,
            markers: self.markers,
            depth: self.depth + 1,
        })
    }
}

fn de_error<E: de::Error>(error: omnilua::Error) -> E {
    E::custom(error)
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Table(self.markers.null.clone()))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Boolean(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Integer(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => Value::Integer(i),
            Err(_) => Value::Number(v as f64),
        })
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.lua
            .create_string(v)
            .map(Value::String)
            .map_err(de_error)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let table = self.lua.create_table().map_err(de_error)?;
        table
            .set_metatable(Some(&self.markers.array))
            .map_err(de_error)?;
        let mut index = 0i64;
        while let Some(value) = seq.next_element_seed(self.nested()?)? {
            index += 1;
            table.raw_set(index, value).map_err(de_error)?;
        }
        Ok(Value::Table(table))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let table = self.lua.create_table().map_err(de_error)?;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let value = map.next_value_seed(self.nested()?)?;
            table.raw_set(key.as_ref(), value).map_err(de_error)?;
        }
        Ok(Value::Table(table))
    }
}
