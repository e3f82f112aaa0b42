//! The fused loop's emitter: one Cranelift function per [`Shape`], cached
//! by the shape's description.
//!
//! The function is `extern "C" fn(rows: u64, ids: *const u32, params:
//! *const u64)`. `params` holds, in order: per argument column its values
//! pointer and its validity bitmap (0 when the shape says it has no NULLs);
//! per FILTER column its values bitmap and its validity bitmap; when the
//! shape reads row kinds, the row-kind bytes (Flink's codes, 0..=3); per
//! call the base pointer of each of its state columns. Bitmaps start at
//! bit 0 and are readable as whole 64-bit words up to the last row's. One
//! pass over the rows reads the group id, each column value, bit and row
//! kind once, and applies every call's fold (its retraction on a -U/-D
//! row) where the row is selected (FILTER true, argument not NULL).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I64, I8};
use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlagsData, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

use super::{FunctionBuilder, Lowering, StateRow, Type, Value, Write};
use crate::error::{AggError, Result};

/// One argument column of a fused loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnShape {
    /// Carrier type of the values; `None` when only the validity is read
    /// (COUNT's argument).
    pub ty: Option<Type>,
    /// Whether the batch's column has NULLs (its validity is read).
    pub nullable: bool,
}

/// One call of a fused loop.
#[derive(Debug, Clone)]
pub struct CallShape {
    /// The specialization's name (`MIN<INT>/insert_only`): it fixes the
    /// lowering, so the cache key names it.
    pub name: &'static str,
    /// The rule's lowering.
    pub lowering: Lowering,
    /// Index into [`Shape::columns`] of the argument (`None`: COUNT(*)).
    pub arg: Option<usize>,
    /// Index into [`Shape::filters`] of the FILTER column.
    pub filter: Option<usize>,
}

/// What one compiled loop is specialised for: the distinct argument
/// columns, the distinct FILTER columns (whether each has NULLs) and the
/// calls.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    /// The distinct argument columns.
    pub columns: Vec<ColumnShape>,
    /// The distinct FILTER columns: whether each has NULLs.
    pub filters: Vec<bool>,
    /// The fused calls.
    pub calls: Vec<CallShape>,
    /// Whether the rows carry row kinds (-U/-D rows retract); every call
    /// then has a retraction.
    pub kinds: bool,
}

impl Shape {
    /// The cache key and a readable description, e.g.
    /// `cols[i32?] filters[] MIN<INT>/insert_only(c0) COUNT(*)/insert_only()`.
    pub fn key(&self) -> String {
        let mut key = String::from("cols[");
        for (i, c) in self.columns.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            let ty = c.ty.map_or("valid".to_string(), |t| t.to_string());
            let _ = write!(key, "{sep}{ty}{}", if c.nullable { "?" } else { "" });
        }
        key.push_str("] filters[");
        for (i, &nullable) in self.filters.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            let _ = write!(key, "{sep}b{}", if nullable { "?" } else { "" });
        }
        key.push(']');
        if self.kinds {
            key.push_str(" kinds");
        }
        for call in &self.calls {
            let _ = write!(key, " {}(", call.name);
            if let Some(c) = call.arg {
                let _ = write!(key, "c{c}");
            }
            if let Some(f) = call.filter {
                let _ = write!(key, " filter f{f}");
            }
            key.push(')');
        }
        key
    }

    /// Number of `u64` words the function's `params` holds.
    pub fn param_words(&self) -> usize {
        self.columns.len() * 2
            + self.filters.len() * 2
            + usize::from(self.kinds)
            + self
                .calls
                .iter()
                .map(|c| c.lowering.state.len())
                .sum::<usize>()
    }
}

/// The compiled loop's entry point.
pub type FusedFn = unsafe extern "C" fn(rows: u64, ids: *const u32, params: *const u64);

/// A compiled fused loop and what it cost.
pub struct Compiled {
    entry: FusedFn,
    /// Bytes of machine code.
    pub code_bytes: usize,
    /// Time spent building and compiling the function.
    pub compile_time: Duration,
    /// The function's Cranelift IR after optimization.
    pub ir: String,
    /// Number of `u64` words its `params` must hold ([`Shape::param_words`]).
    pub param_words: usize,
    /// Owns the code memory `entry` points into; freed on drop.
    module: Mutex<Option<JITModule>>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("code_bytes", &self.code_bytes)
            .field("compile_time", &self.compile_time)
            .finish()
    }
}

