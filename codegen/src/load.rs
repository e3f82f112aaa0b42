//! Reading spec files: directory listing, TOML syntax, the serde shapes of
//! `[[family]]` and `[[type]]` tables and `[[entry]]` tables, and byte spans turned into lines.
//! What the values mean is checked in [`crate::validate`], against the
//! state template declarations read by [`crate::templates`].

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::{IgnoredAny, IntoDeserializer};
use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::error::{SpecError, SpecErrors};
use crate::model::{Location, SpecSet};
use crate::templates::Templates;

/// File name of the type table inside a spec directory.
pub const TYPES_FILE: &str = "types.toml";

/// Loads and validates a spec directory: `types.toml` plus every other
/// `*.toml` file in it, family files in file-name order, against the state
/// template declarations of `templates` (the runtime's `src/templates`;
/// see [`Templates::read_dir`]).
pub fn load_dir(dir: &Path, templates: &Path) -> Result<SpecSet, SpecErrors> {
    let listing = std::fs::read_dir(dir).map_err(|e| {
        SpecErrors(vec![SpecError::new(
            Location {
                file: dir.to_path_buf(),
                line: 1,
            },
            format!("cannot read the spec directory: {e}; pass an existing directory holding types.toml"),
        )])
    })?;
    let paths = files_in(listing, "toml");
    let mut errors = Vec::new();
    if !paths
        .iter()
        .any(|p| p.file_name().is_some_and(|n| n == TYPES_FILE))
    {
        errors.push(SpecError::new(
            Location {
                file: dir.join(TYPES_FILE),
                line: 1,
            },
            "the spec directory has no types.toml; every spec directory needs one to declare its type rows",
        ));
    }
    let files = read_texts(paths, &mut errors);
    if !errors.is_empty() {
        return Err(SpecErrors(errors));
    }
    load_str(&files, &Templates::read_dir(templates))
}

/// The `*.EXT` files of a directory listing, sorted by path.
pub(crate) fn files_in(listing: std::fs::ReadDir, ext: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = listing
        .flatten()
        .map(|item| item.path())
        .filter(|path| path.extension().is_some_and(|e| e == ext) && path.is_file())
        .collect();
    paths.sort();
    paths
}

/// The text of each file; one that cannot be read is an error at its
/// line 1 and is left out.
pub(crate) fn read_texts(
    paths: Vec<PathBuf>,
    errors: &mut Vec<SpecError>,
) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for path in paths {
        match std::fs::read_to_string(&path) {
            Ok(text) => files.push((path, text)),
            Err(e) => errors.push(SpecError::new(
                Location {
                    file: path,
                    line: 1,
                },
                format!("cannot read the file: {e}; make it readable UTF-8 text"),
            )),
        }
    }
    files
}

/// Loads and validates in-memory spec files given as (file name, text)
/// pairs. The file whose name ends in `types.toml` is the type table; the
/// others are family files, taken in file-name order. File names appear in
/// error locations as given. Entries are checked against `templates`'
/// declarations, whose errors are reported too.
pub fn load_str<P: AsRef<Path>, T: AsRef<str>>(
    files: &[(P, T)],
    templates: &Templates,
) -> Result<SpecSet, SpecErrors> {
    let mut sorted: Vec<(PathBuf, &str)> = files
        .iter()
        .map(|(path, text)| (path.as_ref().to_path_buf(), text.as_ref()))
        .collect();
    sorted.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()));
    let is_types = |path: &Path| path.file_name().is_some_and(|n| n == TYPES_FILE);
    let mut errors = Vec::new();
    let types_files: Vec<_> = sorted.iter().filter(|(p, _)| is_types(p)).collect();
    let (families, types) = match types_files.as_slice() {
        [one] => {
            let source = Source::new(&one.0, one.1);
            let mut tables = read_tables(&source, one.1, &["family", "type"], &mut errors);
            let rows = deserialize_items(
                &source,
                tables.pop().unwrap_or_default(),
                "type",
                &mut errors,
            );
            let families = deserialize_items(
                &source,
                tables.pop().unwrap_or_default(),
                "family",
                &mut errors,
            );
            (families, rows)
        }
        [] => {
            let file = sorted
                .first()
                .map(|(p, _)| p.with_file_name(TYPES_FILE))
                .unwrap_or_else(|| PathBuf::from(TYPES_FILE));
            errors.push(SpecError::new(
                Location { file, line: 1 },
                "no types.toml among the spec files; add one declaring the [[type]] rows",
            ));
            (Vec::new(), Vec::new())
        }
        [_, second, ..] => {
            errors.push(SpecError::new(
                Location {
                    file: second.0.clone(),
                    line: 1,
                },
                "more than one types.toml given; pass exactly one",
            ));
            (Vec::new(), Vec::new())
        }
    };
    let mut entries = Vec::new();
    for (path, text) in sorted.iter().filter(|(p, _)| !is_types(p)) {
        let source = Source::new(path, text);
        let tables = read_tables(&source, text, &["entry"], &mut errors);
        for items in tables {
            entries.extend(deserialize_items::<RawEntry>(
                &source,
                items,
                "entry",
                &mut errors,
            ));
        }
    }
    // Errors are reported for types.toml first, then the template
    // declarations: entry errors may follow from a broken type row or
    // declaration.
    let order: Vec<PathBuf> = sorted
        .iter()
        .filter(|(p, _)| is_types(p))
        .map(|(p, _)| p.clone())
        .chain(templates.files.iter().cloned())
        .chain(
            sorted
                .iter()
                .filter(|(p, _)| !is_types(p))
                .map(|(p, _)| p.clone()),
        )
        .collect();
    crate::validate::validate(families, types, templates, entries, errors, &order)
}

