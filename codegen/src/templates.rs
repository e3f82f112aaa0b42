//! Reading state template declarations: each template file of the
//! runtime (`runtime/src/templates/NAME.rs`) states, in a fenced ```` ```toml ````
//! block of its module doc comment whose first line is the marker
//! [`MARKER`], which functions and input modes it serves, its phases, the
//! numeric classes it accepts and, per numeric class, its partial layout,
//! result type and parameters. This module finds those blocks and reads
//! their TOML with spans; what the values mean is checked in
//! [`crate::validate`].
//!
//! A declaration's keys:
//!
//! ```toml
//! functions = ["SUM"]                   # the functions it serves
//! input = ["insert_only"]               # the input modes it serves
//! input_reason = "..."                  # why not the other mode (optional)
//! distinct = false                      # whether it deduplicates (optional)
//! distinct_view = true                  # also serves DISTINCT under the view of
//!                                       # runtime/src/templates/distinct.rs (optional)
//! phases = ["single", "local", "global"]
//! phases_reason = "..."                 # why not the other phases (optional)
//! numeric = ["integer", "float", "decimal"]  # optional: every class
//! partial = [{ name = "sum", type = "arg" }] # or a table by class
//! result = "arg"                        # or a table by class
//! params.overflow = "wrap"              # or a table by class
//! ```
//!
//! A value "by class" is a table keyed by numeric class (`integer`,
//! `float`, `decimal`, `none`), e.g. `[result]` `integer = "arg"`,
//! `decimal = "DECIMAL(38, s)"`.

use std::path::{Path, PathBuf};

use toml::de::DeValue;
use toml::Spanned;

use crate::error::SpecError;
use crate::load::{Located, Source};
use crate::model::Location;

/// First line of the fenced TOML block that holds a declaration.
pub const MARKER: &str = "# aggforge-declaration";

/// The declarations read from a templates directory (or from in-memory
/// files), with the problems found while reading them; both are reported
/// with the spec errors when specs are loaded against them.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    pub(crate) items: Vec<RawDecl>,
    pub(crate) errors: Vec<SpecError>,
    pub(crate) files: Vec<PathBuf>,
}

impl Templates {
    /// Reads every `*.rs` file of `dir` (the runtime's `src/templates`),
    /// in file-name order. Files without a declaration block (`mod.rs`,
    /// `rules.rs`, ...) are skipped.
    pub fn read_dir(dir: &Path) -> Templates {
        let error = |message: String| Templates {
            errors: vec![SpecError::new(
                Location {
                    file: dir.to_path_buf(),
                    line: 1,
                },
                message,
            )],
            ..Templates::default()
        };
        let listing = match std::fs::read_dir(dir) {
            Ok(listing) => listing,
            Err(e) => {
                return error(format!(
                    "cannot read the templates directory: {e}; pass the runtime's src/templates directory"
                ))
            }
        };
        let mut errors = Vec::new();
        let files = crate::load::read_texts(crate::load::files_in(listing, "rs"), &mut errors);
        let mut templates = Templates::from_sources(&files);
        errors.append(&mut templates.errors);
        templates.errors = errors;
        if templates.items.is_empty() && templates.errors.is_empty() {
            return error(format!(
                "the templates directory holds no template declaration (a ```toml block starting \
                 with `{MARKER}` in a module doc comment); pass the runtime's src/templates directory"
            ));
        }
        templates
    }

    /// Reads in-memory template files given as (path, Rust source) pairs;
    /// the file stem names the template.
    pub fn from_sources<P: AsRef<Path>, T: AsRef<str>>(files: &[(P, T)]) -> Templates {
        let mut templates = Templates::default();
        for (path, text) in files {
            let path = path.as_ref();
            let text = text.as_ref();
            templates.files.push(path.to_path_buf());
            if let Some(block) = declaration_block(text) {
                let source = Source::new(path, &block);
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if let Some(raw) = parse_decl(&source, &block, name, &mut templates.errors) {
                    templates.items.push(raw);
                }
            }
        }
        templates
    }