impl Compiled {
    /// The entry point; calling it is sound only as [`FusedFn`]'s
    /// parameters are documented in this module's header, with every
    /// pointer valid for `rows` rows and every group id below each state
    /// column's length.
    pub fn entry(&self) -> FusedFn {
        self.entry
    }
}

impl Drop for Compiled {
    fn drop(&mut self) {
        let module = self
            .module
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(module) = module {
            // SAFETY: `entry` points into this module's memory and is only
            // reachable through `self`, which is being dropped: no call of
            // it runs now or later.
            unsafe { module.free_memory() };
        }
    }
}

/// Compiled loops by shape key. Shapes are few per job (one per plan and
/// NULL pattern); past `CACHE_LIMIT` new shapes are compiled but not kept.
fn cache() -> &'static Mutex<HashMap<String, Arc<Compiled>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Compiled>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

const CACHE_LIMIT: usize = 512;

/// The compiled loop for `shape`, from the cache or compiled now (the
/// bool: whether it was compiled by this call).
pub fn compile(shape: &Shape) -> Result<(Arc<Compiled>, bool)> {
    let key = shape.key();
    if let Some(found) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok((found.clone(), false));
    }
    let compiled = Arc::new(compile_uncached(shape)?);
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() < CACHE_LIMIT {
        cache.insert(key, compiled.clone());
    }
    Ok((compiled, true))
}

fn jit_error(what: &str, e: impl std::fmt::Display) -> AggError {
    AggError::Unsupported(format!("JIT {what}: {e}"))
}

/// The bitmap words a row reads are fewer than its FILTERs need (a bug in
/// the emitter, reported rather than panicking).
fn out_of_step() -> AggError {
    jit_error(
        "emit",
        "the FILTER bits are out of step with the bitmap words",
    )
}

/// Builds and compiles the loop for `shape`, bypassing the cache (what a
/// plan's first batch costs; the compile-time bench and `aggforge jit`).
pub fn compile_uncached(shape: &Shape) -> Result<Compiled> {
    compile_with(shape, false).map(|(compiled, _)| compiled)
}

/// [`compile_uncached`] and the machine code's listing (Cranelift's
/// disassembly of the final instructions), for `aggforge jit --asm`.
pub fn compile_listing(shape: &Shape) -> Result<(Compiled, String)> {
    compile_with(shape, true)
}

fn compile_with(shape: &Shape, listing: bool) -> Result<(Compiled, String)> {
    let started = Instant::now();
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v).map_err(|e| jit_error("settings", e))
    };
    set(&mut flags, "opt_level", "speed")?;
    set(&mut flags, "is_pic", "false")?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    let isa = cranelift_native::builder()
        .map_err(|e| jit_error("host", e))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| jit_error("target", e))?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let ptr = module.target_config().pointer_type();
    let mut ctx = module.make_context();
    ctx.set_disasm(listing);
    ctx.func
        .signature
        .params
        .extend([AbiParam::new(I64), AbiParam::new(ptr), AbiParam::new(ptr)]);
    let id = module
        .declare_function("fused", Linkage::Local, &ctx.func.signature)
        .map_err(|e| jit_error("declare", e))?;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let mut builder_ctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut builder_ctx);
        emit_loop(&mut b, shape, ptr)?;
        b.seal_all_blocks();
        b.finalize(module.target_config());
    }
    module
        .define_function(id, &mut ctx)
        .map_err(|e| jit_error("compile", e))?;
    let code_bytes = ctx
        .compiled_code()
        .map(|c| c.code_buffer().len())
        .unwrap_or(0);
    let asm = ctx
        .compiled_code()
        .and_then(|c| c.vcode.clone())
        .unwrap_or_default();
    let ir = ctx.func.display().to_string();
    module.clear_context(&mut ctx);
    module
        .finalize_definitions()
        .map_err(|e| jit_error("finalize", e))?;
    let code = module.get_finalized_function(id);
    // SAFETY: `code` is the finalized function declared above with the
    // signature (i64, ptr, ptr) and no results, which is `FusedFn`'s C ABI
    // on this host (`make_context` takes the host's default call convention).
    let entry = unsafe { std::mem::transmute::<*const u8, FusedFn>(code) };
    let compiled = Compiled {
        entry,
        code_bytes,
        compile_time: started.elapsed(),
        ir,
        param_words: shape.param_words(),
        module: Mutex::new(Some(module)),
    };
    Ok((compiled, asm))
}