/// One spec file's path and where its lines start, to turn byte spans into
/// [`Location`]s.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    path: PathBuf,
    line_starts: Vec<usize>,
}

impl Source {
    /// Indexes `text`'s lines.
    pub(crate) fn new(path: &Path, text: &str) -> Source {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            path: path.to_path_buf(),
            line_starts,
        }
    }

    /// The location of a byte span's first byte (1-based line).
    pub(crate) fn location(&self, span: &Range<usize>) -> Location {
        let line = self
            .line_starts
            .partition_point(|&start| start <= span.start);
        Location {
            file: self.path.clone(),
            line: line.max(1),
        }
    }
}

/// A value read from a spec file with the location of its text.
#[derive(Debug, Clone)]
pub(crate) struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it is written.
    pub at: Location,
}

/// Attaches locations to spanned values.
pub(crate) fn locate<T: Clone>(source: &Source, spanned: &Spanned<T>) -> Located<T> {
    Located {
        value: spanned.get_ref().clone(),
        at: source.location(&spanned.span()),
    }
}

/// Raw `[[family]]` table of `types.toml`, field by field, with spans.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFamily {
    pub name: Spanned<String>,
    pub internal: Spanned<String>,
    pub spellings: Spanned<Vec<Spanned<String>>>,
    pub params: Spanned<String>,
    #[serde(default)]
    pub default: Option<Spanned<i64>>,
    #[serde(default)]
    pub max: Option<Spanned<i64>>,
    #[serde(default)]
    pub aliases: Option<Spanned<std::collections::BTreeMap<String, Spanned<i64>>>>,
}

/// Raw `[[type]]` row, field by field, with spans.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTypeRow {
    pub name: Spanned<String>,
    pub sql: Spanned<String>,
    #[serde(default)]
    pub precision: Option<Spanned<Vec<Spanned<i64>>>>,
    pub arrow: Spanned<String>,
    pub carrier: Spanned<String>,
    pub access: Spanned<String>,
    pub order: Spanned<String>,
    pub equality: Spanned<String>,
    pub numeric: Spanned<String>,
}

/// Raw `[[entry]]` table, field by field, with spans. `state`, `partial`,
/// `result` and `params` are read (whatever their value) only to report
/// that the template declares them now.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEntry {
    pub functions: Spanned<Vec<Spanned<String>>>,
    pub input: Spanned<String>,
    #[serde(default)]
    pub distinct: Option<Spanned<bool>>,
    pub phases: Spanned<Vec<Spanned<String>>>,
    pub types: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    pub state: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    pub partial: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    pub result: Option<Spanned<IgnoredAny>>,
    #[serde(default)]
    pub params: Option<Spanned<IgnoredAny>>,
}

