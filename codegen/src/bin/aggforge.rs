//! The `aggforge` command line tool: validates spec directories and shows
//! what they specialize.
//!
//! Exit codes: 0 success, 1 spec errors, 2 usage errors (including unknown
//! filter names).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use aggforge_codegen::coverage::{self, Filter, INPUT_MODES};
use aggforge_codegen::model::{Function, InputMode, Phase, SpecSet};
use aggforge_codegen::validate::unknown_name;
use aggforge_codegen::{load_dir, SpecErrors};

/// Code-generating aggregate compiler: spec validation and coverage.
#[derive(Debug, Parser)]
#[command(name = "aggforge", version)]
struct Cli {
    /// Spec directory [default: the nearest `specs` directory holding
    /// types.toml at or above the current directory, else the workspace's]
    #[arg(long, global = true, value_name = "DIR")]
    specs: Option<PathBuf>,

    /// State template directory whose files declare each template
    /// [default: the nearest `runtime/src/templates` at or above the
    /// current directory, else the workspace's]
    #[arg(long, global = true, value_name = "DIR")]
    templates: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

/// Subcommands. (`expand`, which prints generated code, lives beside these.)
#[derive(Debug, Subcommand)]
enum Command {
    /// Validate the specs; print a summary, or every error as file:line: message.
    Check,
    /// Print the coverage matrix: function x type x phase x input x DISTINCT.
    List(ListArgs),
    /// Print the generated Rust of one specialization, e.g.
    /// `aggforge expand MIN INT single` or `aggforge expand COUNT_STAR local`.
    Expand(ExpandArgs),
    /// Print the JIT's fused loop for a call list (Cranelift IR, machine-code
    /// size, compile time), e.g. `aggforge jit 'MIN(INT), MAX(INT), COUNT(*)'`.
    /// Runs `aggforge-jit` from beside this binary (the JIT lives in the
    /// runtime: `cargo build -p aggforge-runtime --bin aggforge-jit`).
    Jit {
        /// `[--nulls] '<call list>'` or `'<plan JSON>'`, as aggforge-jit takes.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
}

/// Arguments of `aggforge expand`.
#[derive(Debug, Args)]
struct ExpandArgs {
    /// FUNCTION [TYPE] [PHASE]: a function (MIN, COUNT_STAR, ...), its type
    /// row from types.toml (none for COUNT_STAR), and a phase (single,
    /// local, global; default single).
    #[arg(value_name = "FUNCTION [TYPE] [PHASE]", num_args = 1..=3, required = true)]
    words: Vec<String>,
    /// Input mode of the specialization: insert_only or retracting.
    #[arg(long, value_name = "MODE", default_value = "insert_only")]
    input: String,
}

/// Filters of `aggforge list`.
#[derive(Debug, Args)]
struct ListArgs {
    /// Only this function (MIN, MAX, COUNT_STAR, COUNT, SUM, SUM0, AVG).
    #[arg(long, value_name = "F")]
    function: Option<String>,
    /// Only this type row name from types.toml (`*` for COUNT_STAR).
    #[arg(long = "type", value_name = "T")]
    ty: Option<String>,
    /// Only this phase (single, local, global).
    #[arg(long, value_name = "P")]
    phase: Option<String>,
    /// Only this input mode (insert_only, retracting).
    #[arg(long, value_name = "I")]
    input: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let dirs = Dirs {
        specs: cli.specs.clone().unwrap_or_else(default_specs_dir),
        templates: cli.templates.clone().unwrap_or_else(default_templates_dir),
    };
    match &cli.command {
        Command::Check => check(&dirs),
        Command::List(args) => list(&dirs, args),
        Command::Expand(args) => expand(&dirs, args),
        Command::Jit { args } => jit(args),
    }
}

/// The spec directory and the state template directory.
struct Dirs {
    specs: PathBuf,
    templates: PathBuf,
}

impl Dirs {
    fn load(&self) -> Result<SpecSet, SpecErrors> {
        load_dir(&self.specs, &self.templates)
    }
}

/// Writes `text` to standard output. A reader that stops early (`aggforge
/// list | head`) closes the pipe; that ends the output, not with a panic.
fn emit(text: &str) -> ExitCode {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `aggforge check`.
fn check(dirs: &Dirs) -> ExitCode {
    match dirs.load() {
        Ok(specs) => {
            println!(
                "ok: {} type rows, {} state templates, {} entries, {} specializations",
                specs.types.len(),
                specs.templates.len(),
                specs.entries.len(),
                specs.specializations().len()
            );
            ExitCode::SUCCESS
        }
        Err(errors) => report(&errors),
    }
}

/// `aggforge list`.
fn list(dirs: &Dirs, args: &ListArgs) -> ExitCode {
    let specs = match dirs.load() {
        Ok(specs) => specs,
        Err(errors) => return report(&errors),
    };
    let filter = match build_filter(&specs, args) {
        Ok(filter) => filter,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let rows: Vec<_> = coverage::coverage(&specs)
        .into_iter()
        .filter(|row| filter.matches(row))
        .collect();
    let specialized = rows.iter().filter(|r| r.status.is_specialized()).count();
    emit(&format!(
        "{}{specialized} of {} combinations specialized\n",
        coverage::render_table(&rows),
        rows.len()
    ))
}

/// Resolves filter names; unknown names are errors listing the known ones.
fn build_filter(specs: &SpecSet, args: &ListArgs) -> Result<Filter, String> {
    let mut filter = Filter::default();
    if let Some(text) = &args.function {
        filter.function = Some(Function::parse(text).ok_or_else(|| {
            unknown_name("function", text, Function::ALL.iter().map(|f| f.as_str()))
        })?);
    }
    if let Some(text) = &args.ty {
        let names: Vec<&str> = std::iter::once("*")
            .chain(specs.types.iter().map(|t| t.name.as_str()))
            .collect();
        if !names.contains(&text.as_str()) {
            return Err(unknown_name("type", text, names.iter().copied()));
        }
        filter.ty = Some(text.clone());
    }
    if let Some(text) = &args.phase {
        filter.phase =
            Some(Phase::parse(text).ok_or_else(|| {
                unknown_name("phase", text, Phase::ALL.iter().map(|p| p.as_str()))
            })?);
    }
    if let Some(text) = &args.input {
        filter.input = Some(InputMode::parse(text).ok_or_else(|| {
            unknown_name("input mode", text, INPUT_MODES.iter().map(|m| m.as_str()))
        })?);
    }
    Ok(filter)
}

/// `aggforge expand`: unknown names are errors listing the known ones (exit 1).
fn expand(dirs: &Dirs, args: &ExpandArgs) -> ExitCode {
    let specs = match dirs.load() {
        Ok(specs) => specs,
        Err(errors) => return report(&errors),
    };
    let words = &args.words;
    let function = words[0].as_str();
    let (ty, phase) = match &words[1..] {
        [] => (None, None),
        [one] if Phase::parse(one).is_some() => (None, Some(one.as_str())),
        [one] => (Some(one.as_str()), None),
        [ty, phase] => (Some(ty.as_str()), Some(phase.as_str())),
        _ => (None, None),
    };
    // `*` names the absent argument of COUNT(*), as `aggforge list` shows it.
    let ty = ty.filter(|t| *t != "*");
    let phase = match phase {
        None => Phase::Single,
        Some(text) => match Phase::parse(text) {
            Some(phase) => phase,
            None => {
                eprintln!(
                    "error: {}",
                    unknown_name("phase", text, Phase::ALL.iter().map(|p| p.as_str()))
                );
                return ExitCode::from(1);
            }
        },
    };
    let Some(input) = InputMode::parse(&args.input) else {
        eprintln!(
            "error: {}",
            unknown_name(
                "input mode",
                &args.input,
                INPUT_MODES.iter().map(|m| m.as_str())
            )
        );
        return ExitCode::from(1);
    };
    match aggforge_codegen::emit_rust::expand(&specs, function, ty, phase, input) {
        Ok(code) => emit(&code),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// Prints spec errors to stderr; exit code 1.
fn report(errors: &SpecErrors) -> ExitCode {
    for error in errors {
        eprintln!("{error}");
    }
    eprintln!(
        "{} error{} in the specs",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    ExitCode::from(1)
}

/// The nearest `specs` directory holding `types.toml` at or above the
/// current directory (as a relative path, so errors read `specs/x.toml:3`
/// or `../specs/x.toml:3`), else the
/// workspace's `specs` directory.
fn default_specs_dir() -> PathBuf {
    nearest(Path::new("specs"), "types.toml")
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs"))
}

/// The nearest `runtime/src/templates` directory at or above the current
/// directory (relative, as [`default_specs_dir`]), else the workspace's.
fn default_templates_dir() -> PathBuf {
    let templates = Path::new("runtime").join("src").join("templates");
    nearest(&templates, "mod.rs").unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(templates)
    })
}

/// `dir` (relative to the current directory or one of its ancestors, as a
/// relative path) where it holds `file`.
fn nearest(dir: &Path, file: &str) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    for (up, ancestor) in cwd.ancestors().enumerate() {
        if ancestor.join(dir).join(file).is_file() {
            let mut relative = PathBuf::new();
            for _ in 0..up {
                relative.push("..");
            }
            return Some(relative.join(dir));
        }
    }
    None
}

/// Runs the `aggforge-jit` binary beside this one with `args`.
fn jit(args: &[String]) -> ExitCode {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("aggforge-jit")));
    let Some(tool) = beside.filter(|path| path.exists()) else {
        eprintln!(
            "aggforge jit: aggforge-jit is not built beside this binary; run \
             `cargo run -p aggforge-runtime --bin aggforge-jit -- <call list>`"
        );
        return ExitCode::from(2);
    };
    match std::process::Command::new(tool).args(args).status() {
        Ok(status) => ExitCode::from(
            status
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .unwrap_or(1),
        ),
        Err(e) => {
            eprintln!("aggforge jit: {e}");
            ExitCode::from(2)
        }
    }
}
