//! `a2a-bridge report DIR`: what a recorded run (`--record DIR`) shows, for a person reading a
//! CI log or for a tool (`--format json`), and `--fail-on` for a run that shows what a team
//! forbids.
//!
//! The tables: calls by method, revision pair (caller → agent) and binding pair; errors by code
//! and origin — the `agent` when the agent's own answer was an error, the `caller` for a request
//! the bridge could not read or accept (parse error, invalid request, unknown method, invalid
//! params), else the `bridge` — losses by kind with an example call each; and the latency the
//! bridge added to unary calls (the call's time less the agent's, from the bridge's first byte
//! to it to the agent's last byte back).

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::Path;

use serde_json::{Value, json};

/// What `--fail-on` forbids: losses of these kinds, errors of these codes (or of any code, `*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forbidden {
    pub losses: Vec<String>,
    pub errors: Vec<String>,
}

impl Forbidden {
    /// Reads `loss=KIND,…` and `error=CODE,…` (several flags add up).
    ///
    /// # Errors
    ///
    /// A rule that is neither.
    pub fn parse(rules: &[String]) -> Result<Self, String> {
        let mut out = Self::default();
        for rule in rules {
            let (what, list) = rule.split_once('=').ok_or_else(|| {
                format!("--fail-on {rule:?}: expected loss=KIND,… or error=CODE,…")
            })?;
            let items = list
                .split(',')
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .map(str::to_owned);
            match what.trim() {
                "loss" => out.losses.extend(items),
                "error" => out.errors.extend(items),
                other => return Err(format!("--fail-on {other:?}: expected loss or error")),
            }
        }
        Ok(out)
    }
}

/// The summary of a recorded run.
#[derive(Debug, Default)]
pub struct Summary {
    pub exchanges: usize,
    /// Lines that were not exchanges of a known schema.
    pub unreadable: usize,
    /// (method, caller → agent revision, caller → agent binding) → calls.
    pub calls: BTreeMap<(String, String, String), usize>,
    /// (code, origin) → calls.
    pub errors: BTreeMap<(i64, String), usize>,
    /// kind → (count, an example call id, where).
    pub losses: BTreeMap<String, (usize, String, String)>,
    /// Milliseconds the bridge added to each unary call that reached the agent.
    pub added_ms: Vec<f64>,
    /// The first [`PAGE_CALLS`] exchanges, for the page's per-call view.
    pub kept: Vec<Value>,
}

/// Calls the HTML page shows one by one at most.
pub const PAGE_CALLS: usize = 5000;

/// Reads every `exchanges-*.jsonl` file of `dir`, in name order.
///
/// # Errors
///
/// A directory or file that cannot be read.
pub fn summarize(dir: &Path) -> std::io::Result<Summary> {
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("exchanges-")
                    && Path::new(n)
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
            })
        })
        .collect();
    files.sort();
    let mut summary = Summary::default();
    for path in files {
        let file = std::io::BufReader::new(std::fs::File::open(&path)?);
        for line in file.lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(&line) {
                Ok(exchange) if exchange["schema"] == crate::record::SCHEMA => {
                    summary.add(&exchange);
                }
                _ => summary.unreadable += 1,
            }
        }
    }
    Ok(summary)
}

/// JSON-RPC codes of a request the bridge could not read or accept.
const CALLER_CODES: [i64; 4] = [-32700, -32600, -32601, -32602];

fn text(value: &Value) -> String {
    value.as_str().unwrap_or("-").to_owned()
}

/// Whether a hop's answer was an error of the agent's own: an HTTP status of 400 or more, a
/// gRPC status, or a JSON-RPC error object.
fn agent_failed(hop: &Value) -> bool {
    if hop["status"].as_u64().is_some_and(|s| s >= 400) || hop["error"].is_string() {
        return true;
    }
    ["answer", "events"].iter().any(|key| {
        hop[key].as_array().is_some_and(|chunks| {
            chunks.iter().any(|chunk| {
                let body = &chunk["body"];
                body["json"]["error"].is_object()
                    || body["text"]
                        .as_str()
                        .is_some_and(|t| t.contains("\"error\":{") || t.contains("\"error\": {"))
            })
        })
    })
}

