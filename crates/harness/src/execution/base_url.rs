//! The target's base address: the contract's `{base_url}`, `/v1` included, checked and
//! parsed once, where it enters the run; everything after reads the parsed address.

use std::fmt;

/// A base address the run may send to: http or https, no credentials, no query or fragment,
/// ending in the version segment `/v1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// As given (requests append their paths to it).
    text: String,
    url: reqwest::Url,
}

impl BaseUrl {
    /// Parses and checks `text`; a refusal names the address without its userinfo and query
    /// values (a key may sit there).
    pub fn parse(text: &str) -> Result<BaseUrl, String> {
        let shown = super::redact::url_for_display(text);
        let url = reqwest::Url::parse(text).map_err(|e| {
            format!(
                "--base-url {shown:?}: not a URL ({e}); give the whole base address, e.g. https://staging.example/v1"
            )
        })?;
        if !url.username().is_empty() || url.password().is_some() {
            // They would go out as a second Authorization header and be written everywhere.
            return Err(
                "--base-url: credentials in the URL are refused; give the key in PETSTORE_API_KEY (or --api-key-env, --api-key-file)".into(),
            );
        }
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "--base-url {shown:?}: the scheme must be http or https"
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!(
                "--base-url {shown:?}: a base address has no query string or fragment (paths are appended to it)"
            ));
        }
        if !url.path().trim_end_matches('/').ends_with("/v1") {
            return Err(format!(
                "--base-url {shown:?}: the base address must end in the version segment /v1 (the contract's {{base_url}})"
            ));
        }
        Ok(BaseUrl {
            text: text.to_string(),
            url,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the address names this machine: such a target is never reached through a
    /// proxy of the environment (the registry proxy of a CI runner), only through `--proxy`.
    pub fn is_loopback(&self) -> bool {
        match self.url.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for BaseUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<BaseUrl, String> {
        BaseUrl::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_is_checked_once_and_knows_its_host() {
        let loopback = |text: &str| BaseUrl::parse(text).unwrap().is_loopback();
        assert!(loopback("http://127.0.0.1:8080/v1"));
        assert!(loopback("http://LocalHost:8080/v1"));
        assert!(loopback("http://[::1]:8080/v1"));
        assert!(loopback("http://127.1.2.3/v1"));
        assert!(!loopback("https://staging.example/v1"));
        assert!(!loopback("http://10.0.0.1/v1"));
        // A host that only looks local to a hand-written split is not.
        assert!(!loopback("http://localhost.example.com/v1"));
        for (text, why) in [
            ("staging.example/v1", "not a URL"),
            ("http://127.0.0.1:1/api", "/v1"),
            ("ftp://host/v1", "scheme"),
            ("http://host/v1?key=secret-value", "query"),
            ("http://user:pass@host/v1", "credentials"),
        ] {
            let refused = BaseUrl::parse(text).unwrap_err();
            assert!(refused.contains(why), "{text}: {refused}");
            assert!(!refused.contains("secret-value"), "{refused}");
        }
        assert_eq!(
            BaseUrl::parse("http://host:1/v1/").unwrap().as_str(),
            "http://host:1/v1/"
        );
    }
}
