//! The credential a request carries, in the contract's terms (Authentication: "Header:
//! `Authorization: Bearer <API_KEY>`"), and the near misses of the key: the names the rule
//! catalogue, the request space and a recorded request use. How each is spelt on the wire is
//! `generation::request`'s.

use serde::Serialize;

/// What stands for the key wherever a request is recorded or shown: never the key's text.
pub const REDACTED: &str = "[REDACTED]";

/// The credential a request carries, named by what it is in the contract's terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Credential {
    /// `Authorization: Bearer <API_KEY>`, as the contract states it.
    Valid,
    /// No Authorization header at all.
    Missing,
    /// The Bearer scheme with a token that is not the key.
    WrongKey,
    /// The Bearer scheme with nothing after it.
    EmptyToken,
    /// The right key under another scheme (`Basic`).
    OtherScheme,
    /// `bearer <API_KEY>`: the scheme name is case-insensitive (RFC 9110 section 11.1).
    LowercaseScheme,
    /// A near miss of the key: what real implementations get wrong when they do not compare
    /// the token exactly. Each is another token, so each must be refused.
    NearMiss(NearMiss),
    /// An Authorization value as a report recorded it, `[REDACTED]` standing for the key.
    Recorded(String),
    /// `Bearer<API_KEY>`: no space between scheme and token, so one token and no key.
    NoSeparator,
    /// `Bearer` and nothing else.
    SchemeAlone,
    /// The key under no scheme.
    KeyAlone,
    /// `Bearer<TAB><API_KEY>`: RFC 6750's grammar separates them with spaces only.
    TabSeparator,
    /// `Bearer   <API_KEY>`: RFC 6750 allows one or more spaces (`1*SP`).
    SeveralSpaces,
    /// `Bearer <API_KEY> junk`: the token is the key and a word, not the key (a guard that
    /// splits on the space and takes the first word lets it through).
    TrailingWord,
    /// `Authorization: Basic base64(<API_KEY>:)`: the key as the user name of another scheme.
    BasicUser,
    /// `Authorization: Basic base64(:<API_KEY>)`: the key as the password.
    BasicPassword,
    /// No Authorization; the key in an `api_key` header (other APIs' convention).
    ApiKeyHeader,
    /// No Authorization; the key in an `X-API-Key` header.
    XApiKeyHeader,
    /// No Authorization; the key in an `api_key` query parameter.
    QueryParameter,
    /// No Authorization; the key in an `api_key` cookie.
    Cookie,
}

/// The credentials that carry the key in another channel: their name, and the channel as a
/// recorded request names it (`header X-API-Key`, `query api_key`), so that a curl line and
/// `replay` put the key back there and nowhere else.
const CHANNELS: [(&str, &str, Credential); 4] = [
    ("api-key-header", "header api_key", Credential::ApiKeyHeader),
    (
        "x-api-key-header",
        "header X-API-Key",
        Credential::XApiKeyHeader,
    ),
    (
        "query-parameter",
        "query api_key",
        Credential::QueryParameter,
    ),
    ("cookie", "header Cookie", Credential::Cookie),
];

impl Credential {
    pub fn parse(name: &str) -> Option<Credential> {
        Some(match name {
            "valid" => Credential::Valid,
            "missing" => Credential::Missing,
            "wrong-key" => Credential::WrongKey,
            "empty-token" => Credential::EmptyToken,
            "other-scheme" => Credential::OtherScheme,
            "lowercase-scheme" => Credential::LowercaseScheme,
            "no-separator" => Credential::NoSeparator,
            "scheme-alone" => Credential::SchemeAlone,
            "key-alone" => Credential::KeyAlone,
            "tab-separator" => Credential::TabSeparator,
            "several-spaces" => Credential::SeveralSpaces,
            "trailing-word" => Credential::TrailingWord,
            "basic-user" => Credential::BasicUser,
            "basic-password" => Credential::BasicPassword,
            // An Authorization value spelt out, `[REDACTED]` standing for the key: the request
            // space's spellings (a list, a prefix) need no name of their own.
            spelt if spelt.contains(REDACTED) => Credential::Recorded(spelt.into()),
            other => match CHANNELS.iter().find(|(name, _, _)| *name == other) {
                Some((_, _, credential)) => credential.clone(),
                None => Credential::NearMiss(NearMiss::parse(other)?),
            },
        })
    }