    /// The template files read, in order (for build tracking).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// The declaration block of a Rust file as TOML text whose line numbers
/// are the file's: every line outside the block is left empty.
fn declaration_block(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let doc = |line: &str| {
        line.strip_prefix("//!")
            .map(|rest| rest.strip_prefix(' ').unwrap_or(rest).to_string())
    };
    let start = lines.windows(2).position(|pair| {
        doc(pair[0]).is_some_and(|l| l.trim() == "```toml")
            && doc(pair[1]).is_some_and(|l| l.trim() == MARKER)
    })?;
    let mut out: Vec<String> = vec![String::new(); start + 1];
    for line in &lines[start + 1..] {
        match doc(line) {
            Some(l) if l.trim() == "```" => break,
            Some(l) => out.push(l),
            None => break,
        }
    }
    Some(out.join("\n") + "\n")
}

/// A value given once for every numeric class, or per class.
#[derive(Debug, Clone)]
pub(crate) enum PerClass<T> {
    /// Not written.
    Absent,
    /// One value for every class.
    All(T),
    /// `class = value` pairs.
    By(Vec<(Located<String>, T)>),
}

/// One `{ name = ..., type = ... }` partial field.
#[derive(Debug, Clone)]
pub(crate) struct RawField {
    pub name: Located<String>,
    pub ty: Located<String>,
}

/// One declaration as written.
#[derive(Debug, Clone)]
pub(crate) struct RawDecl {
    /// The template name (the file stem).
    pub name: String,
    /// The marker line.
    pub at: Location,
    pub functions: Vec<Located<String>>,
    pub functions_at: Location,
    pub input: Vec<Located<String>>,
    pub input_at: Location,
    pub input_reason: Option<String>,
    pub distinct: bool,
    pub distinct_view: bool,
    pub phases: Vec<Located<String>>,
    pub phases_at: Location,
    pub phases_reason: Option<String>,
    pub numeric: Option<Vec<Located<String>>>,
    pub partial: PerClass<Vec<RawField>>,
    pub result: PerClass<Located<String>>,
    pub overflow: PerClass<Located<String>>,
    pub division: PerClass<Located<String>>,
}

/// Walks a declaration's TOML; errors go to `errors`.
struct Walk<'a> {
    source: &'a Source,
    errors: &'a mut Vec<SpecError>,
}

type Value<'i> = Spanned<DeValue<'i>>;

impl Walk<'_> {
    fn at(&self, value: &Value<'_>) -> Location {
        self.source.location(&value.span())
    }

    fn error(&mut self, at: Location, message: impl Into<String>) {
        self.errors.push(SpecError::new(at, message));
    }

    fn string(&mut self, key: &str, value: &Value<'_>) -> Option<Located<String>> {
        match value.get_ref().as_str() {
            Some(text) => Some(Located {
                value: text.to_string(),
                at: self.at(value),
            }),
            None => {
                let at = self.at(value);
                self.error(
                    at,
                    format!(
                        "`{key}` must be a string, not {}; write it in quotes",
                        value.get_ref().type_str()
                    ),
                );
                None
            }
        }
    }

    fn strings(&mut self, key: &str, value: &Value<'_>) -> Vec<Located<String>> {
        let Some(array) = value.get_ref().as_array() else {
            let at = self.at(value);
            self.error(
                at,
                format!("`{key}` must be an array of strings, e.g. [\"...\"]"),
            );
            return Vec::new();
        };
        array
            .iter()
            .filter_map(|item| self.string(key, item))
            .collect()
    }

    /// A value given for every class (`leaf`), or a table by class.
    fn per_class<T>(
        &mut self,
        key: &str,
        value: &Value<'_>,
        mut leaf: impl FnMut(&mut Self, &Value<'_>) -> Option<T>,
    ) -> PerClass<T> {
        let Some(table) = value.get_ref().as_table() else {
            return leaf(self, value).map_or(PerClass::Absent, PerClass::All);
        };
        if table.is_empty() {
            let at = self.at(value);
            self.error(
                at,
                format!("`{key}` by numeric class is empty; give a value per class"),
            );
        }
        let mut by = Vec::new();
        for (class, item) in table.iter() {
            let class = Located {
                value: class.get_ref().to_string(),
                at: self.source.location(&class.span()),
            };
            if let Some(v) = leaf(self, item) {
                by.push((class, v));
            }
        }
        PerClass::By(by)
    }

    fn fields(&mut self, value: &Value<'_>) -> Option<Vec<RawField>> {
        let Some(array) = value.get_ref().as_array() else {
            let at = self.at(value);
            self.error(
                at,
                "`partial` must be an array of { name = \"...\", type = \"...\" } tables (or a table \
                 of such arrays by numeric class)",
            );
            return None;
        };
        let mut fields = Vec::new();
        for item in array {
            let at = self.at(item);
            let Some(table) = item.get_ref().as_table() else {
                self.error(
                    at,
                    "a partial field must be a table { name = \"...\", type = \"...\" }",
                );
                return None;
            };
            let (mut name, mut ty) = (None, None);
            for (key, v) in table.iter() {
                match key.get_ref().as_ref() {
                    "name" => name = self.string("name", v),
                    "type" => ty = self.string("type", v),
                    other => {
                        let key_at = self.source.location(&key.span());
                        self.error(
                            key_at,
                            format!(
                                "unknown partial field key `{other}`; a field has `name` and `type`"
                            ),
                        );
                    }
                }
            }
            match (name, ty) {
                (Some(name), Some(ty)) => fields.push(RawField { name, ty }),
                _ => {
                    self.error(
                        at,
                        "a partial field needs both `name` and `type`; add the missing one",
                    );
                    return None;
                }
            }
        }
        Some(fields)
    }
}

