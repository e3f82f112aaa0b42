//! The bridge's error type: everything that can go wrong between a Java
//! call and the runtime, turned into one Java exception message.

use aggforge_runtime::error::AggError;
use thiserror::Error;

/// A failure of one native call; its `Display` text is the message of the
/// Java exception the call raises.
#[derive(Debug, Error)]
pub enum BridgeError {
    /// The runtime refused the plan, the batch or the snapshot.
    #[error(transparent)]
    Runtime(#[from] AggError),
    /// The handle names no open operator.
    #[error("invalid handle {0:#x}: no open native aggregate has it (closed, or never created)")]
    Handle(u64),
    /// An Arrow C Data Interface struct was missing or malformed.
    #[error("C data interface: {0}")]
    Ffi(String),
    /// An Arrow error while importing or exporting a batch.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A JNI call failed (a Java exception may already be pending).
    #[error("jni: {0}")]
    Jni(#[from] jni::errors::Error),
    /// Native code panicked; the operator that panicked is unusable.
    #[error("panic in native code: {0}")]
    Panic(String),
    /// The operator panicked in an earlier call and may hold half-applied
    /// state.
    #[error("the native aggregate is unusable: an earlier call panicked")]
    Poisoned,
}

/// Result alias of the bridge.
pub type BridgeResult<T> = Result<T, BridgeError>;
