//! The push adapter (`bridge_app::push::Pusher`): delivers notifications to subscribers'
//! webhooks, guarded against server-side request forgery.
//!
//! # The webhook-target guard
//!
//! A subscriber's URL must be `http` or `https`, and every address its host resolves to must be
//! outside the guarded ranges ([`guarded_range`]: loopback, unspecified, private, shared
//! (carrier-grade NAT), link-local, unique-local, multicast, broadcast and cloud-metadata
//! addresses, IPv4-mapped and NAT64 IPv6 forms judged by the IPv4 address inside), unless a
//! network listed in `push.allow_networks` holds it. The URL is checked when a config is
//! registered; a delivery resolves the name once more through a resolver that hands the
//! connector only the addresses that pass, so nothing re-resolves between check and connect.
//! Redirects are not followed, at most [`ANSWER_CAP`] bytes of an answer are read, and each
//! attempt has a deadline.
//!
//! # Queues
//!
//! One bounded queue per target (scheme, host and port) with one worker: deliveries to a
//! target go one at a time, in the order they were queued, so a task's notifications arrive in
//! order. A failed attempt (no connection, a timeout, 408, 429, 5xx) is retried after a backoff
//! that doubles, up to the configured number of attempts; later deliveries to that target wait
//! behind it. A worker idle for [`IDLE`] ends and frees its queue.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::HashSet;

use bridge_app::Observer;
use bridge_app::push::{DELIVERY_ID_HEADER, Delivery, Outcome, PushError, Pusher};
use bridge_app::store::Store;
use futures_util::future::BoxFuture;
use ipnet::IpNet;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::mpsc;

/// How much of a subscriber's answer is read.
pub const ANSWER_CAP: usize = 64 * 1024;

/// How long a target's worker waits for more before it ends.
pub const IDLE: Duration = Duration::from_mins(1);

/// The longest pause between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How long resolving a webhook's host may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// How the adapter delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushSettings {
    /// Networks a webhook may be in although the guard covers them.
    pub allow_networks: Vec<IpNet>,
    /// Attempts per delivery, the first included.
    pub attempts: u32,
    /// The pause before the first retry; it doubles with each one.
    pub backoff: Duration,
    /// Deliveries waiting per target at most.
    pub queue: usize,
    /// The deadline of one attempt, connection and answer included.
    pub timeout: Duration,
    /// How long a pending delivery stays leased to this instance between renewals; past it,
    /// another instance takes it over.
    pub lease: Duration,
}

impl Default for PushSettings {
    fn default() -> Self {
        Self {
            allow_networks: Vec::new(),
            attempts: 5,
            backoff: Duration::from_millis(500),
            queue: 1000,
            timeout: Duration::from_secs(10),
            lease: Duration::from_mins(1),
        }
    }
}

/// The range of the guard `ip` falls in, if any.
#[must_use]
pub fn guarded_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => guarded_v4(v4),
        IpAddr::V6(v6) => guarded_v6(v6),
    }
}

fn guarded_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        Some("cloud metadata")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if ip.is_private() {
        Some("private")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if ip.is_broadcast() {
        Some("broadcast")
    } else if a >= 240 {
        Some("reserved")
    } else if a == 198 && (18..20).contains(&b) {
        Some("benchmarking")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("IETF protocol assignments")
    } else {
        None
    }
}

fn guarded_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return guarded_v4(v4);
    }
    let first = ip.segments()[0];
    if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254) {
        Some("cloud metadata")
    } else if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if first & 0xfe00 == 0xfc00 {
        Some("unique-local")
    } else if first & 0xffc0 == 0xfec0 {
        Some("site-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else {
        None
    }
}

/// The IPv4 address inside an IPv6 address that carries one to an IPv4 host: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated but still routed by some
/// stacks), NAT64 (`64:ff9b::a.b.c.d`, and the local-use `64:ff9b:1::/48`) and 6to4
/// (`2002:aabb:ccdd::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let compatible = s[..6] == [0, 0, 0, 0, 0, 0] && !ip.is_loopback() && !ip.is_unspecified();
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || s[..3] == [0x64, 0xff9b, 1];
    if compatible || nat64 {
        Some(v4(s[6], s[7]))
    } else if s[0] == 0x2002 {
        Some(v4(s[1], s[2]))
    } else {
        None
    }
}

/// The guard: the ranges above, less the allowed networks.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    allow: Vec<IpNet>,
}