/// Emits the function body. The rows run in chunks of 64: `chunk` loads
/// each bitmap's 64-bit word for the chunk, `row` folds one row (taking
/// bit 0 of every word, then shifting the words right), and `next` starts
/// the next chunk or returns.
fn emit_loop(b: &mut FunctionBuilder<'_>, shape: &Shape, ptr: Type) -> Result<()> {
    // Input columns, ids and params are read-only and non-trapping (their
    // alignment is not relied on: buffers may come from Java); state is
    // Rust vectors, aligned to their element type.
    let flags = MemFlagsData::new().with_notrap().with_readonly();
    let state_flags = MemFlagsData::trusted();
    let entry = b.create_block();
    let chunk = b.create_block();
    let row_block = b.create_block();
    let next = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (rows, ids, params) = {
        let p = b.block_params(entry);
        (p[0], p[1], p[2])
    };
    let mut word = 0i32;
    let mut param = |b: &mut FunctionBuilder<'_>| {
        let v = b.ins().load(ptr, flags, params, word * 8);
        word += 1;
        v
    };
    // Per column: its values and, if it has NULLs, its validity words.
    let mut columns = Vec::with_capacity(shape.columns.len());
    for c in &shape.columns {
        let values = param(b);
        let validity = param(b);
        columns.push((values, c.nullable.then_some(validity)));
    }
    // Per FILTER: its value words and, if it has NULLs, its validity words.
    let mut filters = Vec::with_capacity(shape.filters.len());
    for &nullable in &shape.filters {
        let values = param(b);
        let validity = param(b);
        filters.push((values, nullable.then_some(validity)));
    }
    let kinds = shape.kinds.then(|| param(b));
    let states: Vec<Vec<Value>> = shape
        .calls
        .iter()
        .map(|call| call.lowering.state.iter().map(|_| param(b)).collect())
        .collect();
    // Every bitmap the rows read, in order: column validities, then each
    // FILTER's values and validity.
    let bitmaps: Vec<Value> = columns
        .iter()
        .filter_map(|(_, validity)| *validity)
        .chain(
            filters
                .iter()
                .flat_map(|(values, validity)| std::iter::once(*values).chain(*validity)),
        )
        .collect();
    b.append_block_param(chunk, I64);
    b.append_block_param(row_block, I64);
    b.append_block_param(row_block, I64);
    for _ in &bitmaps {
        b.append_block_param(row_block, I64);
    }
    b.append_block_param(next, I64);
    let zero = b.ins().iconst(I64, 0);
    b.ins().brif(rows, chunk, &[zero.into()], exit, &[]);

    // chunk(first): the words of rows first..first+64, and the chunk's end.
    b.switch_to_block(chunk);
    let first = b.block_params(chunk)[0];
    let byte = b.ins().ushr_imm_u(first, 3);
    let mut args: Vec<cranelift_codegen::ir::BlockArg> = vec![first.into()];
    let full = b.ins().iadd_imm_s(first, 64);
    let end = b.ins().umin(full, rows);
    args.push(end.into());
    for &bits in &bitmaps {
        let addr = b.ins().iadd(bits, byte);
        args.push(b.ins().load(I64, flags, addr, 0).into());
    }
    b.ins().jump(row_block, &args);

    // row(i, end, words...): one row.
    b.switch_to_block(row_block);
    let (row, end, words) = {
        let p = b.block_params(row_block);
        (p[0], p[1], p[2..].to_vec())
    };
    let mut bit_of = Vec::with_capacity(words.len());
    for &w in &words {
        let bit = b.ins().band_imm_u(w, 1);
        bit_of.push(b.ins().ireduce(I8, bit));
    }
    let mut bits = bit_of.into_iter();
    let id_addr = {
        let offset = b.ins().ishl_imm_u(row, 2);
        b.ins().iadd(ids, offset)
    };
    let id = b.ins().uload32(flags, id_addr, 0);
    // Each column's value and validity bit, each FILTER's bit, read once.
    let mut values = Vec::with_capacity(columns.len());
    for (c, (base, validity)) in shape.columns.iter().zip(&columns) {
        let value = c.ty.map(|ty| {
            let addr = element(b, *base, row, ty);
            b.ins().load(ty, flags, addr, 0)
        });
        let valid = validity.and_then(|_| bits.next());
        values.push((value, valid));
    }
    // Whether the row retracts (-U 1, -D 3: `kernel::is_retract`).
    let retracts = kinds.map(|kinds| {
        let addr = b.ins().iadd(kinds, row);
        let kind = b.ins().load(I8, flags, addr, 0);
        b.ins().band_imm_u(kind, 1)
    });
    let mut passes = Vec::with_capacity(filters.len());
    for (_, validity) in &filters {
        let mut pass = bits.next().ok_or_else(out_of_step)?;
        if validity.is_some() {
            let valid = bits.next().ok_or_else(out_of_step)?;
            pass = b.ins().band(pass, valid);
        }
        passes.push(pass);
    }
    for (call, bases) in shape.calls.iter().zip(&states) {
        let (arg, arg_valid) = match call.arg {
            Some(c) => (values[c].0, values[c].1),
            None => (None, None),
        };
        let filter = call.filter.map(|f| passes[f]);
        let selected = match (arg_valid, filter) {
            (Some(a), Some(f)) => Some(b.ins().band(a, f)),
            (a, f) => a.or(f),
        };
        let addrs = call
            .lowering
            .state
            .iter()
            .zip(bases)
            .map(|(ty, &base)| element(b, base, id, *ty))
            .collect();
        let mut state = StateRow::new(addrs, call.lowering.state.clone(), state_flags);
        (call.lowering.fold)(b, &mut state, arg);
        if let Some(retracts) = retracts {
            let folded = std::mem::take(&mut state.writes);
            state.writes = vec![Write::None; folded.len()];
            let retract = call.lowering.retract.ok_or_else(|| {
                jit_error(
                    "emit",
                    format!("{} has no retraction for -U/-D rows", call.name),
                )
            })?;
            retract(b, &mut state, arg);
            let retracted = std::mem::take(&mut state.writes);
            state.writes = merge_by_kind(b, &mut state, retracts, &folded, &retracted);
        }
        for k in 0..state.writes.len() {
            let stored = match (state.writes[k], selected) {
                (Write::None, _) => continue,
                (Write::Value(v), None) => v,
                (Write::Value(v), Some(sel)) => {
                    let old = state.get(b, k);
                    b.ins().select(sel, v, old)
                }
                (Write::Valid, None) => b.ins().iconst(I8, 1),
                (Write::Valid, Some(sel)) => {
                    let old = state.get(b, k);
                    b.ins().bor(old, sel)
                }
            };
            b.ins().store(state_flags, stored, state.addr(k), 0);
        }
    }
    let next_row = b.ins().iadd_imm_s(row, 1);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, next_row, end);
    let mut args: Vec<cranelift_codegen::ir::BlockArg> = vec![next_row.into(), end.into()];
    for &w in &words {
        args.push(b.ins().ushr_imm_u(w, 1).into());
    }
    b.ins()
        .brif(more, row_block, &args, next, &[next_row.into()]);

    // next(i): the next chunk, or the end.
    b.switch_to_block(next);
    let at = b.block_params(next)[0];
    let more = b.ins().icmp(IntCC::UnsignedLessThan, at, rows);
    b.ins().brif(more, chunk, &[at.into()], exit, &[]);

    b.switch_to_block(exit);
    b.ins().return_(&[]);
    Ok(())
}

