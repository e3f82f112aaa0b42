//! The one boundary every native entry point goes through: it runs the
//! call's body, catches any panic, and turns every error into a Java
//! exception, so nothing native can crash the JVM.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::JNIEnv;

use crate::error::{BridgeError, BridgeResult};

/// Java class of the exceptions native calls raise.
pub const EXCEPTION_CLASS: &str = "dev/aggforge/flink/nativelib/AggforgeNativeException";

/// Runs `body`, turning a panic into [`BridgeError::Panic`]. The only
/// `catch_unwind` of the bridge.
pub fn run<T>(body: impl FnOnce() -> BridgeResult<T>) -> BridgeResult<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => Err(BridgeError::Panic(panic_message(payload.as_ref()))),
    }
}

/// The text of a panic payload (`panic!` with a literal or a formatted
/// message), else a generic description.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The entry point wrapper: runs `body` through [`run`]; on error raises
/// an `AggforgeNativeException` with the error's message (unless a Java
/// exception is already pending, which then propagates) and returns
/// `fallback`, the value Java never sees because the exception is thrown.
pub fn entry<'local, T>(
    env: &mut JNIEnv<'local>,
    fallback: T,
    body: impl FnOnce(&mut JNIEnv<'local>) -> BridgeResult<T>,
) -> T {
    match run(|| body(env)) {
        Ok(value) => value,
        Err(error) => {
            throw(env, &error);
            fallback
        }
    }
}

/// Raises `error` in Java. Never panics: if even creating the exception
/// fails, the JVM has an exception (e.g. NoClassDefFoundError) pending.
fn throw(env: &mut JNIEnv<'_>, error: &BridgeError) {
    if env.exception_check().unwrap_or(true) {
        return;
    }
    let _ = env.throw_new(EXCEPTION_CLASS, error.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use aggforge_runtime::error::AggError;

    #[test]
    fn value_passes_through() {
        assert_eq!(run(|| Ok(7)).unwrap(), 7);
    }

    #[test]
    fn error_keeps_the_runtime_message() {
        let err =
            run::<()>(|| Err(AggError::Input("column 3 is missing".into()).into())).unwrap_err();
        assert_eq!(err.to_string(), "bad input: column 3 is missing");
    }

    #[test]
    fn panic_with_literal_is_caught() {
        let err = run::<()>(|| panic!("boom")).unwrap_err();
        assert!(matches!(err, BridgeError::Panic(_)));
        assert_eq!(err.to_string(), "panic in native code: boom");
    }

    #[test]
    fn panic_with_formatted_message_is_caught() {
        let index = 9;
        let err = run::<u8>(|| {
            let v: Vec<u8> = Vec::new();
            Ok(v[index])
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("panic in native code: index out of bounds"),
            "{text}"
        );
    }

    #[test]
    fn panic_without_message() {
        let err = run::<()>(|| std::panic::panic_any(42_u32)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "panic in native code: a panic without a message"
        );
    }
}
