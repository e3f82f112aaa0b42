//! The operator's side of the JIT (`crate::jit`): whether this plan's
//! fixed-width calls fold in one compiled loop, and folding a batch
//! through it. The bundled modes' row folds (the local phase and the
//! single phase in mini-batch mode, over insert-only or retracting input)
//! use it; every other path runs the static kernels.

use arrow_schema::DataType;

use super::input::Input;
use crate::accumulator::GroupAccumulator;
use crate::error::Result;
use crate::plan::{AggCall, AggPlan, Emission};
use crate::types::Phase;

/// Whether and how a plan's calls are fused.
#[derive(Debug)]
pub(super) struct Fusion {
    #[cfg(feature = "jit")]
    fused: Option<crate::jit::Fused>,
    /// `fused N of M calls (...)` or `static: <reason>`.
    status: String,
}

/// Why a plan's rows never reach the fused loop, if they do not.
fn unfused_shape(plan: &AggPlan) -> Option<&'static str> {
    match (plan.phase, plan.emission) {
        (Phase::Local, _) | (Phase::Single, Emission::MiniBatch) if plan.window.is_none() => None,
        (Phase::Global, _) => Some("the global phase merges partials"),
        (Phase::Single, Emission::Immediate) => Some("immediate emission traces every row"),
        _ => Some("window aggregates fold per window"),
    }
}

impl Fusion {
    /// Plans the fused loop for the operator's `calls` (with their
    /// accumulators and argument Arrow types).
    #[cfg_attr(not(feature = "jit"), allow(unused_variables))]
    pub(super) fn new(
        plan: &AggPlan,
        calls: &[AggCall],
        accs: &[Box<dyn GroupAccumulator>],
        arg_types: &[Vec<DataType>],
    ) -> Fusion {
        if let Some(reason) = unfused_shape(plan) {
            return Fusion {
                #[cfg(feature = "jit")]
                fused: None,
                status: format!("static: {reason}"),
            };
        }
        #[cfg(feature = "jit")]
        {
            let retracting = plan.input == crate::types::InputMode::Retracting;
            let planned = crate::jit::Fused::plan(plan.jit, calls, accs, arg_types, retracting);
            Fusion {
                fused: planned.fused,
                status: planned.status,
            }
        }
        #[cfg(not(feature = "jit"))]
        Fusion {
            status: "static: built without the jit feature".into(),
        }
    }

    /// `fused N of M calls (...)` or `static: <reason>`.
    pub(super) fn status(&self) -> &str {
        &self.status
    }

    /// Bytes of compiled code the operator holds.
    pub(super) fn code_bytes(&self) -> usize {
        #[cfg(feature = "jit")]
        if let Some(fused) = &self.fused {
            return fused.code_bytes();
        }
        0
    }

    /// Folds the batch's rows into the fused calls' state. Returns, by
    /// call, whether it was folded here (empty: none was). A batch the
    /// loop cannot take (a failed compile of a new NULL pattern) is left
    /// to the static kernels, and so are all later ones, with the reason
    /// in [`Fusion::status`].
    #[cfg_attr(not(feature = "jit"), allow(unused_variables))]
    pub(super) fn fold(
        &mut self,
        accs: &mut [Box<dyn GroupAccumulator>],
        input: &Input<'_>,
        ids: &[u32],
    ) -> Result<&[bool]> {
        #[cfg(feature = "jit")]
        if let Some(fused) = &mut self.fused {
            let groups = accs.first().map_or(0, |a| a.num_groups());
            if !fused.takes(groups) {
                return Ok(&[]);
            }
            let columns = (&input.args[..], &input.filters[..]);
            if let Err(e) = fused.update(accs, columns, input.row_kinds, ids) {
                self.status = format!("static: {e}");
                self.fused = None;
            }
        }
        #[cfg(feature = "jit")]
        if let Some(fused) = &self.fused {
            return Ok(fused.covered());
        }
        Ok(&[])
    }
}
