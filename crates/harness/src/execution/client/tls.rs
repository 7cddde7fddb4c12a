//! The TLS settings every lane shares: roots, `--ca-cert`, `--insecure`, a client identity.

use std::sync::Arc;

use super::client_error::ClientError;
use super::client_settings::ClientSettings;

/// The TLS settings of every lane, built once: certificates verified against the platform's
/// roots and `--ca-cert`'s, or not at all under `--insecure`.
pub(super) fn tls_config(settings: &ClientSettings) -> Result<rustls::ClientConfig, ClientError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Build(e.to_string()))?
        .dangerous();
    let builder = if settings.insecure {
        builder.with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
    } else {
        let mut extra = Vec::new();
        for pem in &settings.ca_certificates {
            let certificates = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ClientError::Certificate(e.to_string()))?;
            if certificates.is_empty() {
                return Err(ClientError::Certificate(
                    "no PEM certificate in the file".into(),
                ));
            }
            extra.extend(certificates);
        }
        let verifier = if extra.is_empty() {
            rustls_platform_verifier::Verifier::new(provider)
        } else {
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider)
        }
        .map_err(|e| ClientError::Certificate(e.to_string()))?;
        builder.with_custom_certificate_verifier(Arc::new(verifier))
    };
    let mut config = match &settings.client_identity {
        None => builder.with_no_client_auth(),
        Some((chain, key)) => {
            use rustls::pki_types::PrivateKeyDer;
            let chain = CertificateDer::pem_slice_iter(chain)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ClientError::Certificate(format!("--client-cert: {e}")))?;
            if chain.is_empty() {
                return Err(ClientError::Certificate(
                    "--client-cert: no PEM certificate in the file".into(),
                ));
            }
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| ClientError::Certificate(format!("--client-key: {e}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| ClientError::Certificate(format!("--client-cert/--client-key: {e}")))?
        }
    };
    config.alpn_protocols = if settings.http2_prior_knowledge {
        vec![b"h2".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(config)
}

/// `--insecure`: any certificate is accepted (said on stderr, recorded in the report).
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &rustls::pki_types::CertificateDer<'_>,
        _dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &rustls::pki_types::CertificateDer<'_>,
        _dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