    /// The channel that carries the key outside the Authorization header, as a recorded
    /// request names it (`header X-API-Key`, `query api_key`, `header Cookie`).
    pub fn channel(&self) -> Option<&'static str> {
        CHANNELS
            .iter()
            .find(|(_, _, credential)| credential == self)
            .map(|(_, channel, _)| *channel)
    }

    /// The credential a recorded request's channel names.
    pub fn of_channel(channel: &str) -> Option<Credential> {
        CHANNELS
            .iter()
            .find(|(_, named, _)| *named == channel)
            .map(|(_, _, credential)| credential.clone())
    }

    /// The name `parse` reads back: a credential's own name, a near miss's, a recorded
    /// value as it is.
    pub fn name(&self) -> String {
        let name = match self {
            Credential::Valid => "valid",
            Credential::Missing => "missing",
            Credential::WrongKey => "wrong-key",
            Credential::EmptyToken => "empty-token",
            Credential::OtherScheme => "other-scheme",
            Credential::LowercaseScheme => "lowercase-scheme",
            Credential::NoSeparator => "no-separator",
            Credential::SchemeAlone => "scheme-alone",
            Credential::KeyAlone => "key-alone",
            Credential::TabSeparator => "tab-separator",
            Credential::SeveralSpaces => "several-spaces",
            Credential::TrailingWord => "trailing-word",
            Credential::BasicUser => "basic-user",
            Credential::BasicPassword => "basic-password",
            Credential::NearMiss(near) => near.name(),
            Credential::Recorded(value) => return value.clone(),
            channelled => CHANNELS
                .iter()
                .find(|(_, _, credential)| credential == channelled)
                .map_or("", |(name, _, _)| name),
        };
        name.to_string()
    }
}

/// A token one edit away from the key, the mistakes of a comparison that is not exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NearMiss {
    /// The key with a character added at the end (a prefix comparison accepts it).
    CharAppended,
    /// The key with a character added at the start (a suffix comparison accepts it).
    CharPrepended,
    /// The key less its last character (a comparison one character short accepts it).
    LastCharDropped,
    /// The key less its first character.
    FirstCharDropped,
    /// The key with every letter's case swapped (a case-insensitive comparison accepts it); a
    /// key without letters, which has no other case, has its digits and symbols shifted
    /// instead (see `shift` in `generation::request`): still another token of its shape, never the key itself.
    CaseSwapped,
    /// The key twice.
    Repeated,
}

impl NearMiss {
    pub const ALL: [NearMiss; 6] = [
        NearMiss::CharAppended,
        NearMiss::CharPrepended,
        NearMiss::LastCharDropped,
        NearMiss::FirstCharDropped,
        NearMiss::CaseSwapped,
        NearMiss::Repeated,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NearMiss::CharAppended => "char-appended",
            NearMiss::CharPrepended => "char-prepended",
            NearMiss::LastCharDropped => "last-char-dropped",
            NearMiss::FirstCharDropped => "first-char-dropped",
            NearMiss::CaseSwapped => "case-swapped",
            NearMiss::Repeated => "repeated",
        }
    }

    pub fn parse(name: &str) -> Option<NearMiss> {
        NearMiss::ALL.into_iter().find(|near| near.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name reads back as the credential it names.
    #[test]
    fn names_read_back() {
        let mut all = vec![
            Credential::Valid,
            Credential::Missing,
            Credential::WrongKey,
            Credential::EmptyToken,
            Credential::OtherScheme,
            Credential::LowercaseScheme,
            Credential::NoSeparator,
            Credential::SchemeAlone,
            Credential::KeyAlone,
            Credential::TabSeparator,
            Credential::SeveralSpaces,
            Credential::TrailingWord,
            Credential::BasicUser,
            Credential::BasicPassword,
            Credential::Recorded(format!("Bearer {REDACTED}, junk")),
        ];
        all.extend(CHANNELS.iter().map(|(_, _, credential)| credential.clone()));
        all.extend(NearMiss::ALL.map(Credential::NearMiss));
        for credential in all {
            assert_eq!(
                Credential::parse(&credential.name()),
                Some(credential.clone())
            );
        }
        assert_eq!(Credential::parse("wrong-keys"), None);
    }
}