/// The writes of a row that retracts where `retracts` (non-zero) and
/// folds otherwise: per state column, the retraction's value or the fold's
/// (the old value where one of them leaves the column alone; a set
/// validity flag is 1).
fn merge_by_kind(
    b: &mut FunctionBuilder<'_>,
    state: &mut StateRow,
    retracts: Value,
    folded: &[Write],
    retracted: &[Write],
) -> Vec<Write> {
    fn value_of(b: &mut FunctionBuilder<'_>, state: &mut StateRow, k: usize, w: Write) -> Value {
        match w {
            Write::None => state.get(b, k),
            Write::Value(v) => v,
            Write::Valid => b.ins().iconst(I8, 1),
        }
    }
    folded
        .iter()
        .zip(retracted)
        .enumerate()
        .map(|(k, (&fold, &retract))| match (fold, retract) {
            (Write::None, Write::None) => Write::None,
            (Write::Valid, Write::Valid) => Write::Valid,
            (fold, retract) => {
                let on_fold = value_of(b, state, k, fold);
                let on_retract = value_of(b, state, k, retract);
                Write::Value(b.ins().select(retracts, on_retract, on_fold))
            }
        })
        .collect()
}

/// The address of element `index` of an array of `ty` at `base`, as
/// `base + (index << log2(size))`: the shape x86-64 lowering folds into
/// one addressing mode (carrier sizes are 1, 2, 4 or 8 bytes).
fn element(b: &mut FunctionBuilder<'_>, base: Value, index: Value, ty: Type) -> Value {
    let offset = match ty.bytes().trailing_zeros() {
        0 => index,
        shift => b.ins().ishl_imm_u(index, i64::from(shift)),
    };
    b.ins().iadd(base, offset)
}
