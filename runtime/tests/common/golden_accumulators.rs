//! Cell syntax of the golden cases' accumulator partials (Flink's
//! structured accumulators, one struct column each).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, ListArray, StringArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::DataType;

use super::golden::parse_column;

/// Min/MaxWithRetractAccumulator partials, one cell each:
/// `extreme|mapSize|key=count&key=count` (`NULL|0|` for an empty one).
pub(crate) fn counted_accumulator(fields: &arrow_schema::Fields, cells: &[&str]) -> ArrayRef {
    let DataType::List(entry) = fields[2].data_type() else {
        panic!("the accumulator's map is a list")
    };
    let DataType::Struct(entry_fields) = entry.data_type() else {
        panic!("the accumulator's map entries are structs")
    };
    let (mut extremes, mut sizes, mut keys, mut counts, mut lengths) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for cell in cells {
        let parts: Vec<&str> = cell.split('|').map(str::trim).collect();
        let [extreme, size, map] = parts[..] else {
            panic!("accumulator cell '{cell}' is not extreme|mapSize|key=count&...")
        };
        extremes.push(extreme);
        sizes.push(size.parse::<i64>().expect("mapSize"));
        let entries: Vec<&str> = map
            .split('&')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        lengths.push(entries.len());
        for e in entries {
            let (key, count) = e.rsplit_once('=').expect("key=count");
            keys.push(key);
            counts.push(count.parse::<i64>().expect("count"));
        }
    }
    let entries = StructArray::try_new(
        entry_fields.clone(),
        vec![
            parse_column(entry_fields[0].data_type(), &keys),
            Arc::new(Int64Array::from(counts)),
        ],
        None,
    )
    .unwrap();
    let map = ListArray::try_new(
        entry.clone(),
        OffsetBuffer::from_lengths(lengths),
        Arc::new(entries),
        None,
    )
    .unwrap();
    Arc::new(
        StructArray::try_new(
            fields.clone(),
            vec![
                parse_column(fields[0].data_type(), &extremes),
                Arc::new(Int64Array::from(sizes)),
                Arc::new(map),
            ],
            None,
        )
        .unwrap(),
    )
}

/// ListAgg(Ws)WithRetractAccumulator partials, one cell each:
/// `a&b|r&s` (list, retractList) or `a&b|r&s|delimiter` (`NULL` for a
/// NULL delimiter); an empty list is empty text.
pub(crate) fn list_accumulator(fields: &arrow_schema::Fields, cells: &[&str]) -> ArrayRef {
    let mut lists: [(Vec<&str>, Vec<usize>); 2] = Default::default();
    let mut delimiters = Vec::new();
    for cell in cells {
        let parts: Vec<&str> = cell.split('|').map(str::trim).collect();
        if parts.len() != fields.len() {
            panic!(
                "accumulator cell '{cell}' does not have {} parts",
                fields.len()
            );
        }
        for (list, part) in lists.iter_mut().zip(&parts) {
            let items: Vec<&str> = part.split('&').filter(|i| !i.is_empty()).collect();
            list.1.push(items.len());
            list.0.extend(items);
        }
        if let Some(delimiter) = parts.get(2) {
            delimiters.push((*delimiter != "NULL").then_some(*delimiter));
        }
    }
    let mut children: Vec<ArrayRef> = Vec::new();
    for ((values, lengths), field) in lists.into_iter().zip(fields.iter()) {
        let DataType::List(item) = field.data_type() else {
            panic!("the accumulator's {} is a list", field.name())
        };
        children.push(Arc::new(
            ListArray::try_new(
                item.clone(),
                OffsetBuffer::from_lengths(lengths),
                Arc::new(StringArray::from(values)),
                None,
            )
            .unwrap(),
        ));
    }
    if fields.len() == 3 {
        children.push(Arc::new(StringArray::from(delimiters)));
    }
    Arc::new(StructArray::try_new(fields.clone(), children, None).unwrap())
}