/// One deserialized `[[type]]` or `[[entry]]` table, the file it came from
/// and where it starts.
#[derive(Debug)]
pub(crate) struct RawItem<T> {
    pub source: Source,
    pub at: Location,
    pub raw: T,
}

/// Parses one TOML document; on a syntax error reports the first one (error
/// recovery after it mostly reports its echoes), at its line, and returns
/// `None`. `what` completes the message, e.g. ` in the template declaration`.
pub(crate) fn parse_document<'a>(
    source: &Source,
    text: &'a str,
    what: &str,
    errors: &mut Vec<SpecError>,
) -> Option<Spanned<DeTable<'a>>> {
    let (document, syntax_errors) = DeTable::parse_recoverable(text);
    if let Some(error) = syntax_errors.first() {
        let span = error.span().unwrap_or(0..0);
        errors.push(SpecError::new(
            source.location(&span),
            format!(
                "TOML syntax error{what}: {}; fix the syntax",
                error.message().trim_end()
            ),
        ));
        return None;
    }
    Some(document)
}

/// The `[[key]]` arrays of one file, one per entry of `keys` in that order
/// (empty when the file has none). Syntax errors and top-level keys not in
/// `keys` go to `errors`.
fn read_tables<'a>(
    source: &Source,
    text: &'a str,
    keys: &[&str],
    errors: &mut Vec<SpecError>,
) -> Vec<Vec<Spanned<DeValue<'a>>>> {
    let mut found: Vec<Vec<Spanned<DeValue<'a>>>> = keys.iter().map(|_| Vec::new()).collect();
    let Some(document) = parse_document(source, text, "", errors) else {
        return found;
    };
    let wanted = keys
        .iter()
        .map(|k| format!("[[{k}]]"))
        .collect::<Vec<_>>()
        .join(" and ");
    for (key, value) in document.into_inner() {
        let key_at = source.location(&key.span());
        let Some(index) = keys.iter().position(|k| *k == key.get_ref().as_ref()) else {
            errors.push(SpecError::new(
                key_at,
                format!(
                    "unknown top-level key `{}`; this file holds only {wanted} tables: remove it or move it into one",
                    key.get_ref()
                ),
            ));
            continue;
        };
        match value.into_inner() {
            DeValue::Array(array) => found[index].extend(array),
            _ => errors.push(SpecError::new(
                key_at,
                format!(
                    "`{k}` must be an array of tables; write each one under a [[{k}]] header",
                    k = keys[index]
                ),
            )),
        }
    }
    found
}

/// Deserializes the `[[table_key]]` tables read by [`read_tables`]; shape
/// errors go to `errors` and those tables are left out.
fn deserialize_items<T: for<'de> Deserialize<'de>>(
    source: &Source,
    tables: Vec<Spanned<DeValue<'_>>>,
    table_key: &str,
    errors: &mut Vec<SpecError>,
) -> Vec<RawItem<T>> {
    let mut items = Vec::new();
    for table in tables {
        let span = table.span();
        let at = source.location(&span);
        if !matches!(table.get_ref(), DeValue::Table(_)) {
            errors.push(SpecError::new(
                at,
                format!("every `{table_key}` item must be a table; write it under a [[{table_key}]] header"),
            ));
            continue;
        }
        match T::deserialize(table.into_deserializer()) {
            Ok(raw) => items.push(RawItem {
                source: source.clone(),
                at,
                raw,
            }),
            Err(error) => {
                let error_at = error
                    .span()
                    .map(|s| source.location(&s))
                    .unwrap_or_else(|| at.clone());
                errors.push(SpecError::new(error_at, shape_message(&error, table_key)));
            }
        }
    }
    items
}

/// Rewrites a serde shape error as a sentence that says what to change.
fn shape_message(error: &toml::de::Error, table_key: &str) -> String {
    let message = error.message().trim_end();
    if let Some(rest) = message.strip_prefix("missing field ") {
        format!("[[{table_key}]] is missing field {rest}; add it")
    } else if let Some(rest) = message.strip_prefix("unknown field ") {
        let (field, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        if expected.is_empty() {
            format!("unknown field {field}; remove it")
        } else {
            format!("unknown field {field}; remove or rename it (the fields are {expected})")
        }
    } else if message.starts_with("invalid type") {
        format!("wrong value type: {message}; write a value of the expected type")
    } else {
        format!("{message}; fix the value")
    }
}
