//! Arrow values as JSON, for the columns a Parquet (or Arrow IPC) table of
//! sessions passes through. Arrow → JSON: null → `null`; booleans, integers
//! and floats → numbers (NaN and infinities, which JSON cannot hold, →
//! `null`); utf8 / large utf8 / utf8 view → strings; binary (all kinds) →
//! standard base64 strings; decimals → exact decimal strings (`"12.50"`);
//! date32/date64 → `"YYYY-MM-DD"` (date64 with a time part → a timestamp);
//! timestamps → ISO 8601 (`"2024-05-01T12:00:00.250"`, with a `Z` when the
//! column has a time zone, since values are UTC instants); time32/time64 →
//! `"HH:MM:SS[.fff]"`; durations → integer counts of the column's unit; lists
//! → arrays; structs → objects; maps → objects when keys are strings, else
//! arrays of `{"key", "value"}`; dictionaries → their values. Intervals,
//! unions and run-end encoded columns have no JSON form ([`supported`]).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowDictionaryKeyType, Date32Type, Date64Type, Decimal32Type, Decimal64Type, Decimal128Type,
    Decimal256Type, DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType,
    DurationSecondType, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrowPrimitiveType, DictionaryArray, GenericListArray, OffsetSizeTrait};
use arrow_buffer::ArrowNativeType;
use arrow_schema::{DataType, TimeUnit};
use serde_json::{Map, Number, Value};
use std::ops::Range;

/// Checks that every value of type `dt` has a JSON form.
pub(super) fn supported(dt: &DataType) -> Result<(), String> {
    match dt {
        DataType::Interval(_)
        | DataType::Union(_, _)
        | DataType::RunEndEncoded(_, _)
        | DataType::ListView(_)
        | DataType::LargeListView(_) => Err(no_json_form(dt)),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => supported(f.data_type()),
        DataType::Struct(fields) => fields.iter().try_for_each(|f| supported(f.data_type())),
        DataType::Dictionary(key, value) => {
            if key.is_dictionary_key_type() {
                supported(value)
            } else {
                Err(no_json_form(dt))
            }
        }
        _ => Ok(()),
    }
}

/// The error for a value of type `dt`, which has no JSON form.
fn no_json_form(dt: &DataType) -> String {
    format!("type {dt} has no JSON form here")
}

/// The string at `i` of a string column (`None` for null or another type).
pub(super) fn string_at(a: &dyn Array, i: usize) -> Option<&str> {
    if a.is_null(i) {
        return None;
    }
    if let Some(s) = a.as_string_opt::<i32>() {
        return Some(s.value(i));
    }
    if let Some(s) = a.as_string_opt::<i64>() {
        return Some(s.value(i));
    }
    a.as_string_view_opt().map(|s| s.value(i))
}

/// Value `i` of a column of a type with one Arrow array type per time unit
/// (timestamps, durations): `S`, `Ms`, `Us` and `Ns` for seconds to
/// nanoseconds. `None` when `a` is not of the type `unit` names.
fn by_unit<S, Ms, Us, Ns>(a: &dyn Array, i: usize, unit: &TimeUnit) -> Option<i64>
where
    S: ArrowPrimitiveType<Native = i64>,
    Ms: ArrowPrimitiveType<Native = i64>,
    Us: ArrowPrimitiveType<Native = i64>,
    Ns: ArrowPrimitiveType<Native = i64>,
{
    match unit {
        TimeUnit::Second => a.as_primitive_opt::<S>().map(|x| x.value(i)),
        TimeUnit::Millisecond => a.as_primitive_opt::<Ms>().map(|x| x.value(i)),
        TimeUnit::Microsecond => a.as_primitive_opt::<Us>().map(|x| x.value(i)),
        TimeUnit::Nanosecond => a.as_primitive_opt::<Ns>().map(|x| x.value(i)),
    }
}

