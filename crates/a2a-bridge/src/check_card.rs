//! `a2a-bridge check-card URL`: what the bridge would make of an agent's card.
//!
//! The card is fetched and read exactly as the bridge's card refresh reads it
//! (`bridge_app::card::read_upstream_card`), then presented with the bridge's own endpoints and
//! encoded for each revision's callers (`present`, `serve`), so an operator sees, before
//! deploying, which revision the agent would be called in, the two cards callers would get, and
//! everything the translation drops.

use std::io::Write;
use std::time::Duration;

use bridge_app::settings::CardView;
use bridge_app::upstream::{Deadline, Upstream as _, UpstreamRequest};
use bridge_ir::Binding;
use bridge_upstream::{ClientSettings, HyperUpstream};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, header};

use crate::runtime::codecs;

/// The card's URL: `url` itself when it names a JSON document, else the well-known path under it.
#[must_use]
pub fn card_url(url: &str) -> String {
    if std::path::Path::new(url)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        url.to_owned()
    } else {
        format!("{}/.well-known/agent-card.json", url.trim_end_matches('/'))
    }
}

/// Fetches the card at `url` and writes the report to `out`, with cards advertising
/// `public_url` (and `grpc_url` for the gRPC interfaces, when given).
///
/// # Errors
///
/// A message saying why the card could not be fetched, read or presented.
pub async fn check_card(
    url: &str,
    public_url: &str,
    grpc_url: Option<&str>,
    out: &mut impl Write,
) -> Result<(), String> {
    let url = card_url(url);
    let base = url
        .strip_suffix("/.well-known/agent-card.json")
        .unwrap_or(&url)
        .to_owned();
    let client = HyperUpstream::new(ClientSettings::default()).map_err(|e| e.to_string())?;
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert("a2a-version", HeaderValue::from_static("1.0"));
    let response = client
        .send(UpstreamRequest {
            method: Method::GET,
            url: url.clone(),
            headers,
            body: Bytes::new(),
            deadline: Deadline::Total(Duration::from_secs(30)),
        })
        .await
        .map_err(|e| format!("fetching {url}: {e}"))?;
    if !response.status.is_success() {
        return Err(format!("fetching {url}: HTTP {}", response.status));
    }
    let body = bridge_app::upstream::collect(response.body, 1024 * 1024)
        .await
        .map_err(|e| format!("reading {url}: {e}"))?;
    let codecs = codecs();
    let (card, endpoint) = bridge_app::card::read_upstream_card(&body, &codecs, None, None, &base)
        .map_err(|e| format!("{url}: {e}"))?;
    let (revision, call_url) = (endpoint.revision, endpoint.url);
    let io = |e: std::io::Error| e.to_string();
    writeln!(out, "card: {url}").map_err(io)?;
    writeln!(
        out,
        "the bridge would call the agent in A2A {revision} over {} at {call_url}",
        endpoint.binding.as_str()
    )
    .map_err(io)?;
    let presented = bridge_app::card::present(
        &card,
        public_url.trim_end_matches('/'),
        &codecs.interfaces(&[Binding::JsonRpc, Binding::HttpJson, Binding::Grpc]),
        grpc_url,
        revision,
        None,
    );
    writeln!(out, "interfaces the bridge serves:").map_err(io)?;
    for interface in &presented.value.interfaces {
        writeln!(
            out,
            "  {} A2A {} at {}",
            interface.binding, interface.protocol_version, interface.url
        )
        .map_err(io)?;
    }
    let mut dropped = presented.losses.clone();
    for (view, who) in [
        (CardView::V1_0, "A2A 1.0 callers (and card.view = \"1.0\")"),
        (
            CardView::V0_3,
            "A2A 0.3 callers that send A2A-Version (and card.view = \"0.3\")",
        ),
        (
            CardView::Dual,
            "callers without A2A-Version (card.view = \"dual\", the default)",
        ),
    ] {
        let served = bridge_app::card::serve(presented.value.clone(), view, &codecs)?;
        let pretty = serde_json::from_slice::<serde_json::Value>(&served.body)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .map_err(|e| e.to_string())?;
        writeln!(out, "\n--- served to {who} ---\n{pretty}").map_err(io)?;
        if view == CardView::Dual {
            continue;
        }
        dropped.extend(served.losses.into_iter().map(|mut loss| {
            loss.at = format!("{} card: {}", view.as_str(), loss.at);
            loss
        }));
    }
    writeln!(out, "\n--- dropped ---").map_err(io)?;
    if dropped.is_empty() {
        writeln!(out, "nothing").map_err(io)?;
    }
    for loss in dropped {
        writeln!(out, "{}: {}", loss.kind.label(), loss.at).map_err(io)?;
    }
    Ok(())
}
