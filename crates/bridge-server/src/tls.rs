//! The TLS side of the inbound server: building a [`TlsAcceptor`] from PEM files.
//!
//! # Why the ring provider, named explicitly
//!
//! rustls needs a crypto provider. reqwest's `rustls-tls` feature, which the outbound client
//! uses, already builds ring; using the same one keeps a single crypto stack in the binary
//! instead of building aws-lc-rs beside it. The provider is passed to the config builder rather
//! than installed as the process default: the process default is one global that another crate
//! could set differently, and `ServerConfig::builder()` refuses to guess when two providers are
//! compiled in.
//!
//! # Why HTTP/1.1 only in ALPN
//!
//! The server speaks HTTP/1.1 (SSE needs nothing more). Offering only `http/1.1` in ALPN
//! (RFC 7301) keeps a client that would prefer `h2` from choosing a protocol the server does
//! not speak.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Where the server's certificate and key are, both PEM, and how callers' certificates are
/// checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server certificate first, then the intermediates that lead to a root the clients
    /// trust (RFC 8446 section 4.4.2).
    pub cert_chain: PathBuf,
    /// The private key of the first certificate: PKCS#8, PKCS#1 (RSA) or SEC1 (EC).
    pub private_key: PathBuf,
    /// The PEM certificates of the authorities callers' certificates must chain to: when set,
    /// every caller must present a certificate that verifies (mTLS).
    pub client_ca: Option<PathBuf>,
    /// What of a caller's certificate names it.
    pub client_identity: ClientIdentity,
}

/// What of a caller's certificate is its identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientIdentity {
    /// The subject's common name.
    #[default]
    CommonName,
    /// The first DNS name among the subject alternative names.
    Dns,
    /// The first URI among them (a SPIFFE ID, say).
    Uri,
    /// The first e-mail address among them.
    Email,
}

impl ClientIdentity {
    /// Every choice, for tables and tests.
    pub const ALL: [Self; 4] = [Self::CommonName, Self::Dns, Self::Uri, Self::Email];

    /// The name a configuration uses: `cn`, `dns`, `uri`, `email`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::CommonName => "cn",
            Self::Dns => "dns",
            Self::Uri => "uri",
            Self::Email => "email",
        }
    }

    /// What a name means.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The identity `der`, a caller's (verified) certificate, names; `None` when it names none.
    #[must_use]
    pub fn of(self, der: &[u8]) -> Option<String> {
        use x509_parser::extensions::GeneralName;
        let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
        let name = match self {
            Self::CommonName => certificate
                .subject()
                .iter_common_name()
                .next()
                .and_then(|cn| cn.as_str().ok())
                .map(str::to_owned),
            alternative => certificate
                .subject_alternative_name()
                .ok()
                .flatten()
                .and_then(|san| {
                    san.value
                        .general_names
                        .iter()
                        .find_map(|name| match (alternative, name) {
                            (Self::Dns, GeneralName::DNSName(n))
                            | (Self::Uri, GeneralName::URI(n))
                            | (Self::Email, GeneralName::RFC822Name(n)) => Some((*n).to_owned()),
                            _ => None,
                        })
                }),
        };
        name.filter(|n| !n.is_empty())
    }
}

/// A listener's TLS setup, replaceable while it serves: each connection is accepted with the
/// setup current when it arrived, so a reload that re-reads the certificate, its key or the
/// client authorities, or names callers by another part of their certificate, applies to every
/// connection from then on (and to none already open).
#[derive(Clone)]
pub struct Tls(Arc<arc_swap::ArcSwap<Setup>>);

/// What a connection is accepted with.
#[derive(Debug)]
struct Setup {
    config: Arc<rustls::ServerConfig>,
    /// What of a verified client certificate names the caller; `None` without client CAs.
    identity: Option<ClientIdentity>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Tls").finish_non_exhaustive()
    }
}

impl Tls {
    /// Starts with `config`, callers named by `identity` of their certificate (when the config
    /// verifies client certificates).
    #[must_use]
    pub fn new(config: Arc<rustls::ServerConfig>, identity: Option<ClientIdentity>) -> Self {
        Self(Arc::new(arc_swap::ArcSwap::from_pointee(Setup {
            config,
            identity,
        })))
    }

    /// The setup of `files` for a listener speaking `alpn`: [`server_config`], and callers
    /// named as `files` say when it has client authorities.
    ///
    /// # Errors
    ///
    /// As [`server_config`].
    pub fn of(files: &TlsFiles, alpn: &[&[u8]]) -> Result<Self, TlsError> {
        let identity = files.client_ca.is_some().then_some(files.client_identity);
        Ok(Self::new(server_config(files, alpn)?, identity))
    }

