//! Group tables: all three paths, NULL keys, signed zeros and NaN bits,
//! many keys, rollback and the keys() round trip.

use std::sync::Arc;
use std::time::Instant;

use aggforge_runtime::group_table::{GroupTable, TablePath};
use aggforge_runtime::types::SqlType;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int32Array, Int64Array, StringArray,
};

fn string() -> SqlType {
    SqlType::of("STRING")
}

fn intern(table: &mut GroupTable, keys: &[ArrayRef]) -> Vec<u32> {
    let mut ids = Vec::new();
    table.intern(keys, keys[0].len(), &mut ids).unwrap();
    ids
}

fn all_groups(table: &GroupTable) -> Vec<u32> {
    (0..table.len() as u32).collect()
}

#[test]
fn fixed_int_keys_with_null_group() {
    let mut table = GroupTable::new(&[SqlType::of("INT")]).unwrap();
    assert_eq!(table.path(), TablePath::Fixed);
    let keys: ArrayRef = Arc::new(Int32Array::from(vec![
        Some(7),
        None,
        Some(-1),
        Some(7),
        None,
        Some(0),
    ]));
    assert_eq!(intern(&mut table, &[keys]), vec![0, 1, 2, 0, 1, 3]);
    let again: ArrayRef = Arc::new(Int32Array::from(vec![Some(0), Some(8), None]));
    assert_eq!(intern(&mut table, &[again]), vec![3, 4, 1]);
    assert_eq!(table.key_hashes().len(), 5);
    let back = table.keys(&[4, 1, 0, 2, 3]).unwrap();
    let back = back[0].as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(
        back.iter().collect::<Vec<_>>(),
        vec![Some(8), None, Some(7), Some(-1), Some(0)]
    );
}

#[test]
fn float_keys_compare_by_bits() {
    let mut table = GroupTable::new(&[SqlType::of("DOUBLE")]).unwrap();
    let nan_a = f64::from_bits(0x7ff8_0000_0000_0000);
    let nan_b = f64::from_bits(0x7ff8_0000_0000_0001);
    let keys: ArrayRef = Arc::new(Float64Array::from(vec![
        0.0, -0.0, nan_a, nan_a, nan_b, 0.0,
    ]));
    // -0.0 and 0.0 differ (BinaryRowData compares bytes); equal NaN bits
    // are one key, other NaN bits another.
    assert_eq!(intern(&mut table, &[keys]), vec![0, 1, 2, 2, 3, 0]);
    let back = table.keys(&all_groups(&table)).unwrap();
    let back = back[0].as_any().downcast_ref::<Float64Array>().unwrap();
    let bits: Vec<u64> = back.values().iter().map(|v| v.to_bits()).collect();
    assert_eq!(
        bits,
        vec![0, (-0.0f64).to_bits(), nan_a.to_bits(), nan_b.to_bits()]
    );

    let mut table = GroupTable::new(&[SqlType::of("FLOAT")]).unwrap();
    let keys: ArrayRef = Arc::new(Float32Array::from(vec![-0.0f32, 0.0, -0.0]));
    assert_eq!(intern(&mut table, &[keys]), vec![0, 1, 0]);
}

#[test]
fn decimal_date_and_boolean_keys() {
    let ty = SqlType::of("DECIMAL(30, 2)");
    let mut table = GroupTable::new(&[ty]).unwrap();
    let big = 10i128.pow(28);
    let keys: ArrayRef = Arc::new(
        Decimal128Array::from(vec![Some(big), Some(-big), None, Some(big)])
            .with_precision_and_scale(30, 2)
            .unwrap(),
    );
    assert_eq!(
        intern(&mut table, std::slice::from_ref(&keys)),
        vec![0, 1, 2, 0]
    );
    let back = table.keys(&[0, 1, 2]).unwrap();
    assert_eq!(back[0].data_type(), keys.data_type());
    let back = back[0].as_any().downcast_ref::<Decimal128Array>().unwrap();
    assert_eq!(
        back.iter().collect::<Vec<_>>(),
        vec![Some(big), Some(-big), None]
    );

    let mut table = GroupTable::new(&[SqlType::of("DATE")]).unwrap();
    let keys: ArrayRef = Arc::new(Date32Array::from(vec![19000, 19001, 19000]));
    assert_eq!(intern(&mut table, &[keys]), vec![0, 1, 0]);

    let mut table = GroupTable::new(&[SqlType::of("BOOLEAN")]).unwrap();
    let keys: ArrayRef = Arc::new(BooleanArray::from(vec![
        Some(true),
        None,
        Some(false),
        Some(true),
        None,
    ]));
    assert_eq!(intern(&mut table, &[keys]), vec![0, 1, 2, 0, 1]);
    let back = table.keys(&[2, 1, 0]).unwrap();
    let back = back[0].as_any().downcast_ref::<BooleanArray>().unwrap();
    assert_eq!(
        back.iter().collect::<Vec<_>>(),
        vec![Some(false), None, Some(true)]
    );
}

#[test]
fn string_keys_with_null_and_empty_string() {
    let mut table = GroupTable::new(&[string()]).unwrap();
    assert_eq!(table.path(), TablePath::String);
    let keys: ArrayRef = Arc::new(StringArray::from(vec![
        Some("b"),
        Some(""),
        None,
        Some("b"),
        Some("a"),
        None,
        Some(""),
    ]));
    // NULL and '' are different keys.
    assert_eq!(intern(&mut table, &[keys]), vec![0, 1, 2, 0, 3, 2, 1]);
    let back = table.keys(&[3, 2, 1, 0]).unwrap();
    let back = back[0].as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(
        back.iter().collect::<Vec<_>>(),
        vec![Some("a"), None, Some(""), Some("b")]
    );
}

