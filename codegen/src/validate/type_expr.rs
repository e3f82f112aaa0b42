//! Type expressions in `partial` and `result`: `arg`, a type row name,
//! `DECIMAL(p, s)`, `DECIMAL(p, max(n, s))` and `DECIMAL(p, n)`.

use crate::model::{ScaleExpr, TypeExpr};

/// Largest DECIMAL precision.
const MAX_DECIMAL_PRECISION: u8 = 38;

/// Parses a type expression; the error is a sentence saying what to write.
pub fn parse_type_expr(text: &str) -> Result<TypeExpr, String> {
    let trimmed = text.trim();
    if trimmed == "arg" {
        return Ok(TypeExpr::Arg);
    }
    if trimmed == "accumulator" {
        return Ok(TypeExpr::Accumulator);
    }
    let upper = trimmed.to_ascii_uppercase();
    if upper.starts_with("DECIMAL") && trimmed[7..].trim_start().starts_with('(') {
        return parse_decimal(trimmed);
    }
    if is_row_name(trimmed) {
        return Ok(TypeExpr::Named(trimmed.to_string()));
    }
    Err(syntax_help(text))
}

/// Whether `text` can name a type row: upper-case ASCII letters, digits and
/// underscores, starting with a letter.
pub(crate) fn is_row_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn syntax_help(text: &str) -> String {
    format!(
        "cannot read type expression `{text}`; write `arg`, a types.toml row name such as `BIGINT`, \
         `DECIMAL(p, s)`, `DECIMAL(p, max(n, s))`, `DECIMAL(p, n)` (s is the argument's scale) \
         or, as a template's only partial field, `accumulator`"
    )
}

/// `DECIMAL( p , scale )`.
fn parse_decimal(text: &str) -> Result<TypeExpr, String> {
    let open = text.find('(').ok_or_else(|| syntax_help(text))?;
    let inner = text[open + 1..]
        .trim_end()
        .strip_suffix(')')
        .ok_or_else(|| syntax_help(text))?;
    let (precision, scale) = inner.split_once(',').ok_or_else(|| syntax_help(text))?;
    let precision: u8 = precision.trim().parse().map_err(|_| syntax_help(text))?;
    if precision == 0 || precision > MAX_DECIMAL_PRECISION {
        return Err(format!(
            "precision {precision} in `{text}` is out of range; DECIMAL precision is 1 to {MAX_DECIMAL_PRECISION}"
        ));
    }
    let scale = scale.trim();
    let scale = if scale == "s" {
        ScaleExpr::Arg
    } else if let Ok(fixed) = scale.parse::<u8>() {
        ScaleExpr::Fixed(fixed)
    } else {
        let args = scale
            .strip_prefix("max")
            .map(str::trim_start)
            .and_then(|rest| rest.strip_prefix('('))
            .and_then(|rest| rest.strip_suffix(')'))
            .ok_or_else(|| syntax_help(text))?;
        let (floor, s) = args.split_once(',').ok_or_else(|| syntax_help(text))?;
        if s.trim() != "s" {
            return Err(syntax_help(text));
        }
        ScaleExpr::AtLeast(floor.trim().parse().map_err(|_| syntax_help(text))?)
    };
    let floor = match scale {
        ScaleExpr::Arg => 0,
        ScaleExpr::Fixed(n) | ScaleExpr::AtLeast(n) => n,
    };
    if floor > precision {
        return Err(format!(
            "scale {floor} in `{text}` exceeds the precision {precision}; a DECIMAL scale is at most its precision"
        ));
    }
    Ok(TypeExpr::Decimal { precision, scale })
}

/// How a type expression is spelled in a spec.
pub fn type_expr_text(expr: &TypeExpr) -> String {
    match expr {
        TypeExpr::Arg => "arg".to_string(),
        TypeExpr::Accumulator => "accumulator".to_string(),
        TypeExpr::Named(name) => name.clone(),
        TypeExpr::Decimal { precision, scale } => match scale {
            ScaleExpr::Arg => format!("DECIMAL({precision}, s)"),
            ScaleExpr::Fixed(n) => format!("DECIMAL({precision}, {n})"),
            ScaleExpr::AtLeast(n) => format!("DECIMAL({precision}, max({n}, s))"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(parse_type_expr("arg"), Ok(TypeExpr::Arg));
        assert_eq!(
            parse_type_expr("BIGINT"),
            Ok(TypeExpr::Named("BIGINT".into()))
        );
        assert_eq!(
            parse_type_expr("DECIMAL(38, s)"),
            Ok(TypeExpr::Decimal {
                precision: 38,
                scale: ScaleExpr::Arg
            })
        );
        assert_eq!(
            parse_type_expr("DECIMAL(38,max( 6 , s ))"),
            Ok(TypeExpr::Decimal {
                precision: 38,
                scale: ScaleExpr::AtLeast(6)
            })
        );
        assert_eq!(
            parse_type_expr("DECIMAL(10, 2)"),
            Ok(TypeExpr::Decimal {
                precision: 10,
                scale: ScaleExpr::Fixed(2)
            })
        );
        for bad in [
            "DECIMAL(38 s)",
            "DECIMAL(38, t)",
            "Decimal",
            "arg2x!",
            "DECIMAL(38, max(6, t))",
            "",
        ] {
            assert!(parse_type_expr(bad).is_err(), "{bad}");
        }
        assert!(parse_type_expr("DECIMAL(39, s)")
            .unwrap_err()
            .contains("1 to 38"));
        assert!(parse_type_expr("DECIMAL(10, 12)")
            .unwrap_err()
            .contains("exceeds the precision"));
        for text in [
            "arg",
            "BIGINT",
            "DECIMAL(38, s)",
            "DECIMAL(38, max(6, s))",
            "DECIMAL(10, 2)",
        ] {
            assert_eq!(type_expr_text(&parse_type_expr(text).unwrap()), text);
        }
    }
}
