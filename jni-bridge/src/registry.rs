//! Open operators by handle. A handle is `generation << 32 | slot`; a slot's
//! generation changes when its operator is closed, so a closed, reused or
//! made-up handle is an error, never a dangling pointer.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{BridgeError, BridgeResult};

struct Slot<T> {
    /// Odd while the slot holds an operator, even while it is free; never 0
    /// in a handle, so handle 0 is always invalid.
    generation: u32,
    value: Option<Arc<Mutex<T>>>,
}

/// A slab of shared values addressed by generation-checked handles.
pub struct Registry<T> {
    inner: Mutex<Slots<T>>,
}

struct Slots<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Registry<T> {
    /// An empty registry.
    pub const fn new() -> Self {
        Registry {
            inner: Mutex::new(Slots {
                slots: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    /// The slab; its operations never panic halfway, so a poisoned lock
    /// still holds consistent slots.
    fn slots(&self) -> MutexGuard<'_, Slots<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `value` and returns its handle.
    pub fn insert(&self, value: T) -> u64 {
        let mut inner = self.slots();
        let value = Some(Arc::new(Mutex::new(value)));
        let index = match inner.free.pop() {
            Some(index) => index,
            None => {
                inner.slots.push(Slot {
                    generation: 0,
                    value: None,
                });
                (inner.slots.len() - 1) as u32
            }
        };
        let slot = &mut inner.slots[index as usize];
        slot.generation = slot.generation.wrapping_add(1) | 1;
        slot.value = value;
        (u64::from(slot.generation) << 32) | u64::from(index)
    }

    fn split(handle: u64) -> (u32, usize) {
        ((handle >> 32) as u32, (handle & 0xffff_ffff) as usize)
    }

    /// The value behind `handle`.
    pub fn get(&self, handle: u64) -> BridgeResult<Arc<Mutex<T>>> {
        let (generation, index) = Self::split(handle);
        let inner = self.slots();
        match inner.slots.get(index) {
            Some(Slot {
                generation: g,
                value: Some(value),
            }) if *g == generation => Ok(Arc::clone(value)),
            _ => Err(BridgeError::Handle(handle)),
        }
    }

    /// Runs `f` on the value behind `handle`, holding its lock. A value
    /// whose lock was poisoned by a panic is refused from then on.
    pub fn with<R>(
        &self,
        handle: u64,
        f: impl FnOnce(&mut T) -> BridgeResult<R>,
    ) -> BridgeResult<R> {
        let value = self.get(handle)?;
        let mut guard = value.lock().map_err(|_| BridgeError::Poisoned)?;
        f(&mut guard)
    }

    /// Removes the value behind `handle`; it is dropped once no call is
    /// using it any more.
    pub fn remove(&self, handle: u64) -> BridgeResult<()> {
        let (generation, index) = Self::split(handle);
        let mut inner = self.slots();
        let slot = match inner.slots.get_mut(index) {
            Some(slot) if slot.generation == generation && slot.value.is_some() => slot,
            _ => return Err(BridgeError::Handle(handle)),
        };
        slot.value = None;
        slot.generation = slot.generation.wrapping_add(1);
        inner.free.push(index as u32);
        Ok(())
    }

    /// Number of open values.
    pub fn len(&self) -> usize {
        self.slots()
            .slots
            .iter()
            .filter(|s| s.value.is_some())
            .count()
    }

    /// Whether no value is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove() {
        let registry = Registry::new();
        let a = registry.insert(1);
        let b = registry.insert(2);
        assert_ne!(a, b);
        assert_ne!(a, 0);
        assert_eq!(registry.with(a, |v| Ok(*v)).unwrap(), 1);
        registry
            .with(b, |v| {
                *v += 40;
                Ok(())
            })
            .unwrap();
        assert_eq!(registry.with(b, |v| Ok(*v)).unwrap(), 42);
        registry.remove(a).unwrap();
        assert_eq!(registry.len(), 1);
    }

    #[test]
    fn unknown_and_closed_handles_are_errors() {
        let registry = Registry::new();
        assert!(matches!(registry.get(0), Err(BridgeError::Handle(0))));
        assert!(registry.get(12345).is_err());
        let a = registry.insert("x");
        registry.remove(a).unwrap();
        assert!(matches!(registry.get(a), Err(BridgeError::Handle(h)) if h == a));
        assert!(registry.remove(a).is_err(), "double close");
        // The slot is reused with another generation: the old handle stays dead.
        let b = registry.insert("y");
        assert_eq!(a & 0xffff_ffff, b & 0xffff_ffff);
        assert_ne!(a, b);
        assert!(registry.get(a).is_err());
        assert_eq!(registry.with(b, |v| Ok(*v)).unwrap(), "y");
        let text = BridgeError::Handle(a).to_string();
        assert!(text.contains("invalid handle"), "{text}");
    }

    #[test]
    fn a_value_poisoned_by_a_panic_is_refused() {
        let registry = Registry::new();
        let a = registry.insert(5);
        let result =
            crate::boundary::run(|| registry.with(a, |_| -> BridgeResult<()> { panic!("inside") }));
        assert!(matches!(result, Err(BridgeError::Panic(_))));
        assert!(matches!(
            registry.with(a, |v| Ok(*v)),
            Err(BridgeError::Poisoned)
        ));
        // The registry itself still works.
        let b = registry.insert(6);
        assert_eq!(registry.with(b, |v| Ok(*v)).unwrap(), 6);
        registry.remove(a).unwrap();
    }
}
