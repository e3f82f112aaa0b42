//! The fused loop's emitter: one Cranelift function per [`Shape`], cached
//! by the shape's description.
//!
//! The function is `extern "C" fn(rows: u64, ids: *const u32, params:
//! *const u64)`. `params` holds, in order: per argument column its values
//! pointer, validity pointer (0 when the shape says it has no NULLs) and
//! validity bit offset; per FILTER column its values pointer and bit
//! offset, then its validity pointer and bit offset; per call the base
//! pointer of each of its state columns. One pass over the rows reads the
//! group id, each column value and bit once, and applies every call's fold
//! where the row is selected (FILTER true, argument not NULL).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64, I8};
use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlagsData, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

use super::{FunctionBuilder, Lowering, Type, Value};
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
        self.columns.len() * 3
            + self.filters.len() * 4
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
    let compiled = Arc::new(build(shape)?);
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() < CACHE_LIMIT {
        cache.insert(key, compiled.clone());
    }
    Ok((compiled, true))
}

fn jit_error(what: &str, e: impl std::fmt::Display) -> AggError {
    AggError::Unsupported(format!("JIT {what}: {e}"))
}

/// Builds and compiles the loop for `shape`.
fn build(shape: &Shape) -> Result<Compiled> {
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
    Ok(Compiled {
        entry,
        code_bytes,
        compile_time: started.elapsed(),
        ir,
        module: Mutex::new(Some(module)),
    })
}

/// The row's bit `pos` of the bitmap at `base`, as an `I8` 0 or 1.
fn bit(b: &mut FunctionBuilder<'_>, input: MemFlagsData, base: Value, pos: Value) -> Value {
    let byte_index = b.ins().ushr_imm_u(pos, 3);
    let addr = b.ins().iadd(base, byte_index);
    let byte = b.ins().uload8(I32, input, addr, 0);
    let shift = b.ins().band_imm_u(pos, 7);
    let shift = b.ins().ireduce(I32, shift);
    let shifted = b.ins().ushr(byte, shift);
    let one = b.ins().band_imm_u(shifted, 1);
    b.ins().ireduce(I8, one)
}

/// Emits the function body: entry block loads `params`, one loop block per
/// row.
fn emit_loop(b: &mut FunctionBuilder<'_>, shape: &Shape, ptr: Type) -> Result<()> {
    // Input columns, ids and params are read-only and non-trapping (their
    // alignment is not relied on: buffers may come from Java); state is
    // Rust vectors, aligned to their element type.
    let flags = MemFlagsData::new().with_notrap().with_readonly();
    let state_flags = MemFlagsData::trusted();
    let entry = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(body, I64);
    b.switch_to_block(entry);
    let (rows, ids, params) = {
        let p = b.block_params(entry);
        (p[0], p[1], p[2])
    };
    let mut word = 0i32;
    let mut next = |b: &mut FunctionBuilder<'_>| {
        let v = b.ins().load(ptr, flags, params, word * 8);
        word += 1;
        v
    };
    // Per column: (values, Some((validity, offset))).
    let mut columns = Vec::with_capacity(shape.columns.len());
    for c in &shape.columns {
        let values = next(b);
        let validity = next(b);
        let offset = next(b);
        columns.push((values, c.nullable.then_some((validity, offset))));
    }
    let mut filters = Vec::with_capacity(shape.filters.len());
    for &nullable in &shape.filters {
        let values = next(b);
        let offset = next(b);
        let validity = next(b);
        let validity_offset = next(b);
        filters.push((
            (values, offset),
            nullable.then_some((validity, validity_offset)),
        ));
    }
    let mut states = Vec::with_capacity(shape.calls.len());
    for call in &shape.calls {
        let bases: Vec<Value> = call.lowering.state.iter().map(|_| next(b)).collect();
        states.push(bases);
    }
    let zero = b.ins().iconst(I64, 0);
    b.ins().brif(rows, body, &[zero.into()], exit, &[]);

    b.switch_to_block(body);
    let row = b.block_params(body)[0];
    let id_addr = {
        let offset = b.ins().ishl_imm_u(row, 2);
        b.ins().iadd(ids, offset)
    };
    let id = b.ins().uload32(flags, id_addr, 0);
    // Each column's value and validity bit, each FILTER's bit, read once.
    let mut values = Vec::with_capacity(columns.len());
    for (c, (base, validity)) in shape.columns.iter().zip(&columns) {
        let value = c.ty.map(|ty| {
            let offset = b.ins().imul_imm_u(row, i64::from(ty.bytes()));
            let addr = b.ins().iadd(*base, offset);
            b.ins().load(ty, flags, addr, 0)
        });
        let valid = validity.map(|(bits, off)| {
            let pos = b.ins().iadd(off, row);
            bit(b, flags, bits, pos)
        });
        values.push((value, valid));
    }
    let mut passes = Vec::with_capacity(filters.len());
    for ((bits, off), validity) in &filters {
        let pos = b.ins().iadd(*off, row);
        let mut pass = bit(b, flags, *bits, pos);
        if let Some((vbits, voff)) = validity {
            let pos = b.ins().iadd(*voff, row);
            let valid = bit(b, flags, *vbits, pos);
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
        let mut addrs = Vec::with_capacity(bases.len());
        let mut old = Vec::with_capacity(bases.len());
        for (&ty, &base) in call.lowering.state.iter().zip(bases) {
            let offset = b.ins().imul_imm_u(id, i64::from(ty.bytes()));
            let addr = b.ins().iadd(base, offset);
            old.push(b.ins().load(ty, state_flags, addr, 0));
            addrs.push(addr);
        }
        let new = (call.lowering.fold)(b, &old, arg);
        for ((addr, old), new) in addrs.into_iter().zip(old).zip(new) {
            let stored = match selected {
                Some(sel) => b.ins().select(sel, new, old),
                None => new,
            };
            b.ins().store(state_flags, stored, addr, 0);
        }
    }
    let next_row = b.ins().iadd_imm_s(row, 1);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, next_row, rows);
    b.ins().brif(more, body, &[next_row.into()], exit, &[]);

    b.switch_to_block(exit);
    b.ins().return_(&[]);
    Ok(())
}
