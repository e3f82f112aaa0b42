//! `aggforge-jit` (also reached as `aggforge jit`): compiles a call list's
//! fused loop and prints its Cranelift IR, the machine-code size and the
//! compile time.
//!
//! The call list is a short text form, `MIN(INT), MAX(INT), COUNT(*),
//! SUM(BIGINT) FILTER`, where calls over the same type read one column and
//! `FILTER` reads one BOOLEAN column, or the plan JSON an operator carries
//! (`{"version":1,...}`). `--nulls` compiles the variant for batches whose
//! columns hold NULLs (validity bits read); `--retracting` takes the
//! calls' retracting specializations and compiles the variant that reads
//! row kinds (a plan JSON says its own input mode); `--asm` also prints
//! the machine code (Cranelift's listing). Exit codes: 0 compiled, 1 the
//! list does not fuse or compile, 2 usage errors.

use std::io::Write;
use std::process::ExitCode;

use aggforge_runtime::error::{AggError, Result};
use aggforge_runtime::jit::{compile_listing, Fused};
use aggforge_runtime::plan::{arrow_type, AggCall, AggPlan};
use aggforge_runtime::registry;
use aggforge_runtime::types::{InputMode, JitMode, Phase, SqlType};

const USAGE: &str = "usage: aggforge-jit [--nulls] [--retracting] [--asm] \
     '<MIN(INT), MAX(INT), COUNT(*), ...>' | '<plan JSON>'";

/// Splits `MIN(INT), SUM(DECIMAL(10, 2)) FILTER` at top-level commas.
fn split_calls(text: &str) -> Vec<&str> {
    let (mut depth, mut start, mut parts) = (0i32, 0, Vec::new());
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// The calls of the text form: argument columns by type (first use
/// order), then one FILTER column.
fn parse_calls(text: &str) -> Result<Vec<AggCall>> {
    let mut types: Vec<SqlType> = Vec::new();
    let mut calls = Vec::new();
    let parts = split_calls(text);
    for part in &parts {
        let (call, filtered) = match part.strip_suffix("FILTER") {
            Some(call) => (call.trim(), true),
            None => (*part, false),
        };
        let open = call.find('(').filter(|_| call.ends_with(')'));
        let open =
            open.ok_or_else(|| AggError::Plan(format!("`{part}`: expected FUNCTION(TYPE)")))?;
        let function = call[..open].trim().to_ascii_uppercase();
        let arg = call[open + 1..call.len() - 1].trim();
        let (function, arg) = match (function.as_str(), arg) {
            ("COUNT", "*") => ("COUNT_STAR".to_string(), None),
            (_, arg) => (function, Some(arg.parse::<SqlType>()?)),
        };
        let column = arg.map(|ty| match types.iter().position(|t| *t == ty) {
            Some(i) => i,
            None => {
                types.push(ty);
                types.len() - 1
            }
        });
        calls.push((function, arg, column, filtered));
    }
    let filter_column = 1 + types.len();
    Ok(calls
        .into_iter()
        .map(|(function, arg, column, filtered)| AggCall {
            function,
            args: column.map(|c| 1 + c).into_iter().collect(),
            arg_types: arg.into_iter().collect(),
            distinct: false,
            filter: filtered.then_some(filter_column),
            result_type: None,
            retracts: true,
        })
        .collect())
}

/// What to compile and print besides the IR.
struct Flags {
    nulls: bool,
    retracting: bool,
    asm: bool,
}

fn run(text: &str, flags: &Flags) -> Result<()> {
    let Flags {
        nulls,
        retracting,
        asm,
    } = *flags;
    let (calls, phase, input) = if text.trim_start().starts_with('{') {
        let plan = AggPlan::from_json(text)?;
        (plan.calls, plan.phase, plan.input)
    } else {
        let input = match retracting {
            true => InputMode::Retracting,
            false => InputMode::InsertOnly,
        };
        (parse_calls(text)?, Phase::Local, input)
    };
    let mut accs = Vec::with_capacity(calls.len());
    for call in &calls {
        let admission = registry::lookup(
            &call.function,
            call.arg_types.first(),
            phase,
            input,
            call.distinct,
        )
        .map_err(|reason| AggError::Plan(format!("{}: not admitted: {reason}", call.function)))?;
        accs.push(admission.create_call(&call.arg_types, phase)?);
    }
    let arg_types: Vec<Vec<_>> = calls
        .iter()
        .map(|c| c.arg_types.iter().map(arrow_type).collect())
        .collect();
    let retracting = input == InputMode::Retracting;
    let planned = Fused::plan(JitMode::On, &calls, &accs, &arg_types, retracting);
    let mut out = format!("; {}\n", planned.status);
    let fused = planned
        .fused
        .ok_or_else(|| AggError::Unsupported(planned.status.clone()))?;
    let mut shape = fused.shape().clone();
    if nulls {
        shape.columns.iter_mut().for_each(|c| c.nullable = true);
        shape.filters.iter_mut().for_each(|f| *f = true);
    }
    shape.kinds = retracting;
    let (compiled, listing) = compile_listing(&shape)?;
    out.push_str(&format!("; shape: {}\n", shape.key()));
    for (acc, &covered) in accs.iter().zip(fused.covered()) {
        let how = if covered { "fused" } else { "static kernel" };
        out.push_str(&format!("; {:<28} {how}\n", acc.name()));
    }
    out.push_str(&format!(
        "; machine code: {} bytes, compiled in {:.3} ms\n",
        compiled.code_bytes,
        compiled.compile_time.as_secs_f64() * 1e3
    ));
    out.push_str(&compiled.ir);
    if asm {
        out.push_str("\n; machine code\n");
        out.push_str(&listing);
    }
    // A closed pipe (`| head`) ends the output, not the program with a panic.
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(())
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |args: &mut Vec<String>, name: &str| {
        let set = args.iter().any(|a| a == name);
        args.retain(|a| a != name);
        set
    };
    let flags = Flags {
        nulls: flag(&mut args, "--nulls"),
        retracting: flag(&mut args, "--retracting"),
        asm: flag(&mut args, "--asm"),
    };
    if args.len() != 1 || args[0].starts_with('-') {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    match run(&args[0], &flags) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("aggforge-jit: {e}");
            ExitCode::from(1)
        }
    }
}
