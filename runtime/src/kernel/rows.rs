//! Which rows of a batch a fold applies: argument validity AND the FILTER
//! column, computed once per batch as one bitmap (or none when every row
//! counts), then walked 64 rows at a time.

use arrow_array::{Array, BooleanArray};
use arrow_buffer::{BooleanBuffer, NullBuffer};

use crate::error::{AggError, Result};

/// The selected rows of one batch.
#[derive(Debug, Clone)]
pub struct Rows {
    len: usize,
    mask: Option<BooleanBuffer>,
}

impl Rows {
    /// Every row of a batch of `len` rows.
    pub fn all(len: usize) -> Rows {
        Rows { len, mask: None }
    }

    /// Rows whose argument is non-NULL (per `nulls`) and whose FILTER value
    /// is true (a NULL filter value does not count).
    pub fn new(
        len: usize,
        nulls: Option<&NullBuffer>,
        filter: Option<&BooleanArray>,
        name: &str,
    ) -> Result<Rows> {
        let mut mask: Option<BooleanBuffer> = nulls
            .filter(|n| n.null_count() > 0)
            .map(|n| n.inner().clone());
        if let Some(filter) = filter {
            if filter.len() != len {
                return Err(AggError::Input(format!(
                    "{name}: filter column has {} rows, batch has {len}",
                    filter.len()
                )));
            }
            let mut keep = filter.values().clone();
            if let Some(fnulls) = filter.nulls().filter(|n| n.null_count() > 0) {
                keep = &keep & fnulls.inner();
            }
            mask = Some(match mask {
                Some(m) => &m & &keep,
                None => keep,
            });
        }
        if let Some(m) = &mask {
            if m.len() != len {
                return Err(AggError::Input(format!(
                    "{name}: validity has {} rows, batch has {len}",
                    m.len()
                )));
            }
            if m.count_set_bits() == len {
                mask = None;
            }
        }
        Ok(Rows { len, mask })
    }

    /// Number of rows in the batch (selected or not).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when every row is selected.
    pub fn is_dense(&self) -> bool {
        self.mask.is_none()
    }

    /// Whether row `i` is selected (per-row test, for traced folds).
    #[inline]
    pub fn selected(&self, i: usize) -> bool {
        self.mask.as_ref().is_none_or(|m| m.value(i))
    }

    /// Calls `f` with the index of every selected row, in order. Dense
    /// batches and all-set 64-row chunks run a plain counted loop; other
    /// chunks walk their set bits.
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(usize)) {
        match &self.mask {
            None => {
                for i in 0..self.len {
                    f(i);
                }
            }
            Some(mask) => {
                let chunks = mask.inner().bit_chunks(mask.offset(), mask.len());
                let mut base = 0usize;
                for word in chunks.iter() {
                    visit_word(word, base, &mut f);
                    base += 64;
                }
                visit_word(chunks.remainder_bits(), base, &mut f);
            }
        }
    }
}

#[inline(always)]
fn visit_word(mut word: u64, base: usize, f: &mut impl FnMut(usize)) {
    if word == u64::MAX {
        for i in base..base + 64 {
            f(i);
        }
        return;
    }
    while word != 0 {
        let bit = word.trailing_zeros() as usize;
        f(base + bit);
        word &= word - 1;
    }
}
