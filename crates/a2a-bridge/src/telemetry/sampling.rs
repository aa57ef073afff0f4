//! Which calls are sampled: the samplers `OTEL_TRACES_SAMPLER` names (or `sample_ratio`),
//! decided as the OpenTelemetry SDK decides them, over the bridge's own span identities.
//!
//! The SDK's samplers take the parent as an SDK `Context`, which costs a map and a reference
//! count per call to build from a `traceparent`; the decision itself only needs the parent's
//! sampled flag and the trace id. The tests check every decision against the SDK's sampler.

/// What decides a span without a parent (or every span, when not parent-based).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Root {
    AlwaysOn,
    AlwaysOff,
    /// Sampled when the trace id's lower 63 bits fall under the ratio, as the SDK's
    /// `TraceIdRatioBased` does.
    Ratio(f64),
}

/// A sampler.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    /// A span with a parent follows the parent's sampled flag.
    pub parent_based: bool,
    pub root: Root,
}

impl Sampler {
    /// Parent-based, the root sampled at `ratio` (`[telemetry] sample_ratio`).
    #[must_use]
    pub const fn ratio(ratio: f64) -> Self {
        Self {
            parent_based: true,
            root: Root::Ratio(ratio),
        }
    }

    /// The sampler `OTEL_TRACES_SAMPLER` (`name`) and `OTEL_TRACES_SAMPLER_ARG` (`arg`) name, as
    /// the SDK reads them: unset or unknown is parent-based always-on, a ratio that does not
    /// read is 1.
    #[must_use]
    pub fn from_variables(name: Option<&str>, arg: Option<&str>) -> Self {
        let ratio = || Root::Ratio(arg.and_then(|a| a.trim().parse().ok()).unwrap_or(1.0));
        let (parent_based, root) = match name.map(str::trim) {
            Some("always_on") => (false, Root::AlwaysOn),
            Some("always_off") => (false, Root::AlwaysOff),
            Some("traceidratio") => (false, ratio()),
            Some("parentbased_always_off") => (true, Root::AlwaysOff),
            Some("parentbased_traceidratio") => (true, ratio()),
            _ => (true, Root::AlwaysOn),
        };
        Self { parent_based, root }
    }

    /// The sampler the standard variables name.
    #[must_use]
    pub fn from_environment() -> Self {
        Self::from_variables(
            std::env::var("OTEL_TRACES_SAMPLER").ok().as_deref(),
            std::env::var("OTEL_TRACES_SAMPLER_ARG").ok().as_deref(),
        )
    }

    /// Whether a span of `trace_id` whose parent has the trace flags `parent` (none for a
    /// root) is sampled.
    #[must_use]
    pub fn sampled(&self, parent: Option<u8>, trace_id: &[u8; 16]) -> bool {
        if self.parent_based
            && let Some(flags) = parent
        {
            return flags & 1 == 1;
        }
        match self.root {
            Root::AlwaysOn => true,
            Root::AlwaysOff => false,
            Root::Ratio(ratio) if ratio >= 1.0 => true,
            Root::Ratio(ratio) => {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss,
                    reason = "the SDK's bound: the ratio of 2^63, truncated"
                )]
                let bound = (ratio.max(0.0) * (1_u64 << 63) as f64) as u64;
                let mut low = [0_u8; 8];
                low.copy_from_slice(&trace_id[8..]);
                (u64::from_be_bytes(low) >> 1) < bound
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{
        SpanContext, SpanId, SpanKind, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry_sdk::trace::{SamplingDecision, ShouldSample};

    use super::*;

    /// The SDK's sampler of the same name and argument.
    fn sdk(name: Option<&str>, arg: Option<&str>) -> opentelemetry_sdk::trace::Sampler {
        use opentelemetry_sdk::trace::Sampler as S;
        let ratio = || arg.and_then(|a| a.parse().ok()).unwrap_or(1.0);
        match name {
            Some("always_on") => S::AlwaysOn,
            Some("always_off") => S::AlwaysOff,
            Some("traceidratio") => S::TraceIdRatioBased(ratio()),
            Some("parentbased_always_off") => S::ParentBased(Box::new(S::AlwaysOff)),
            Some("parentbased_traceidratio") => {
                S::ParentBased(Box::new(S::TraceIdRatioBased(ratio())))
            }
            _ => S::ParentBased(Box::new(S::AlwaysOn)),
        }
    }

    #[test]
    fn every_decision_is_the_sdks() {
        let variables = [
            (None, None),
            (Some("always_on"), None),
            (Some("always_off"), None),
            (Some("traceidratio"), Some("0.25")),
            (Some("traceidratio"), Some("not a number")),
            (Some("parentbased_always_on"), None),
            (Some("parentbased_always_off"), None),
            (Some("parentbased_traceidratio"), Some("0.5")),
            (Some("parentbased_traceidratio"), Some("0")),
            (Some("xray"), None),
        ];
        let mut sampled_somewhere = false;
        let mut dropped_somewhere = false;
        for (name, arg) in variables {
            let ours = Sampler::from_variables(name, arg);
            let theirs = sdk(name, arg);
            for seed in 0_u64..400 {
                let mut trace = [0_u8; 16];
                trace[..8].copy_from_slice(&seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
                trace[8..].copy_from_slice(&seed.wrapping_mul(0xd1b5_4a32_d192_ed03).to_be_bytes());
                for parent in [None, Some(0_u8), Some(1_u8)] {
                    let context = parent.map(|flags| {
                        opentelemetry::Context::new().with_remote_span_context(SpanContext::new(
                            TraceId::from_bytes(trace),
                            SpanId::from_bytes([7; 8]),
                            TraceFlags::new(flags),
                            true,
                            TraceState::default(),
                        ))
                    });
                    let decision = theirs.should_sample(
                        context.as_ref(),
                        TraceId::from_bytes(trace),
                        "call",
                        &SpanKind::Server,
                        &[],
                        &[],
                    );
                    let expected = decision.decision == SamplingDecision::RecordAndSample;
                    assert_eq!(
                        ours.sampled(parent, &trace),
                        expected,
                        "{name:?} {arg:?} {parent:?} {trace:?}"
                    );
                    sampled_somewhere |= expected;
                    dropped_somewhere |= !expected;
                }
            }
        }
        assert!(sampled_somewhere && dropped_somewhere);
    }

    #[test]
    fn a_ratio_samples_about_its_share() {
        let quarter = Sampler::ratio(0.25);
        let taken = (0_u64..10_000)
            .filter(|seed| {
                let mut trace = [0_u8; 16];
                trace[8..].copy_from_slice(&seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_be_bytes());
                quarter.sampled(None, &trace)
            })
            .count();
        assert!((2_000..3_000).contains(&taken), "{taken}");
    }
}
