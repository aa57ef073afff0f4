//! What the forms of a call reach the world through: the route's settings, the codec of each
//! revision and binding, the upstream ports and the observer. A [`Bridge`](crate::Bridge)
//! holds one; a `CallerForm` or an `AgentForm` is handed it, and nothing else of the route.

use std::sync::Arc;

use crate::codec::Codecs;
use crate::observe::Observer;
use crate::settings::Settings;
use crate::upstream::{GrpcUpstream, Upstream};

/// A route's settings, codecs and ports, for one configuration generation.
#[derive(Debug)]
pub struct Ports {
    pub settings: Settings,
    pub codecs: Codecs,
    pub upstream: Arc<dyn Upstream>,
    pub grpc: Arc<dyn GrpcUpstream>,
    pub observer: Arc<dyn Observer>,
}
