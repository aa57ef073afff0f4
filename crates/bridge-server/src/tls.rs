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

/// Where the server's certificate and key are, both PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server certificate first, then the intermediates that lead to a root the clients
    /// trust (RFC 8446 section 4.4.2).
    pub cert_chain: PathBuf,
    /// The private key of the first certificate: PKCS#8, PKCS#1 (RSA) or SEC1 (EC).
    pub private_key: PathBuf,
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
    /// rustls refused the certificate and key (a key that does not match the certificate, an
    /// unsupported key type).
    #[error("the certificate and key are not usable: {0}")]
    Rejected(#[from] rustls::Error),
}

/// Builds the acceptor [`crate::run_tls`] takes, from a PEM certificate chain and key.
///
/// # Errors
///
/// [`TlsError`] when a file cannot be read, holds no certificate or key, or rustls refuses the
/// pair.
pub fn tls_acceptor(files: &TlsFiles) -> Result<TlsAcceptor, TlsError> {
    let chain = read_chain(&files.cert_chain)?;
    let key =
        PrivateKeyDer::from_pem_file(&files.private_key).map_err(|error| TlsError::PrivateKey {
            path: files.private_key.clone(),
            error,
        })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
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