const KEYS: &str = "functions, input, input_reason, distinct, distinct_view, phases, \
                    phases_reason, numeric, partial, result, params";

/// Parses one declaration block.
fn parse_decl(
    source: &Source,
    text: &str,
    name: String,
    errors: &mut Vec<SpecError>,
) -> Option<RawDecl> {
    let document =
        crate::load::parse_document(source, text, " in the template declaration", errors)?;
    let at = source.location(&(text.find(MARKER).unwrap_or(0)..0));
    let before = errors.len();
    let mut walk = Walk { source, errors };
    let mut raw = RawDecl {
        name,
        at: at.clone(),
        functions: Vec::new(),
        functions_at: at.clone(),
        input: Vec::new(),
        input_at: at.clone(),
        input_reason: None,
        distinct: false,
        distinct_view: false,
        phases: Vec::new(),
        phases_at: at.clone(),
        phases_reason: None,
        numeric: None,
        partial: PerClass::Absent,
        result: PerClass::Absent,
        overflow: PerClass::Absent,
        division: PerClass::Absent,
    };
    let (mut has_functions, mut has_input, mut has_phases) = (false, false, false);
    for (key, value) in document.get_ref().iter() {
        let key_at = source.location(&key.span());
        match key.get_ref().as_ref() {
            "functions" => {
                has_functions = true;
                raw.functions_at = walk.at(value);
                raw.functions = walk.strings("functions", value);
            }
            "input" => {
                has_input = true;
                raw.input_at = walk.at(value);
                raw.input = walk.strings("input", value);
            }
            "input_reason" => {
                raw.input_reason = walk.string("input_reason", value).map(|s| s.value)
            }
            "distinct" => match value.get_ref().as_bool() {
                Some(b) => raw.distinct = b,
                None => walk.error(key_at, "`distinct` must be true or false"),
            },
            "distinct_view" => match value.get_ref().as_bool() {
                Some(b) => raw.distinct_view = b,
                None => walk.error(key_at, "`distinct_view` must be true or false"),
            },
            "phases" => {
                has_phases = true;
                raw.phases_at = walk.at(value);
                raw.phases = walk.strings("phases", value);
            }
            "phases_reason" => {
                raw.phases_reason = walk.string("phases_reason", value).map(|s| s.value)
            }
            "numeric" => raw.numeric = Some(walk.strings("numeric", value)),
            "partial" => raw.partial = walk.per_class("partial", value, |w, v| w.fields(v)),
            "result" => raw.result = walk.per_class("result", value, |w, v| w.string("result", v)),
            "params" => match value.get_ref().as_table() {
                Some(params) => {
                    for (param, v) in params.iter() {
                        match param.get_ref().as_ref() {
                            "overflow" => {
                                raw.overflow =
                                    walk.per_class("overflow", v, |w, v| w.string("overflow", v))
                            }
                            "division" => {
                                raw.division =
                                    walk.per_class("division", v, |w, v| w.string("division", v))
                            }
                            other => {
                                let param_at = source.location(&param.span());
                                walk.error(
                                    param_at,
                                    format!(
                                        "unknown parameter `{other}`; the parameters are overflow, division"
                                    ),
                                );
                            }
                        }
                    }
                }
                None => walk.error(
                    key_at,
                    "`params` must be a table, e.g. params.overflow = \"wrap\"",
                ),
            },
            other => walk.error(
                key_at,
                format!(
                    "unknown declaration key `{other}`; remove or rename it (the keys are {KEYS})"
                ),
            ),
        }
    }
    for (present, key) in [
        (has_functions, "functions"),
        (has_input, "input"),
        (has_phases, "phases"),
    ] {
        if !present {
            walk.error(
                at.clone(),
                format!("the template declaration is missing `{key}`; add it"),
            );
        }
    }
    if matches!(raw.result, PerClass::Absent) && walk.errors.len() == before {
        walk.error(
            at.clone(),
            "the template declaration is missing `result`; add it (a type expression, or a table by numeric class)",
        );
    }
    (errors.len() == before).then_some(raw)
}
