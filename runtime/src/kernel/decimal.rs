//! DECIMAL arithmetic as Flink's `DecimalDataUtils` does it, on unscaled
//! `i128` values.

/// Largest unscaled magnitude of a 38-digit decimal.
pub const MAX_38: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

/// `10^n` for `n <= 38`.
pub const fn pow10(n: u32) -> u128 {
    let mut value: u128 = 1;
    let mut i = 0;
    while i < n {
        value *= 10;
        i += 1;
    }
    value
}

/// Sum of two DECIMAL(38, s) values of the same scale; `None` (SQL NULL)
/// when the result needs more than 38 digits, as `DecimalDataUtils.add`
/// returns null.
#[inline]
pub fn add_38(a: i128, b: i128) -> Option<i128> {
    a.checked_add(b).and_then(within_38)
}

/// `value` if it has at most 38 digits, else `None` (SQL NULL).
#[inline(always)]
pub fn within_38(value: i128) -> Option<i128> {
    (-MAX_38..=MAX_38).contains(&value).then_some(value)
}

/// Difference of two DECIMAL(38, s) values of the same scale; `None` (SQL
/// NULL) past 38 digits, as `DecimalDataUtils.subtract` returns null.
#[inline]
pub fn sub_38(a: i128, b: i128) -> Option<i128> {
    a.checked_sub(b).and_then(within_38)
}

/// AVG of a DECIMAL(38, `sum_scale`) sum over `count` rows, as Flink
/// computes `cast(sum / count AS DECIMAL(38, result_scale))`:
/// `BigDecimal.divide` with `MathContext(38, HALF_UP)` (38 significant
/// digits), then `setScale(result_scale, HALF_UP)`, then NULL when the
/// result needs more than 38 digits. `count` must not be zero.
pub fn avg_38(sum: i128, count: i64, sum_scale: i8, result_scale: i8) -> Option<i128> {
    if count == 0 {
        return None;
    }
    let negative = (sum < 0) != (count < 0);
    let n = sum.unsigned_abs();
    let d = u128::from(count.unsigned_abs());
    if n == 0 {
        return Some(0);
    }
    // Step 1: the quotient rounded HALF_UP to 38 significant digits, as
    // `coef * 10^-frac` (scale of the quotient n / d).
    let mut coef = n / d;
    let mut rem = n % d;
    let mut frac: i32 = 0;
    let digits_37 = pow10(37);
    while rem != 0 && coef < digits_37 {
        let wide = rem * 10;
        coef = coef * 10 + wide / d;
        rem = wide % d;
        frac += 1;
    }
    if rem != 0 && rem * 2 >= d {
        coef += 1;
    }
    // Step 2: to the result scale, HALF_UP.
    let scale = frac + i32::from(sum_scale);
    let target = i32::from(result_scale);
    let unscaled = if scale <= target {
        let shift = (target - scale) as u32;
        if shift > 38 {
            return None;
        }
        coef.checked_mul(pow10(shift))?
    } else {
        let shift = (scale - target) as u32;
        if shift > 38 {
            0
        } else {
            let unit = pow10(shift);
            let (q, r) = (coef / unit, coef % unit);
            if r * 2 >= unit {
                q + 1
            } else {
                q
            }
        }
    };
    if unscaled > MAX_38 as u128 {
        return None;
    }
    let value = unscaled as i128;
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_overflows_to_none() {
        assert_eq!(add_38(MAX_38, 0), Some(MAX_38));
        assert_eq!(add_38(MAX_38, 1), None);
        assert_eq!(add_38(-MAX_38, -1), None);
        assert_eq!(add_38(5, -7), Some(-2));
    }

    #[test]
    fn avg_rounds_half_up_to_scale() {
        // 3 / 2 = 1.5 at scale 6
        assert_eq!(avg_38(3, 2, 0, 6), Some(1_500_000));
        // 2 / 3 = 0.666667
        assert_eq!(avg_38(2, 3, 0, 6), Some(666_667));
        // -2 / 3 = -0.666667 (HALF_UP is away from zero)
        assert_eq!(avg_38(-2, 3, 0, 6), Some(-666_667));
        // 1 / 8 at scale 2 sum -> 0.00125 at scale 6 = 1250 unscaled
        assert_eq!(avg_38(1, 8, 2, 6), Some(1_250));
        // 0.0000005 exactly -> 0.000001 (HALF_UP)
        assert_eq!(avg_38(1, 2, 6, 6), Some(1));
        // scale above 6 is kept: 1.0000001 / 1 with scale 7
        assert_eq!(avg_38(10_000_001, 1, 7, 7), Some(10_000_001));
    }

    #[test]
    fn avg_too_wide_is_null() {
        // 10^37 at scale 0 needs 44 digits at scale 6
        assert_eq!(avg_38(10i128.pow(37), 1, 0, 6), None);
        assert_eq!(avg_38(10i128.pow(31), 1, 0, 6), Some(10i128.pow(37)));
    }

    #[test]
    fn avg_rounds_to_38_digits_first() {
        // sum = 10^38 - 1 at scale 38 (0.999..9, 38 nines), count 3:
        // 0.333..33 (38 threes) -> exact at 38 significant digits already.
        let n = MAX_38;
        assert_eq!(avg_38(n, 3, 38, 38), Some(MAX_38 / 3));
        // 2/3 at scale 38: 0.666..67 (38 digits, rounded up in step 1).
        assert_eq!(
            avg_38(2 * 10i128.pow(37), 3, 37, 38),
            Some(MAX_38 / 3 * 2 + 1)
        );
    }
}
