//! Arrow columns of reference values and back, for `reference_model.rs`.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::*;
use arrow_schema::{DataType, TimeUnit};

use super::model::V;

/// The Arrow type of a column of `ty`: the runtime's own mapping.
pub use aggforge_runtime::plan::arrow_type;

/// Builds an Arrow column of `data_type` from reference values.
pub fn to_array(values: &[Option<V>], data_type: &DataType) -> ArrayRef {
    let ints = || {
        values.iter().map(|v| match v {
            Some(V::I(i)) => Some(*i),
            _ => None,
        })
    };
    match data_type {
        DataType::Int8 => Arc::new(Int8Array::from_iter(ints().map(|v| v.map(|i| i as i8)))),
        DataType::Int16 => Arc::new(Int16Array::from_iter(ints().map(|v| v.map(|i| i as i16)))),
        DataType::Int32 => Arc::new(Int32Array::from_iter(ints().map(|v| v.map(|i| i as i32)))),
        DataType::Int64 => Arc::new(Int64Array::from_iter(ints().map(|v| v.map(|i| i as i64)))),
        DataType::Date32 => Arc::new(Date32Array::from_iter(ints().map(|v| v.map(|i| i as i32)))),
        DataType::Time32(TimeUnit::Millisecond) => Arc::new(Time32MillisecondArray::from_iter(
            ints().map(|v| v.map(|i| i as i32)),
        )),
        DataType::Timestamp(TimeUnit::Millisecond, None) => Arc::new(
            TimestampMillisecondArray::from_iter(ints().map(|v| v.map(|i| i as i64))),
        ),
        DataType::Decimal128(p, s) => Arc::new(
            Decimal128Array::from_iter(ints())
                .with_precision_and_scale(*p, *s)
                .unwrap(),
        ),
        DataType::Float32 => Arc::new(Float32Array::from_iter(values.iter().map(|v| match v {
            Some(V::F32(f)) => Some(*f),
            _ => None,
        }))),
        DataType::Float64 => Arc::new(Float64Array::from_iter(values.iter().map(|v| match v {
            Some(V::F64(f)) => Some(*f),
            _ => None,
        }))),
        DataType::Boolean => Arc::new(BooleanArray::from_iter(values.iter().map(|v| match v {
            Some(V::B(b)) => Some(*b),
            _ => None,
        }))),
        DataType::Utf8 => Arc::new(StringArray::from_iter(values.iter().map(|v| match v {
            Some(V::S(s)) => Some(String::from_utf8(s.clone()).unwrap()),
            _ => None,
        }))),
        DataType::Struct(fields) => {
            let millis: Vec<i64> = values
                .iter()
                .map(|v| match v {
                    Some(V::T(m, _)) => *m,
                    _ => 0,
                })
                .collect();
            let nanos: Vec<i32> = values
                .iter()
                .map(|v| match v {
                    Some(V::T(_, n)) => *n,
                    _ => 0,
                })
                .collect();
            let valid: Vec<bool> = values.iter().map(|v| v.is_some()).collect();
            Arc::new(StructArray::new(
                fields.clone(),
                vec![
                    Arc::new(Int64Array::from(millis)),
                    Arc::new(Int32Array::from(nanos)),
                ],
                Some(valid.into()),
            ))
        }
        DataType::List(field) => {
            let mut items = Vec::new();
            let mut offsets = vec![0i32];
            for v in values {
                if let Some(V::L(list)) = v {
                    items.extend(list.iter().cloned());
                }
                offsets.push(items.len() as i32);
            }
            let valid: Vec<bool> = values.iter().map(|v| v.is_some()).collect();
            Arc::new(ListArray::new(
                field.clone(),
                arrow_buffer::OffsetBuffer::new(offsets.into()),
                to_array(&items, field.data_type()),
                Some(valid.into()),
            ))
        }
        other => panic!("test does not build {other}"),
    }
}

/// Reads an Arrow column into reference values.
pub fn from_array(array: &ArrayRef) -> Vec<Option<V>> {
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                return None;
            }
            Some(match array.data_type() {
                DataType::Int8 => V::I(array.as_primitive::<Int8Type>().value(i).into()),
                DataType::Int16 => V::I(array.as_primitive::<Int16Type>().value(i).into()),
                DataType::Int32 => V::I(array.as_primitive::<Int32Type>().value(i).into()),
                DataType::Int64 => V::I(array.as_primitive::<Int64Type>().value(i).into()),
                DataType::Date32 => V::I(array.as_primitive::<Date32Type>().value(i).into()),
                DataType::Time32(_) => V::I(
                    array
                        .as_primitive::<Time32MillisecondType>()
                        .value(i)
                        .into(),
                ),
                DataType::Timestamp(..) => V::I(
                    array
                        .as_primitive::<TimestampMillisecondType>()
                        .value(i)
                        .into(),
                ),
                DataType::Decimal128(..) => V::I(array.as_primitive::<Decimal128Type>().value(i)),
                DataType::Float32 => V::F32(array.as_primitive::<Float32Type>().value(i)),
                DataType::Float64 => V::F64(array.as_primitive::<Float64Type>().value(i)),
                DataType::Boolean => V::B(array.as_boolean().value(i)),
                DataType::Utf8 => V::S(array.as_string::<i32>().value(i).as_bytes().to_vec()),
                DataType::Struct(_) => {
                    let s = array.as_struct();
                    V::T(
                        s.column(0).as_primitive::<Int64Type>().value(i),
                        s.column(1).as_primitive::<Int32Type>().value(i),
                    )
                }
                DataType::List(_) => V::L(from_array(&array.as_list::<i32>().value(i))),
                other => panic!("test does not read {other}"),
            })
        })
        .collect()
}
