//! Why the client could not be built: its own file, so that the parts that build it (the TLS
//! configuration) name it without naming the client.

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("base URL {0:?}: {1}")]
    BaseUrl(String, String),
    #[error("CA certificate: {0}")]
    Certificate(String),
    #[error("HTTP client: {0}")]
    Build(String),
}