impl Summary {
    fn add(&mut self, exchange: &Value) {
        self.exchanges += 1;
        if self.kept.len() < PAGE_CALLS {
            self.kept.push(exchange.clone());
        }
        let caller = &exchange["caller"];
        let agent = exchange["agent"].as_array().map_or(&[][..], Vec::as_slice);
        let first = agent.first();
        let method = text(&caller["method"]);
        let revisions = format!(
            "{} -> {}",
            text(&caller["revision"]),
            first.map_or_else(|| "-".to_owned(), |hop| text(&hop["revision"]))
        );
        let bindings = format!(
            "{} -> {}",
            text(&caller["binding"]),
            first.map_or_else(|| "-".to_owned(), |hop| text(&hop["binding"]))
        );
        *self.calls.entry((method, revisions, bindings)).or_default() += 1;
        if let Some(code) = caller["error_code"].as_i64() {
            let origin = if agent.iter().any(agent_failed) {
                "agent"
            } else if CALLER_CODES.contains(&code) {
                "caller"
            } else {
                "bridge"
            };
            *self.errors.entry((code, origin.to_owned())).or_default() += 1;
        }
        for loss in exchange["losses"].as_array().into_iter().flatten() {
            let entry = self.losses.entry(text(&loss["kind"])).or_insert_with(|| {
                (
                    0,
                    text(&exchange["id"]),
                    format!("{} ({})", text(&loss["at"]), text(&loss["direction"])),
                )
            });
            entry.0 += 1;
        }
        let unary = caller["answer"].is_array();
        if unary && !agent.is_empty() && caller["error_code"].is_null() {
            let sent = agent
                .iter()
                .filter_map(|hop| hop["request"]["at_ms"].as_f64())
                .fold(f64::INFINITY, f64::min);
            let back = agent
                .iter()
                .flat_map(|hop| {
                    hop["answer"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .chain(hop["events"].as_array().into_iter().flatten())
                })
                .filter_map(|chunk| chunk["at_ms"].as_f64())
                .fold(f64::NEG_INFINITY, f64::max);
            if let Some(total) = exchange["duration_ms"].as_f64()
                && sent.is_finite()
                && back.is_finite()
            {
                self.added_ms.push((total - (back - sent)).max(0.0));
            }
        }
    }

    /// The calls, losses and errors `forbidden` names that the run shows.
    #[must_use]
    pub fn violations(&self, forbidden: &Forbidden) -> Vec<String> {
        let mut out = Vec::new();
        for kind in &forbidden.losses {
            for (seen, (count, example, at)) in &self.losses {
                if kind == "*" || kind == seen {
                    out.push(format!("loss {seen}: {count} (e.g. call {example}, {at})"));
                }
            }
        }
        for code in &forbidden.errors {
            for ((seen, origin), count) in &self.errors {
                if code == "*" || code == &seen.to_string() {
                    out.push(format!("error {seen} from the {origin}: {count}"));
                }
            }
        }
        out
    }

    fn percentile(&self, share: f64) -> Option<f64> {
        if self.added_ms.is_empty() {
            return None;
        }
        let mut sorted = self.added_ms.clone();
        sorted.sort_by(f64::total_cmp);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "an index into a list of calls"
        )]
        let index = ((sorted.len() - 1) as f64 * share).round() as usize;
        sorted.get(index).copied()
    }

    /// The summary as a document for tools.
    #[must_use]
    pub fn to_json(&self, violations: &[String]) -> Value {
        json!({
            "exchanges": self.exchanges,
            "unreadable": self.unreadable,
            "calls": self.calls.iter().map(|((method, revisions, bindings), count)| json!({
                "method": method, "revisions": revisions, "bindings": bindings, "count": count,
            })).collect::<Vec<_>>(),
            "errors": self.errors.iter().map(|((code, origin), count)| json!({
                "code": code, "origin": origin, "count": count,
            })).collect::<Vec<_>>(),
            "losses": self.losses.iter().map(|(kind, (count, example, at))| json!({
                "kind": kind, "count": count, "example": example, "at": at,
            })).collect::<Vec<_>>(),
            "added_ms": {
                "calls": self.added_ms.len(),
                "p50": self.percentile(0.5),
                "p90": self.percentile(0.9),
                "p99": self.percentile(0.99),
                "max": self.percentile(1.0),
            },
            "violations": violations,
        })
    }

    /// The summary as a self-contained HTML page: the same tables, and every call (up to
    /// [`PAGE_CALLS`]) whose two hops open side by side when it is clicked.
    #[must_use]
    pub fn to_html(&self, violations: &[String]) -> String {
        use std::fmt::Write as _;
        let mut body = String::new();
        let _ = write!(
            body,
            "<h1>a2a-bridge: a recorded run</h1><p id=\"count\">{} exchanges recorded</p>",
            self.exchanges
        );
        if !violations.is_empty() {
            let _ = write!(
                body,
                "<h2>Forbidden by --fail-on</h2><ul id=\"violations\">"
            );
            for violation in violations {
                let _ = write!(body, "<li>{}</li>", escape(violation));
            }
            body.push_str("</ul>");
        }
        body.push_str("<h2>Calls</h2>");
        body.push_str(&table(
            &["method", "revisions", "bindings", "count"],
            self.calls
                .iter()
                .map(|((m, r, b), c)| vec![m.clone(), r.clone(), b.clone(), c.to_string()])
                .collect(),
            "calls",
        ));
        body.push_str("<h2>Errors</h2>");
        body.push_str(&table(
            &["code", "origin", "count"],
            self.errors
                .iter()
                .map(|((code, origin), c)| vec![code.to_string(), origin.clone(), c.to_string()])
                .collect(),
            "errors",
        ));
        body.push_str("<h2>Losses</h2>");
        body.push_str(&table(
            &["kind", "count", "example call", "where"],
            self.losses
                .iter()
                .map(|(kind, (c, example, at))| {
                    vec![kind.clone(), c.to_string(), example.clone(), at.clone()]
                })
                .collect(),
            "losses",
        ));
        body.push_str("<h2>Latency added by the bridge</h2>");
        let _ = write!(
            body,
            "<p id=\"latency\">{} unary calls: p50 {}, p99 {}, max {} (ms)</p>",
            self.added_ms.len(),
            ms(self.percentile(0.5)),
            ms(self.percentile(0.99)),
            ms(self.percentile(1.0))
        );
        body.push_str("<h2>Every call</h2>");
        body.push_str(&table(
            &[
                "#",
                "call",
                "method",
                "revisions",
                "bindings",
                "status",
                "ms",
            ],
            self.call_rows(),
            "every-call",
        ));
        body.push_str(
            "<div id=\"detail\" hidden><h2 id=\"detail-title\"></h2><div class=\"hops\">\
             <section><h3>The caller's hop</h3><pre id=\"caller-hop\"></pre></section>\
             <section><h3>The agent's hop</h3><pre id=\"agent-hop\"></pre></section></div></div>",
        );
        // The calls as data for the per-call view; `</` cannot close the script element.
        let data = serde_json::to_string(&self.kept)
            .unwrap_or_else(|_| "[]".to_owned())
            .replace("</", "<\\/");
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>a2a-bridge report</title><style>{STYLE}</style></head><body>{body}\
             <script type=\"application/json\" id=\"data\">{data}</script>\
             <script>{SCRIPT}</script></body></html>\n"
        )
    }

    /// The summary as tables a person reads.
    #[must_use]
    pub fn to_text(&self, violations: &[String]) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(out, "{} exchanges recorded", self.exchanges);
        if self.unreadable > 0 {
            let _ = writeln!(
                out,
                "{} lines were not exchanges of {}",
                self.unreadable,
                crate::record::SCHEMA
            );
        }
        let _ = writeln!(
            out,
            "\ncalls\n  {:<28} {:<14} {:<22} {:>7}",
            "method", "revisions", "bindings", "count"
        );
        for ((method, revisions, bindings), count) in &self.calls {
            let _ = writeln!(
                out,
                "  {method:<28} {revisions:<14} {bindings:<22} {count:>7}"
            );
        }
        let _ = writeln!(
            out,
            "\nerrors\n  {:<8} {:<8} {:>7}",
            "code", "origin", "count"
        );
        if self.errors.is_empty() {
            let _ = writeln!(out, "  none");
        }
        for ((code, origin), count) in &self.errors {
            let _ = writeln!(out, "  {code:<8} {origin:<8} {count:>7}");
        }
        let _ = writeln!(out, "\nlosses\n  {:<22} {:>7}  example", "kind", "count");
        if self.losses.is_empty() {
            let _ = writeln!(out, "  none");
        }
        for (kind, (count, example, at)) in &self.losses {
            let _ = writeln!(out, "  {kind:<22} {count:>7}  call {example}: {at}");
        }
        let _ = writeln!(
            out,
            "\nlatency added by the bridge (unary calls that reached the agent)"
        );
        match (
            self.percentile(0.5),
            self.percentile(0.99),
            self.percentile(1.0),
        ) {
            (Some(p50), Some(p99), Some(max)) => {
                let _ = writeln!(
                    out,
                    "  {} calls: p50 {p50:.3} ms, p99 {p99:.3} ms, max {max:.3} ms",
                    self.added_ms.len()
                );
            }
            _ => {
                let _ = writeln!(out, "  none");
            }
        }
        if !violations.is_empty() {
            let _ = writeln!(out, "\nforbidden by --fail-on");
            for violation in violations {
                let _ = writeln!(out, "  {violation}");
            }
        }
        out
    }
}

