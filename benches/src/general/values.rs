//! The general path's order-sensitive accumulators over insert-only input:
//! FIRST_VALUE and LAST_VALUE (the first or latest non-NULL value, as
//! Flink's FirstValueAggFunction / LastValueAggFunction) and LISTAGG (the
//! non-NULL strings joined by `,`, as Flink's ListAggFunction). Like the
//! rest of the general path they fold one boxed [`Scalar`] at a time and
//! keep boxed scalars (or an owned `String`) per group.

use super::{BoxedAccumulator, GeneralError, Result, Scalar};

/// LISTAGG's separator when the call gives none (Flink's default).
pub const LISTAGG_SEPARATOR: &str = ",";

/// FIRST_VALUE: the first non-NULL value; later values are ignored.
#[derive(Debug)]
pub struct FirstValue {
    first: Scalar,
}

impl Default for FirstValue {
    fn default() -> Self {
        FirstValue {
            first: Scalar::Null,
        }
    }
}

impl BoxedAccumulator for FirstValue {
    fn update(&mut self, value: &Scalar) -> Result<()> {
        if self.first.is_null() && !value.is_null() {
            self.first = value.clone();
        }
        Ok(())
    }
    fn evaluate(&self) -> Result<Scalar> {
        Ok(self.first.clone())
    }
}

/// LAST_VALUE: the latest non-NULL value (a clone of every one seen).
#[derive(Debug)]
pub struct LastValue {
    last: Scalar,
}

impl Default for LastValue {
    fn default() -> Self {
        LastValue { last: Scalar::Null }
    }
}

impl BoxedAccumulator for LastValue {
    fn update(&mut self, value: &Scalar) -> Result<()> {
        if !value.is_null() {
            self.last = value.clone();
        }
        Ok(())
    }
    fn evaluate(&self) -> Result<Scalar> {
        Ok(self.last.clone())
    }
}

/// LISTAGG(x): the non-NULL strings in arrival order, joined by
/// [`LISTAGG_SEPARATOR`]; NULL until one arrives. An empty string is a
/// value (it adds a separator), as in Flink.
#[derive(Debug, Default)]
pub struct ListAgg {
    joined: Option<String>,
}

impl BoxedAccumulator for ListAgg {
    fn update(&mut self, value: &Scalar) -> Result<()> {
        match value {
            Scalar::Null => {}
            Scalar::Utf8(text) => match &mut self.joined {
                None => self.joined = Some(text.clone()),
                Some(joined) => {
                    joined.push_str(LISTAGG_SEPARATOR);
                    joined.push_str(text);
                }
            },
            other => return Err(GeneralError(format!("LISTAGG over {other:?}"))),
        }
        Ok(())
    }
    fn evaluate(&self) -> Result<Scalar> {
        Ok(self.joined.clone().map_or(Scalar::Null, Scalar::Utf8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(accumulator: &mut dyn BoxedAccumulator, values: &[Scalar]) -> Scalar {
        for value in values {
            accumulator.update(value).unwrap();
        }
        accumulator.evaluate().unwrap()
    }

    fn text(s: &str) -> Scalar {
        Scalar::Utf8(s.to_string())
    }

    #[test]
    fn first_value_keeps_the_first_non_null() {
        use Scalar::*;
        let values = [Null, Int64(7), Null, Int64(-3), Int64(9)];
        assert_eq!(fold(&mut FirstValue::default(), &values), Int64(7));
        assert_eq!(fold(&mut FirstValue::default(), &[Null, Null]), Null);
        assert_eq!(
            fold(&mut FirstValue::default(), &[Null, text("b"), text("a")]),
            text("b")
        );
    }

    #[test]
    fn last_value_keeps_the_latest_non_null() {
        use Scalar::*;
        let values = [Int64(7), Null, Int64(-3), Null];
        assert_eq!(fold(&mut LastValue::default(), &values), Int64(-3));
        assert_eq!(fold(&mut LastValue::default(), &[Null]), Null);
        assert_eq!(
            fold(&mut LastValue::default(), &[text("b"), text("a"), Null]),
            text("a")
        );
    }

    #[test]
    fn listagg_joins_non_null_strings_with_commas() {
        use Scalar::*;
        let values = [Null, text("x"), text(""), Null, text("yz")];
        assert_eq!(fold(&mut ListAgg::default(), &values), text("x,,yz"));
        assert_eq!(fold(&mut ListAgg::default(), &[text("only")]), text("only"));
        assert_eq!(fold(&mut ListAgg::default(), &[Null, Null]), Null);
        assert_eq!(fold(&mut ListAgg::default(), &[]), Null);
    }

    #[test]
    fn listagg_refuses_non_strings() {
        let mut agg = ListAgg::default();
        assert!(agg.update(&Scalar::Int64(1)).is_err());
    }
}