impl Guard {
    /// A guard allowing `allow` although the ranges cover them.
    #[must_use]
    pub const fn new(allow: Vec<IpNet>) -> Self {
        Self { allow }
    }

    /// Why `ip` is refused, if it is.
    #[must_use]
    pub fn refusal(&self, ip: IpAddr) -> Option<String> {
        let range = guarded_range(ip)?;
        let inner = match ip {
            IpAddr::V6(v6) => embedded_v4(v6).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        let allowed = self
            .allow
            .iter()
            .any(|net| net.contains(&ip) || inner.is_some_and(|v4| net.contains(&v4)));
        (!allowed)
            .then(|| format!("{ip} is a {range} address, which push.allow_networks does not list"))
    }

    /// Checks a webhook URL: its scheme, and every address its host resolves to.
    ///
    /// # Errors
    ///
    /// Why the URL is refused.
    pub async fn check(&self, url: &str) -> Result<(), String> {
        let (host, port) = target_of(url)?;
        for address in resolve(&host, port).await? {
            if let Some(why) = self.refusal(address.ip()) {
                return Err(if host.parse::<IpAddr>().is_ok() {
                    why
                } else {
                    format!("{host} resolves to {why}")
                });
            }
        }
        Ok(())
    }
}

/// The host (brackets stripped) and port of an http(s) URL.
fn target_of(url: &str) -> Result<(String, u16), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("it is no URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "the scheme must be http or https, not {}",
            parsed.scheme()
        ));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| "it names no host".to_owned())?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| "it names no port".to_owned())?;
    Ok((host, port))
}

async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let found = tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port)))
        .await
        .map_err(|_| format!("resolving {host} timed out"))?
        .map_err(|e| format!("{host} does not resolve ({e})"))?
        .collect::<Vec<_>>();
    if found.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    Ok(found)
}

/// The resolver deliveries connect through: it hands on only the addresses the guard passes.
#[derive(Debug)]
struct GuardedResolver {
    guard: Guard,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.guard.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found = resolve(&host, 0).await?;
            let passed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| guard.refusal(a.ip()).is_none())
                .collect();
            if passed.is_empty() {
                return Err(
                    format!("{host} resolves only to addresses the webhook guard refuses").into(),
                );
            }
            let addrs: Addrs = Box::new(passed.into_iter());
            Ok(addrs)
        })
    }
}

/// How one attempt ended.
enum Attempt {
    Delivered,
    Transient(String),
    Rejected(String),
    Refused(String),
}

/// The queue of one target.
type Queues = Arc<Mutex<HashMap<String, mpsc::Sender<Delivery>>>>;

/// The push adapter.
#[derive(Debug, Clone)]
pub struct ReqwestPusher {
    client: reqwest::Client,
    guard: Guard,
    settings: PushSettings,
    queues: Queues,
    observer: Arc<dyn Observer>,
    store: Arc<dyn Store>,
    /// The pending deliveries this instance holds (queued or in flight): their leases are
    /// renewed while it lives.
    held: Arc<Mutex<HashSet<String>>>,
}