impl Summary {
    /// A row of the page's list of calls for each kept exchange.
    fn call_rows(&self) -> Vec<Vec<String>> {
        self.kept
            .iter()
            .enumerate()
            .map(|(index, e)| {
                let caller = &e["caller"];
                let hop = &e["agent"][0];
                vec![
                    index.to_string(),
                    text(&e["id"]),
                    text(&caller["method"]),
                    format!(
                        "{} -> {}",
                        text(&caller["revision"]),
                        text(&hop["revision"])
                    ),
                    format!("{} -> {}", text(&caller["binding"]), text(&hop["binding"])),
                    caller["error_code"]
                        .as_i64()
                        .map_or_else(|| "ok".to_owned(), |c| format!("error {c}")),
                    e["duration_ms"].to_string(),
                ]
            })
            .collect()
    }
}

/// An HTML table of `rows` under `header`, its text escaped.
fn table(header: &[&str], rows: Vec<Vec<String>>, id: &str) -> String {
    use std::fmt::Write as _;
    let mut out = format!("<table id=\"{id}\"><thead><tr>");
    for cell in header {
        let _ = write!(out, "<th>{}</th>", escape(cell));
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;\
margin-bottom:1em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}\
#every-call tbody tr{cursor:pointer}#every-call tbody tr:hover{background:#eef}\
.hops{display:flex;gap:1em}.hops section{flex:1;min-width:0}\
pre{background:#f6f6f6;padding:.5em;overflow:auto;max-height:70vh;white-space:pre-wrap}";

/// Opens a call's two hops side by side when its row is clicked.
const SCRIPT: &str = "const calls=JSON.parse(document.getElementById('data').textContent);\
document.querySelectorAll('#every-call tbody tr').forEach((row,i)=>row.addEventListener('click',()=>{\
const call=calls[i];document.getElementById('detail').hidden=false;\
document.getElementById('detail-title').textContent='Call '+call.id+' ('+(call.caller.method||'-')+')';\
document.getElementById('caller-hop').textContent=JSON.stringify(call.caller,null,2);\
document.getElementById('agent-hop').textContent=call.agent.length?JSON.stringify(call.agent,null,2):\
'(answered by the bridge: no request reached the agent)';}));";

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(method: &str, code: Option<i64>, agent_error: bool, losses: &[&str]) -> Value {
        let agent_body = if agent_error {
            json!({"json": {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "no"}}})
        } else {
            json!({"json": {"jsonrpc": "2.0", "id": 1, "result": {}}})
        };
        json!({
            "schema": crate::record::SCHEMA,
            "id": format!("call-{method}"),
            "duration_ms": 10.0,
            "caller": {"method": method, "revision": "1.0", "binding": "jsonrpc", "error_code": code,
                       "answer": [{"at_ms": 10.0, "body": {}}]},
            "agent": [{"revision": "0.3", "binding": "jsonrpc", "status": 200,
                       "request": {"at_ms": 1.0}, "answer": [{"at_ms": 8.0, "body": agent_body}]}],
            "losses": losses.iter().map(|k| json!({"kind": k, "at": "message.parts[0].mediaType", "direction": "1.0->0.3"})).collect::<Vec<_>>(),
        })
    }

    #[test]
    fn calls_errors_by_origin_losses_and_added_latency_are_counted() {
        let mut summary = Summary::default();
        summary.add(&exchange("send_message", None, false, &["field_dropped"]));
        summary.add(&exchange("get_task", Some(-32001), true, &[]));
        summary.add(&exchange(
            "send_message",
            Some(-32602),
            false,
            &["field_dropped", "value_changed"],
        ));
        summary.add(&exchange("cancel_task", Some(-32603), false, &[]));
        assert_eq!(summary.exchanges, 4);
        let key = (
            "send_message".to_owned(),
            "1.0 -> 0.3".to_owned(),
            "jsonrpc -> jsonrpc".to_owned(),
        );
        assert_eq!(summary.calls[&key], 2);
        assert_eq!(summary.errors[&(-32001, "agent".to_owned())], 1);
        assert_eq!(summary.errors[&(-32602, "caller".to_owned())], 1);
        assert_eq!(summary.errors[&(-32603, "bridge".to_owned())], 1);
        assert_eq!(summary.losses["field_dropped"].0, 2);
        assert_eq!(summary.losses["field_dropped"].1, "call-send_message");
        // 10 ms in all, 7 of them between the first byte to the agent and the last back.
        assert_eq!(summary.added_ms, vec![3.0]);
        let forbidden =
            Forbidden::parse(&["loss=value_changed".to_owned(), "error=-32603".to_owned()])
                .unwrap_or_default();
        let violations = summary.violations(&forbidden);
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(
            summary
                .violations(&Forbidden::parse(&["loss=enum_mapped".to_owned()]).unwrap_or_default())
                .is_empty()
        );
        assert!(Forbidden::parse(&["latency=5".to_owned()]).is_err());
        let text = summary.to_text(&violations);
        assert!(
            text.contains("field_dropped") && text.contains("forbidden by --fail-on"),
            "{text}"
        );
    }
}