#[test]
fn composite_keys_use_rows() {
    let mut table = GroupTable::new(&[SqlType::of("BIGINT"), string()]).unwrap();
    assert_eq!(table.path(), TablePath::Row);
    let a: ArrayRef = Arc::new(Int64Array::from(vec![
        Some(1),
        Some(1),
        None,
        Some(1),
        None,
    ]));
    let b: ArrayRef = Arc::new(StringArray::from(vec![
        Some("x"),
        Some("y"),
        Some("x"),
        Some("x"),
        None,
    ]));
    assert_eq!(intern(&mut table, &[a, b]), vec![0, 1, 2, 0, 3]);
    let back = table.keys(&[3, 1]).unwrap();
    let a = back[0].as_any().downcast_ref::<Int64Array>().unwrap();
    let b = back[1].as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(a.iter().collect::<Vec<_>>(), vec![None, Some(1)]);
    assert_eq!(b.iter().collect::<Vec<_>>(), vec![None, Some("y")]);

    let mut table = GroupTable::new(&[SqlType::of("TIMESTAMP(9)")]).unwrap();
    assert_eq!(table.path(), TablePath::Row);
    let _ = &mut table;
}

#[test]
fn many_keys_round_trip_on_every_path() {
    let n = 100_000i64;
    let ints: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 7919 % n)));
    let strings: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..n).map(|i| format!("key-{}", i * 7919 % n)),
    ));
    for keys in [
        vec![ints.clone()],
        vec![strings.clone()],
        vec![ints.clone(), strings.clone()],
    ] {
        let types: Vec<SqlType> = keys
            .iter()
            .map(|k| match k.data_type() {
                arrow_schema::DataType::Int64 => SqlType::of("BIGINT"),
                _ => string(),
            })
            .collect();
        let mut table = GroupTable::new(&types).unwrap();
        let ids = intern(&mut table, &keys);
        assert_eq!(table.len(), n as usize);
        assert_eq!(ids, (0..n as u32).collect::<Vec<_>>());
        // Looking the same keys up again creates nothing.
        assert_eq!(intern(&mut table, &keys), ids);
        assert_eq!(table.len(), n as usize);
        let back = table.keys(&ids).unwrap();
        assert_eq!(back.len(), keys.len());
        for (b, k) in back.iter().zip(&keys) {
            assert_eq!(b.to_data(), k.to_data());
        }
        assert!(table.memory_bytes() > n as usize * 8);
    }
}

#[test]
fn truncate_undoes_new_groups() {
    for types in [
        vec![SqlType::of("INT")],
        vec![string()],
        vec![SqlType::of("INT"), string()],
    ] {
        let mut table = GroupTable::new(&types).unwrap();
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
        let strs: ArrayRef = Arc::new(StringArray::from(vec![Some("1"), None, Some("3")]));
        let keys = |i: &ArrayRef, s: &ArrayRef| -> Vec<ArrayRef> {
            match types.len() {
                2 => vec![i.clone(), s.clone()],
                _ if types[0] == SqlType::of("INT") => vec![i.clone()],
                _ => vec![s.clone()],
            }
        };
        intern(&mut table, &keys(&ints.slice(0, 1), &strs.slice(0, 1)));
        intern(&mut table, &keys(&ints, &strs));
        assert_eq!(table.len(), 3);
        table.truncate(1);
        assert_eq!(table.len(), 1);
        // The dropped keys come back as new groups, the kept one stays 0.
        assert_eq!(intern(&mut table, &keys(&ints, &strs)), vec![0, 1, 2]);
        assert_eq!(table.key_hashes().len(), 3);
    }
}

#[test]
fn wrong_key_type_is_an_input_error() {
    let mut table = GroupTable::new(&[SqlType::of("INT")]).unwrap();
    let keys: ArrayRef = Arc::new(Int64Array::from(vec![1]));
    let err = table.intern(&[keys], 1, &mut Vec::new()).unwrap_err();
    assert!(err.to_string().contains("Int64"), "{err}");
    assert!(table.is_empty());
}

/// Lookup speed on the fixed path: 4096-row batches over 64 keys.
/// Run with `cargo test --release -p aggforge-runtime --test integration
/// -- --ignored --nocapture group_table::fixed_lookup_speed`.
#[test]
#[ignore]
fn fixed_lookup_speed() {
    let rows = 4096;
    let batches: Vec<ArrayRef> = (0..16)
        .map(|b| {
            let mut x = 0x2545_F491_4F6C_DD1Du64 ^ b;
            let v: Vec<i32> = (0..rows)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    19_000 + (x % 64) as i32
                })
                .collect();
            Arc::new(Date32Array::from(v)) as ArrayRef
        })
        .collect();
    let mut table = GroupTable::new(&[SqlType::of("DATE")]).unwrap();
    let mut ids = Vec::new();
    let rounds = 2000;
    let start = Instant::now();
    for r in 0..rounds {
        let batch = &batches[r % batches.len()];
        table
            .intern(std::slice::from_ref(batch), rows, &mut ids)
            .unwrap();
        std::hint::black_box(&ids);
    }
    let ns = start.elapsed().as_nanos() as f64 / (rounds * rows) as f64;
    println!("fixed DATE lookup, 64 keys: {ns:.2} ns/row");
    assert_eq!(table.len(), 64);
}
