//! HTTPS for `serve`: a server certificate chain and its private key from PEM files, as rustls
//! reads them (the same PEM parser the Kafka client's key stores go through), TLS 1.2 and 1.3.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Why the certificate or key cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The certificate file holds no certificate, or one that is not valid PEM.
    #[error("{path}: no PEM CERTIFICATE in it{}", reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default())]
    NoCertificate {
        /// The file.
        path: String,
        /// The parser's reason, if any.
        reason: Option<String>,
    },
    /// The key file holds no unencrypted private key.
    #[error("{path}: no unencrypted private key (PKCS#8, PKCS#1 or SEC1 PEM) in it: {reason}")]
    NoKey {
        /// The file.
        path: String,
        /// The parser's reason.
        reason: String,
    },
    /// rustls refuses the pair (a key that is not the certificate's, an unsupported key type).
    #[error("the certificate and key cannot serve TLS: {0}")]
    Config(#[from] rustls::Error),
}

/// A server configuration from PEM bytes: `cert` the chain (the server's certificate first),
/// `key` its private key; `cert_path` and `key_path` name them in errors.
///
/// ```
/// use kstreams_assignor::views::serve::tls::{TlsError, server_config_from_pem};
///
/// let e = server_config_from_pem(b"not pem", "cert.pem", b"", "key.pem").unwrap_err();
/// assert!(matches!(e, TlsError::NoCertificate { .. }), "{e}");
/// ```
pub fn server_config_from_pem(
    cert: &[u8],
    cert_path: &str,
    key: &[u8],
    key_path: &str,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::NoCertificate {
            path: cert_path.to_owned(),
            reason: Some(e.to_string()),
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: cert_path.to_owned(),
            reason: None,
        });
    }
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| TlsError::NoKey {
        path: key_path.to_owned(),
        reason: e.to_string(),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(rustls::DEFAULT_VERSIONS)?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    Ok(Arc::new(config))
}

/// [`server_config_from_pem`] of the files `cert` and `key`.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| TlsError::Read {
            path: p.display().to_string(),
            source,
        })
    };
    server_config_from_pem(
        &read(cert)?,
        &cert.display().to_string(),
        &read(key)?,
        &key.display().to_string(),
    )
}