    /// The rustls setup the next connection is accepted with.
    #[must_use]
    pub fn current(&self) -> Arc<rustls::ServerConfig> {
        Arc::clone(&self.0.load().config)
    }

    /// What names the callers of the next connection, when their certificates are verified.
    #[must_use]
    pub fn identity(&self) -> Option<ClientIdentity> {
        self.0.load().identity
    }

    /// Accepts the connections from now on as `next` does.
    pub fn replace(&self, next: &Self) {
        self.0.store(next.0.load_full());
    }
}

impl From<TlsAcceptor> for Tls {
    fn from(acceptor: TlsAcceptor) -> Self {
        Self::new(Arc::clone(acceptor.config()), None)
    }
}

/// Why a TLS acceptor could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file could not be read or is not PEM.
    #[error("cannot read the certificate chain {}: {error}", path.display())]
    CertChain {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: rustls::pki_types::pem::Error,
    },
    /// The certificate file holds no certificate.
    #[error("the certificate chain {} holds no certificate", path.display())]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// The key file could not be read, is not PEM, or holds no private key.
    #[error("cannot read the private key {}: {error}", path.display())]
    PrivateKey {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: rustls::pki_types::pem::Error,
    },
    /// The client authorities cannot check callers' certificates.
    #[error("the client CA {} cannot be used: {error}", path.display())]
    ClientCa {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: String,
    },
    /// rustls refused the certificate and key (a key that does not match the certificate, an
    /// unsupported key type).
    #[error("the certificate and key are not usable: {0}")]
    Rejected(#[from] rustls::Error),
}

/// Builds the acceptor [`crate::run_tls`] takes, from a PEM certificate chain and key: the
/// [`server_config`] of `files` for HTTP/1.1.
///
/// # Errors
///
/// [`TlsError`] when a file cannot be read, holds no certificate or key, or rustls refuses the
/// pair.
pub fn tls_acceptor(files: &TlsFiles) -> Result<TlsAcceptor, TlsError> {
    server_config(files, &[b"http/1.1"]).map(TlsAcceptor::from)
}

/// The rustls setup of `files` (the certificate chain, its key, the client authorities when
/// `client_ca` names them), offering the ALPN protocols `alpn`.
///
/// # Errors
///
/// [`TlsError`] when a file cannot be read, holds no certificate or key, or rustls refuses the
/// pair.
pub fn server_config(
    files: &TlsFiles,
    alpn: &[&[u8]],
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain = read_chain(&files.cert_chain)?;
    let key =
        PrivateKeyDer::from_pem_file(&files.private_key).map_err(|error| TlsError::PrivateKey {
            path: files.private_key.clone(),
            error,
        })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()?;
    let builder = match &files.client_ca {
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for certificate in read_chain(path)? {
                roots.add(certificate)?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .map_err(|e| TlsError::ClientCa {
                path: path.clone(),
                error: e.to_string(),
            })?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key)?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let failed = |error| TlsError::CertChain {
        path: path.to_owned(),
        error,
    };
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(failed)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(failed)?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    Ok(chain)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;

    #[test]
    fn each_choice_reads_its_part_of_the_certificate_and_its_name_back() {
        let mut params = rcgen::CertificateParams::new(vec!["agent.example".to_owned()]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "alice");
        params.subject_alt_names.push(rcgen::SanType::URI(
            rcgen::string::Ia5String::try_from("spiffe://example/alice").unwrap(),
        ));
        params.subject_alt_names.push(rcgen::SanType::Rfc822Name(
            rcgen::string::Ia5String::try_from("alice@example.org").unwrap(),
        ));
        let key = rcgen::KeyPair::generate().unwrap();
        let der = params.self_signed(&key).unwrap().der().to_vec();
        assert_eq!(
            ClientIdentity::CommonName.of(&der).as_deref(),
            Some("alice")
        );
        assert_eq!(
            ClientIdentity::Dns.of(&der).as_deref(),
            Some("agent.example")
        );
        assert_eq!(
            ClientIdentity::Uri.of(&der).as_deref(),
            Some("spiffe://example/alice")
        );
        assert_eq!(
            ClientIdentity::Email.of(&der).as_deref(),
            Some("alice@example.org")
        );
        assert_eq!(ClientIdentity::CommonName.of(b"not a certificate"), None);
        for choice in ClientIdentity::ALL {
            assert_eq!(ClientIdentity::from_name(choice.as_str()), Some(choice));
        }
        assert_eq!(ClientIdentity::from_name("subject"), None);
    }
}