/// Value `i` of `a` as JSON. `omit_nulls` leaves null struct fields out
/// (inside messages, where Arrow's union-of-keys structs put them).
pub(super) fn to_json(a: &dyn Array, i: usize, omit_nulls: bool) -> Result<Value, String> {
    if matches!(a.data_type(), DataType::Null) || a.is_null(i) {
        return Ok(Value::Null);
    }
    let unsupported = || no_json_form(a.data_type());
    macro_rules! prim {
        ($t:ty, $conv:expr) => {{
            let arr = a.as_primitive_opt::<$t>().ok_or_else(unsupported)?;
            #[allow(clippy::redundant_closure_call)]
            Ok($conv(arr.value(i)))
        }};
    }
    macro_rules! decimal {
        ($t:ty) => {{
            let arr = a.as_primitive_opt::<$t>().ok_or_else(unsupported)?;
            Ok(Value::String(arr.value_as_string(i)))
        }};
    }
    macro_rules! dict {
        ($t:ty) => {{ dictionary_value(a.as_dictionary_opt::<$t>().ok_or_else(unsupported)?, i, omit_nulls) }};
    }
    match a.data_type() {
        DataType::Null => Ok(Value::Null),
        DataType::Boolean => Ok(Value::Bool(a.as_boolean_opt().ok_or_else(unsupported)?.value(i))),
        DataType::Int8 => prim!(Int8Type, |v: i8| Value::from(v)),
        DataType::Int16 => prim!(Int16Type, |v: i16| Value::from(v)),
        DataType::Int32 => prim!(Int32Type, |v: i32| Value::from(v)),
        DataType::Int64 => prim!(Int64Type, |v: i64| Value::from(v)),
        DataType::UInt8 => prim!(UInt8Type, |v: u8| Value::from(v)),
        DataType::UInt16 => prim!(UInt16Type, |v: u16| Value::from(v)),
        DataType::UInt32 => prim!(UInt32Type, |v: u32| Value::from(v)),
        DataType::UInt64 => prim!(UInt64Type, |v: u64| Value::from(v)),
        DataType::Float16 => prim!(
            Float16Type,
            |v: <Float16Type as arrow_array::ArrowPrimitiveType>::Native| float(v.to_f64())
        ),
        DataType::Float32 => prim!(Float32Type, |v: f32| float(f64::from(v))),
        DataType::Float64 => prim!(Float64Type, float),
        DataType::Decimal32(_, _) => decimal!(Decimal32Type),
        DataType::Decimal64(_, _) => decimal!(Decimal64Type),
        DataType::Decimal128(_, _) => decimal!(Decimal128Type),
        DataType::Decimal256(_, _) => decimal!(Decimal256Type),
        DataType::Date32 => prim!(Date32Type, |v: i32| Value::String(date(i64::from(v)))),
        DataType::Date64 => prim!(Date64Type, |v: i64| {
            if v.rem_euclid(86_400_000) == 0 {
                Value::String(date(v.div_euclid(86_400_000)))
            } else {
                Value::String(timestamp(v, &TimeUnit::Millisecond, false))
            }
        }),
        DataType::Timestamp(unit, tz) => {
            let z = tz.is_some();
            let v = by_unit::<
                TimestampSecondType,
                TimestampMillisecondType,
                TimestampMicrosecondType,
                TimestampNanosecondType,
            >(a, i, unit)
            .ok_or_else(unsupported)?;
            Ok(Value::String(timestamp(v, unit, z)))
        }
        DataType::Time32(unit) => {
            let v = match unit {
                TimeUnit::Second => {
                    a.as_primitive_opt::<Time32SecondType>().map(|x| i64::from(x.value(i)))
                }
                _ => a.as_primitive_opt::<Time32MillisecondType>().map(|x| i64::from(x.value(i))),
            }
            .ok_or_else(unsupported)?;
            Ok(Value::String(time_of_day(v, unit)))
        }
        DataType::Time64(unit) => {
            let v = match unit {
                TimeUnit::Nanosecond => {
                    a.as_primitive_opt::<Time64NanosecondType>().map(|x| x.value(i))
                }
                _ => a.as_primitive_opt::<Time64MicrosecondType>().map(|x| x.value(i)),
            }
            .ok_or_else(unsupported)?;
            Ok(Value::String(time_of_day(v, unit)))
        }
        DataType::Duration(unit) => {
            let v = by_unit::<
                DurationSecondType,
                DurationMillisecondType,
                DurationMicrosecondType,
                DurationNanosecondType,
            >(a, i, unit)
            .ok_or_else(unsupported)?;
            Ok(Value::from(v))
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            string_at(a, i).map(|s| Value::String(s.to_string())).ok_or_else(unsupported)
        }
        DataType::Binary => {
            Ok(Value::String(base64(a.as_binary_opt::<i32>().ok_or_else(unsupported)?.value(i))))
        }
        DataType::LargeBinary => {
            Ok(Value::String(base64(a.as_binary_opt::<i64>().ok_or_else(unsupported)?.value(i))))
        }
        DataType::BinaryView => {
            Ok(Value::String(base64(a.as_binary_view_opt().ok_or_else(unsupported)?.value(i))))
        }
        DataType::FixedSizeBinary(_) => Ok(Value::String(base64(
            a.as_fixed_size_binary_opt().ok_or_else(unsupported)?.value(i),
        ))),
        DataType::List(_) => {
            list_value(a.as_list_opt::<i32>().ok_or_else(unsupported)?, i, omit_nulls)
        }
        DataType::LargeList(_) => {
            list_value(a.as_list_opt::<i64>().ok_or_else(unsupported)?, i, omit_nulls)
        }
        DataType::FixedSizeList(_, _) => {
            let values = a.as_fixed_size_list_opt().ok_or_else(unsupported)?.value(i);
            elements(values.as_ref(), 0..values.len(), omit_nulls)
        }
        DataType::Struct(_) => {
            let s = a.as_struct_opt().ok_or_else(unsupported)?;
            let mut map = Map::new();
            for (field, column) in s.fields().iter().zip(s.columns()) {
                let v = to_json(column.as_ref(), i, omit_nulls)?;
                if omit_nulls && v.is_null() {
                    continue;
                }
                map.insert(field.name().clone(), v);
            }
            Ok(Value::Object(map))
        }
        DataType::Map(_, _) => {
            let m = a.as_map_opt().ok_or_else(unsupported)?;
            let offsets = m.value_offsets();
            let (start, end) = span(offsets, i)?;
            let (keys, values) = (m.keys(), m.values());
            let string_keys = matches!(
                keys.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
            if string_keys {
                let mut map = Map::new();
                for j in start..end {
                    let k = string_at(keys.as_ref(), j).unwrap_or_default().to_string();
                    map.insert(k, to_json(values.as_ref(), j, omit_nulls)?);
                }
                Ok(Value::Object(map))
            } else {
                (start..end)
                    .map(|j| {
                        let mut entry = Map::new();
                        entry.insert("key".into(), to_json(keys.as_ref(), j, omit_nulls)?);
                        entry.insert("value".into(), to_json(values.as_ref(), j, omit_nulls)?);
                        Ok(Value::Object(entry))
                    })
                    .collect::<Result<Vec<_>, String>>()
                    .map(Value::Array)
            }
        }
        DataType::Dictionary(key, _) => match key.as_ref() {
            DataType::Int8 => dict!(Int8Type),
            DataType::Int16 => dict!(Int16Type),
            DataType::Int32 => dict!(Int32Type),
            DataType::Int64 => dict!(Int64Type),
            DataType::UInt8 => dict!(UInt8Type),
            DataType::UInt16 => dict!(UInt16Type),
            DataType::UInt32 => dict!(UInt32Type),
            DataType::UInt64 => dict!(UInt64Type),
            _ => Err(unsupported()),
        },
        _ => Err(unsupported()),
    }
}

/// The `[start, end)` range of list element `i` from its offsets.
fn span<O: OffsetSizeTrait>(offsets: &[O], i: usize) -> Result<(usize, usize), String> {
    match (offsets.get(i), offsets.get(i + 1)) {
        (Some(s), Some(e)) if s <= e => Ok((s.as_usize(), e.as_usize())),
        _ => Err(format!("list offsets out of range at {i}")),
    }
}

/// Rows `range` of `values` as a JSON array.
fn elements(values: &dyn Array, range: Range<usize>, omit_nulls: bool) -> Result<Value, String> {
    range.map(|j| to_json(values, j, omit_nulls)).collect::<Result<Vec<_>, _>>().map(Value::Array)
}

/// List element `i` as a JSON array.
fn list_value<O: OffsetSizeTrait>(
    list: &GenericListArray<O>,
    i: usize,
    omit_nulls: bool,
) -> Result<Value, String> {
    let (start, end) = span(list.value_offsets(), i)?;
    elements(list.values().as_ref(), start..end, omit_nulls)
}

/// Dictionary entry `i` as the JSON of the value its key points at.
fn dictionary_value<K: ArrowDictionaryKeyType>(
    d: &DictionaryArray<K>,
    i: usize,
    omit_nulls: bool,
) -> Result<Value, String> {
    let values = d.values();
    let key = d.keys().value(i).to_usize().filter(|k| *k < values.len());
    let Some(key) = key else { return Err(format!("dictionary key at {i} out of range")) };
    to_json(values.as_ref(), key, omit_nulls)
}

fn float(v: f64) -> Value {
    Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Days since 1970-01-01 → `(year, month, day)` (proleptic Gregorian; H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn date(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Ticks per second and the digits of a fraction in `unit`.
fn ticks(unit: &TimeUnit) -> (i64, usize) {
    match unit {
        TimeUnit::Second => (1, 0),
        TimeUnit::Millisecond => (1_000, 3),
        TimeUnit::Microsecond => (1_000_000, 6),
        TimeUnit::Nanosecond => (1_000_000_000, 9),
    }
}

fn fraction(sub: i64, digits: usize) -> String {
    if sub == 0 { String::new() } else { format!(".{sub:0digits$}") }
}

fn timestamp(v: i64, unit: &TimeUnit, utc: bool) -> String {
    let (per_sec, digits) = ticks(unit);
    let secs = v.div_euclid(per_sec);
    let sub = v.rem_euclid(per_sec);
    let days = secs.div_euclid(86_400);
    let s = secs.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}{}{}",
        date(days),
        s / 3600,
        s / 60 % 60,
        s % 60,
        fraction(sub, digits),
        if utc { "Z" } else { "" }
    )
}

fn time_of_day(v: i64, unit: &TimeUnit) -> String {
    let (per_sec, digits) = ticks(unit);
    let s = v.div_euclid(per_sec);
    let sub = v.rem_euclid(per_sec);
    format!("{:02}:{:02}:{:02}{}", s / 3600, s / 60 % 60, s % 60, fraction(sub, digits))
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * k) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Float64Array;
    use serde_json::json;

    #[test]
    fn time_and_binary_formats() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(19_844), "2024-05-01");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(
            timestamp(1_714_564_800_250, &TimeUnit::Millisecond, true),
            "2024-05-01T12:00:00.250Z"
        );
        assert_eq!(timestamp(-1, &TimeUnit::Second, false), "1969-12-31T23:59:59");
        assert_eq!(time_of_day(3_723_000_001, &TimeUnit::Microsecond), "01:02:03.000001");
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn arrow_values_convert_generically() {
        use arrow_array::builder::{MapBuilder, StringBuilder as SB, UInt8Builder};
        use arrow_array::types::UInt8Type as U8;
        use arrow_array::{
            BinaryViewArray, DictionaryArray, DurationSecondArray, FixedSizeListArray,
            Float16Array, Int32Array, LargeListArray, LargeStringArray, NullArray, StringViewArray,
            Time32SecondArray, UInt64Array,
        };
        let one = |a: &dyn Array, i: usize| to_json(a, i, false).unwrap();
        assert_eq!(one(&NullArray::new(2), 1), Value::Null);
        assert_eq!(one(&UInt64Array::from(vec![u64::MAX]), 0), json!(u64::MAX));
        assert_eq!(one(&Float64Array::from(vec![f64::NAN]), 0), Value::Null);
        let half = Float16Array::from(vec![Some(
            <Float16Type as arrow_array::ArrowPrimitiveType>::Native::from_f32(1.5),
        )]);
        assert_eq!(one(&half, 0), json!(1.5));
        assert_eq!(one(&Time32SecondArray::from(vec![3723]), 0), json!("01:02:03"));
        assert_eq!(one(&DurationSecondArray::from(vec![-5]), 0), json!(-5));
        assert_eq!(one(&LargeStringArray::from(vec!["big"]), 0), json!("big"));
        assert_eq!(one(&StringViewArray::from(vec!["view"]), 0), json!("view"));
        assert_eq!(one(&BinaryViewArray::from(vec![&b"fo"[..]]), 0), json!("Zm8="));
        let large = LargeListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
        ]);
        assert_eq!(one(&large, 0), json!([1, null]));
        assert_eq!(one(&large, 1), Value::Null);
        let fixed = FixedSizeListArray::from_iter_primitive::<Int32Type, _, _>(
            vec![Some(vec![Some(1), Some(2)]), Some(vec![Some(3), Some(4)])],
            2,
        );
        assert_eq!(one(&fixed, 1), json!([3, 4]));
        let dict: DictionaryArray<U8> = vec!["a", "b", "a"].into_iter().collect();
        assert_eq!(one(&dict, 2), json!("a"));
        let mut map = MapBuilder::new(None, UInt8Builder::new(), SB::new());
        map.keys().append_value(7);
        map.values().append_value("seven");
        map.append(true).unwrap();
        assert_eq!(one(&map.finish(), 0), json!([{"key": 7, "value": "seven"}]));
        let ints = Int32Array::from(vec![1]);
        assert_eq!(one(&ints, 0), json!(1));
    }
}