impl ReqwestPusher {
    /// A pusher delivering as `settings` say, reporting outcomes to `observer`, forgetting
    /// finished deliveries in `store` (where the application keeps them pending). Within a
    /// Tokio runtime it also starts its sweeper ([`ReqwestPusher::sweep`]), which ends when the
    /// pusher is dropped.
    ///
    /// # Errors
    ///
    /// When the HTTP client cannot be built.
    pub fn new(
        settings: PushSettings,
        observer: Arc<dyn Observer>,
        store: Arc<dyn Store>,
    ) -> Result<Arc<Self>, String> {
        let guard = Guard::new(settings.allow_networks.clone());
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(settings.timeout)
            .dns_resolver(Arc::new(GuardedResolver {
                guard: guard.clone(),
            }))
            .user_agent(concat!("a2a-bridge/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("the push client cannot be built: {e}"))?;
        let pusher = Arc::new(Self {
            client,
            guard,
            settings,
            queues: Arc::new(Mutex::new(HashMap::new())),
            observer,
            store,
            held: Arc::new(Mutex::new(HashSet::new())),
        });
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(Self::sweeping(Arc::downgrade(&pusher)));
        }
        Ok(pusher)
    }

    /// Every third of a lease while the pusher lives: [`ReqwestPusher::sweep`].
    async fn sweeping(pusher: std::sync::Weak<Self>) {
        loop {
            let Some(period) = pusher.upgrade().map(|p| p.settings.lease / 3) else {
                return;
            };
            tokio::time::sleep(period.max(Duration::from_millis(10))).await;
            let Some(pusher) = pusher.upgrade() else {
                return;
            };
            pusher.sweep().await;
        }
    }

    /// Renews the leases of the deliveries this instance holds, and takes over pending
    /// deliveries whose lease ran out (their instance went away), queueing them oldest first.
    pub async fn sweep(&self) {
        let held: Vec<String> = self
            .held
            .lock()
            .map(|h| h.iter().cloned().collect())
            .unwrap_or_default();
        if let Err(error) = self.store.renew_pending(&held, self.settings.lease).await {
            tracing::warn!(%error, "the leases of pending push deliveries could not be renewed");
        }
        match self.store.claim_pending(self.settings.lease, 100).await {
            Ok(claimed) => {
                for pending in claimed {
                    let mine = self.held.lock().is_ok_and(|h| h.contains(&pending.id));
                    if mine {
                        continue;
                    }
                    let delivery = bridge_app::push::delivery_of(&pending);
                    tracing::info!(url = %delivery.url, task = %delivery.task_id, "a pending push delivery is taken over");
                    if let Err(error) = self.enqueue(delivery) {
                        tracing::warn!(%error, "a pending push delivery could not be queued; it is tried again later");
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "pending push deliveries could not be claimed"),
        }
    }

    /// A delivery is finished: no longer held, forgotten in the store.
    async fn finished(&self, id: &str) {
        if let Ok(mut held) = self.held.lock() {
            held.remove(id);
        }
        if let Err(error) = self.store.drop_pending(id).await {
            tracing::warn!(%error, "a finished push delivery could not be forgotten; it may be sent again");
        }
    }

    /// The pusher's settings.
    #[must_use]
    pub const fn settings(&self) -> &PushSettings {
        &self.settings
    }

    async fn attempt(&self, delivery: &Delivery) -> Attempt {
        let host = match target_of(&delivery.url) {
            Ok((host, _)) => host,
            Err(why) => return Attempt::Rejected(why),
        };
        if let Ok(ip) = host.parse::<IpAddr>()
            && let Some(why) = self.guard.refusal(ip)
        {
            return Attempt::Refused(why);
        }
        let sent = self
            .client
            .post(&delivery.url)
            .headers(delivery.headers.clone())
            .header(DELIVERY_ID_HEADER, delivery.id.as_str())
            .body(delivery.body.clone())
            .timeout(self.settings.timeout)
            .send()
            .await;
        let mut response = match sent {
            Ok(response) => response,
            Err(error) => {
                let why = error_chain(&error);
                return if why.contains("the webhook guard refuses") {
                    Attempt::Refused(why)
                } else {
                    Attempt::Transient(why)
                };
            }
        };
        let status = response.status();
        // The answer is read up to the cap only, then the connection is let go.
        let mut read = 0;
        while read < ANSWER_CAP {
            match response.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) | Err(_) => break,
            }
        }
        if status.is_success() {
            Attempt::Delivered
        } else if status.is_server_error()
            || status == reqwest::StatusCode::REQUEST_TIMEOUT
            || status == reqwest::StatusCode::TOO_MANY_REQUESTS
        {
            Attempt::Transient(format!("HTTP {status}"))
        } else {
            Attempt::Rejected(format!("HTTP {status}"))
        }
    }

    /// Delivers one notification, retrying as configured, then forgets it in the store.
    async fn deliver(&self, delivery: Delivery) {
        self.attempts(&delivery).await;
        self.finished(&delivery.id).await;
    }

    /// Every attempt at one delivery, to its final outcome.
    async fn attempts(&self, delivery: &Delivery) {
        let mut pause = self.settings.backoff;
        for attempt in 1..=self.settings.attempts.max(1) {
            let why = match self.attempt(delivery).await {
                Attempt::Delivered => {
                    self.observer.push_delivery(Outcome::Delivered);
                    tracing::debug!(url = %delivery.url, task = %delivery.task_id, attempt, "push notification delivered");
                    return;
                }
                Attempt::Rejected(why) => {
                    self.observer.push_delivery(Outcome::Rejected);
                    tracing::warn!(url = %delivery.url, task = %delivery.task_id, %why, "the subscriber refused a push notification");
                    return;
                }
                Attempt::Refused(why) => {
                    self.observer.push_delivery(Outcome::Refused);
                    tracing::warn!(url = %delivery.url, task = %delivery.task_id, %why, "a push notification target is guarded");
                    return;
                }
                Attempt::Transient(why) => why,
            };
            if attempt == self.settings.attempts.max(1) {
                self.observer.push_delivery(Outcome::Failed);
                tracing::warn!(url = %delivery.url, task = %delivery.task_id, %why, attempts = attempt, "a push notification was given up");
                return;
            }
            self.observer.push_delivery(Outcome::Retried);
            tracing::info!(url = %delivery.url, task = %delivery.task_id, %why, attempt, "a push notification attempt failed; retrying");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }

    async fn work(self, target: String, mut queue: mpsc::Receiver<Delivery>) {
        loop {
            match tokio::time::timeout(IDLE, queue.recv()).await {
                Ok(Some(delivery)) => self.deliver(delivery).await,
                Ok(None) => return,
                Err(_) => {
                    let Ok(mut queues) = self.queues.lock() else {
                        return;
                    };
                    if queue.is_empty() {
                        queues.remove(&target);
                        return;
                    }
                }
            }
        }
    }
}

/// An error with its causes, which name what actually failed.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The queue a delivery joins: scheme, host and port of its URL.
fn target_key(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(
        |_| url.to_owned(),
        |u| {
            format!(
                "{}://{}:{}",
                u.scheme(),
                u.host_str().unwrap_or_default(),
                u.port_or_known_default().unwrap_or_default()
            )
        },
    )
}

impl Pusher for ReqwestPusher {
    fn check(&self, url: &str) -> BoxFuture<'static, Result<(), String>> {
        let guard = self.guard.clone();
        let url = url.to_owned();
        Box::pin(async move { guard.check(&url).await })
    }

    fn lease(&self) -> Duration {
        self.settings.lease
    }

    fn enqueue(&self, delivery: Delivery) -> Result<(), PushError> {
        let id = delivery.id.clone();
        self.queued(delivery)?;
        if let Ok(mut held) = self.held.lock() {
            held.insert(id);
        }
        Ok(())
    }
}

impl ReqwestPusher {
    fn queued(&self, delivery: Delivery) -> Result<(), PushError> {
        let target = target_key(&delivery.url);
        let mut queues = self
            .queues
            .lock()
            .map_err(|_| PushError::QueueFull(target.clone()))?;
        if let Some(queue) = queues.get(&target) {
            return match queue.try_send(delivery) {
                Ok(()) => Ok(()),
                Err(mpsc::error::TrySendError::Full(_)) => Err(PushError::QueueFull(target)),
                Err(mpsc::error::TrySendError::Closed(delivery)) => {
                    queues.remove(&target);
                    drop(queues);
                    self.queued(delivery)
                }
            };
        }
        let (sender, receiver) = mpsc::channel(self.settings.queue.max(1));
        sender
            .try_send(delivery)
            .map_err(|_| PushError::QueueFull(target.clone()))?;
        queues.insert(target.clone(), sender);
        tokio::spawn(self.clone().work(target, receiver));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;

    /// Each guarded range, by a member, with the range it must be reported as.
    const GUARDED: &[(&str, &str)] = &[
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("169.254.1.1", "link-local"),
        ("169.254.169.254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "unique-local"),
        ("fd12:3456::1", "unique-local"),
        ("fd00:ec2::254", "cloud metadata"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b:1::a00:1", "private"),
        ("::7f00:1", "loopback"),
        ("::a9fe:a9fe", "cloud metadata"),
        ("2002:7f00:1::", "loopback"),
        ("2002:a9fe:a9fe::1", "cloud metadata"),
        ("fec0::1", "site-local"),
        ("240.0.0.1", "reserved"),
        ("198.18.0.1", "benchmarking"),
        ("192.0.0.170", "IETF protocol assignments"),
    ];

    const PUBLIC: &[&str] = &[
        "8.8.8.8",
        "1.1.1.1",
        "172.32.0.1",
        "100.128.0.1",
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",
        "::808:808",
        "2002:808:808::1",
        "198.20.0.1",
        "192.0.1.1",
    ];

    #[test]
    fn every_guarded_range_is_refused_and_named() {
        let guard = Guard::default();
        for (ip, range) in GUARDED {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(guarded_range(ip), Some(*range), "{ip}");
            let why = guard.refusal(ip).unwrap();
            assert!(
                why.contains(range) && why.contains("push.allow_networks"),
                "{why}"
            );
        }
        for ip in PUBLIC {
            assert_eq!(guard.refusal(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[test]
    fn a_listed_network_is_allowed_and_only_it() {
        let guard = Guard::new(vec![
            "127.0.0.0/8".parse().unwrap(),
            "fd00::/8".parse().unwrap(),
        ]);
        for ip in [
            "127.0.0.1",
            "::ffff:127.0.0.1",
            "64:ff9b::7f00:1",
            "fd12::1",
        ] {
            assert_eq!(guard.refusal(ip.parse().unwrap()), None, "{ip}");
        }
        for ip in ["10.0.0.1", "::1", "fe80::1", "169.254.169.254"] {
            assert!(guard.refusal(ip.parse().unwrap()).is_some(), "{ip}");
        }
    }

    #[tokio::test]
    async fn urls_are_checked_by_scheme_literal_and_resolved_name() {
        let guard = Guard::default();
        let why = guard.check("ftp://8.8.8.8/hook").await.unwrap_err();
        assert!(why.contains("http or https"), "{why}");
        assert!(guard.check("not a url").await.is_err());
        let why = guard
            .check("http://[::ffff:127.0.0.1]:9/hook")
            .await
            .unwrap_err();
        assert!(why.contains("loopback"), "{why}");
        // Every other spelling of a guarded address: decimal, hex and octal IPv4 (read as
        // the WHATWG URL parser reads them), a shortened dotted form, IPv4-compatible IPv6.
        for url in [
            "http://2130706433:9/hook",
            "http://0x7f000001:9/hook",
            "http://0x7f.0.0.1:9/hook",
            "http://017700000001:9/hook",
            "http://127.1:9/hook",
            "http://0251.0376.0251.0376/latest/meta-data",
            "http://[::127.0.0.1]:9/hook",
            "http://[0:0:0:0:0:ffff:7f00:1]:9/hook",
        ] {
            let why = guard.check(url).await.unwrap_err();
            assert!(
                why.contains("loopback") || why.contains("cloud metadata"),
                "{url}: {why}"
            );
        }
        let why = guard.check("http://localhost:9/hook").await.unwrap_err();
        assert!(
            why.contains("localhost resolves to") && why.contains("loopback"),
            "{why}"
        );
        assert_eq!(guard.check("https://8.8.8.8/hook").await, Ok(()));
        let open = Guard::new(vec![
            "127.0.0.0/8".parse().unwrap(),
            "::1/128".parse().unwrap(),
        ]);
        assert_eq!(open.check("http://localhost:9/hook").await, Ok(()));
    }

    #[test]
    fn deliveries_queue_per_scheme_host_and_port() {
        assert_eq!(target_key("http://a.example/x"), "http://a.example:80");
        assert_eq!(target_key("https://a.example/y?z"), "https://a.example:443");
        assert_eq!(
            target_key("http://a.example:8080/"),
            "http://a.example:8080"
        );
    }

    /// Records every delivery outcome.
    #[derive(Debug, Default)]
    struct Outcomes(Mutex<Vec<Outcome>>);

    impl Observer for Outcomes {
        fn push_delivery(&self, outcome: Outcome) {
            self.0.lock().unwrap().push(outcome);
        }
    }

    #[tokio::test]
    async fn an_attempt_that_outlives_its_deadline_is_cut_and_retried() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        // A subscriber that holds its first request's answer forever and answers the next.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            for n in 0.. {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut buffer = vec![0; 4096];
                let _ = socket.read(&mut buffer).await;
                if n == 0 {
                    held.push(socket);
                    continue;
                }
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                    .await;
            }
        });
        let outcomes = Arc::new(Outcomes::default());
        let settings = PushSettings {
            allow_networks: vec!["127.0.0.0/8".parse().unwrap()],
            attempts: 3,
            backoff: Duration::from_millis(10),
            timeout: Duration::from_millis(300),
            ..PushSettings::default()
        };
        let pusher = ReqwestPusher::new(
            settings,
            Arc::clone(&outcomes) as Arc<dyn Observer>,
            Arc::new(bridge_app::store::MemoryStore::default()),
        )
        .unwrap();
        let started = tokio::time::Instant::now();
        pusher
            .enqueue(Delivery {
                id: "d-1".to_owned(),
                url: format!("http://127.0.0.1:{port}/hook"),
                headers: http::HeaderMap::new(),
                body: bytes::Bytes::from_static(b"{}"),
                task_id: "t-1".to_owned(),
            })
            .unwrap();
        for _ in 0..100 {
            if outcomes.0.lock().unwrap().contains(&Outcome::Delivered) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            *outcomes.0.lock().unwrap(),
            [Outcome::Retried, Outcome::Delivered]
        );
        // The first attempt ended at its deadline, not when the subscriber would have answered.
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    }
}
