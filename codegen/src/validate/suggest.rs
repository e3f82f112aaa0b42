//! "Did you mean" suggestions for misspelt names.

/// The candidate closest to `input` by case-insensitive edit distance, if
/// it is close enough to be a plausible typo, else a candidate that the
/// input truncates or extends (`INTEGR` -> `INT`).
pub(crate) fn closest<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let input = input.to_ascii_lowercase();
    let limit = (input.chars().count() / 3).max(2);
    let scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (edit_distance(&input, &c.to_ascii_lowercase()), c))
        .collect();
    let near = scored
        .iter()
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| *c);
    near.or_else(|| {
        scored
            .iter()
            .filter(|(_, c)| {
                let c = c.to_ascii_lowercase();
                c.len().min(input.len()) >= 3 && (c.starts_with(&input) || input.starts_with(&c))
            })
            .min_by_key(|(d, _)| *d)
            .map(|(_, c)| *c)
    })
}

/// `unknown {what} `x`; did you mean `y`? (known: a, b, c)`, or
/// `unknown {what} `x` (known: a, b, c)` when nothing is close.
pub fn unknown_name<'a>(
    what: &str,
    input: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> String {
    let known = candidates
        .clone()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ");
    match closest(input, candidates) {
        Some(best) => format!("unknown {what} `{input}`; did you mean `{best}`? (known: {known})"),
        None => format!("unknown {what} `{input}` (known: {known})"),
    }
}

/// Edit distance over chars counting insertions, deletions, substitutions
/// and swaps of adjacent characters (optimal string alignment).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * width + j] = if i == 0 {
                j
            } else if j == 0 {
                i
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut best = (d[(i - 1) * width + j] + 1)
                    .min(d[i * width + j - 1] + 1)
                    .min(d[(i - 1) * width + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * width + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("MXA", ["MIN", "MAX", "AVG"]), Some("MAX"));
        assert_eq!(
            closest("DECIMAL18", ["DECIMAL_18", "DECIMAL_38"]),
            Some("DECIMAL_18")
        );
        assert_eq!(closest("HYPERLOGLOG", ["MIN", "MAX"]), None);
        assert_eq!(closest("INTEGR", ["TINYINT", "INT", "BIGINT"]), Some("INT"));
        assert_eq!(
            closest("TIMESTAMP", ["TIMESTAMP_3", "TIMESTAMP_9"]),
            Some("TIMESTAMP_3")
        );
    }
}
