//! `aggforge-jit`, the JIT inspector: the text form and a plan's JSON
//! print the fused loop's IR and size; lists that do not fuse and bad
//! input fail with a sentence.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aggforge-jit"))
        .args(args)
        .output()
        .expect("aggforge-jit runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_call_list_prints_its_fused_loop() {
    let out = run(&["MIN(INT), MAX(INT), COUNT(*) FILTER, MIN(VARCHAR)"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.starts_with("; fused 3 of 4 calls"), "{text}");
    assert!(
        text.contains("; MIN<VARCHAR>/insert_only     static kernel"),
        "{text}"
    );
    assert!(text.contains("; machine code: "), "{text}");
    assert!(text.contains("function u0:0(i64, i64, i64)"), "{text}");
    assert!(text.contains("smin") && text.contains("smax"), "{text}");
    // Without --nulls no validity word is read: one bitmap (the FILTER's).
    let nulls = stdout(&run(&["--nulls", "MIN(INT), MAX(INT), COUNT(*) FILTER"]));
    assert!(nulls.contains("cols[i32?] filters[b?]"), "{nulls}");
    assert!(text.contains("cols[i32] filters[b]"), "{text}");
}

#[test]
fn a_plan_json_prints_its_fused_loop() {
    let plan = r#"{"version":1,"key_columns":[0],"key_types":["INT"],"calls":[
        {"function":"SUM","args":[1],"arg_types":["BIGINT"],"distinct":false,"filter":null},
        {"function":"AVG","args":[1],"arg_types":["BIGINT"],"distinct":false,"filter":null}],
        "phase":"local","input":"insert_only","emission":"mini_batch",
        "generate_update_before":true,"state_ttl_ms":0,"memory_budget_bytes":1048576,
        "max_parallelism":128}"#;
    let out = run(&[plan]);
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("; fused 2 of 2 calls"), "{text}");
}

#[test]
fn lists_that_do_not_fuse_and_bad_input_fail_with_a_sentence() {
    let out = run(&["MIN(VARCHAR)"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no call has a fixed-width lowering"), "{err}");
    let out = run(&["MIN INT"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected FUNCTION(TYPE)"));
    assert_eq!(run(&[]).status.code(), Some(2));
}

#[test]
fn retracting_lists_read_row_kinds_and_asm_prints_the_machine_code() {
    let out = run(&[
        "--retracting",
        "--asm",
        "SUM(BIGINT), COUNT(*), MAX(BIGINT)",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    // MAX over retracting input keeps its multiset: not fused.
    assert!(text.starts_with("; fused 2 of 3 calls"), "{text}");
    assert!(
        text.contains("filters[] kinds SUM<BIGINT>/retracting"),
        "{text}"
    );
    assert!(
        text.contains("; MAX<BIGINT>/retracting       static kernel"),
        "{text}"
    );
    // Sum and count are added to and subtracted from, picked by the kind.
    assert!(text.contains("isub") && text.contains("select"), "{text}");
    assert!(text.contains("\n; machine code\n"), "{text}");
    assert!(text.contains("ret"), "{text}");
    let plain = stdout(&run(&["SUM(BIGINT), COUNT(*)"]));
    assert!(
        !plain.contains("kinds") && !plain.contains("\n; machine code\n"),
        "{plain}"
    );
}
