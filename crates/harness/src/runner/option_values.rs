//! The kinds of value a run option holds. Each is read from a flag or a variable (`FromStr`,
//! through clap) and from a profile (serde), and written back two ways ([`Setting`]): as a
//! profile holds it, for `--print-config`, and as a command line gives it, for the Re-run line.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use crate::catalogue::Gate;
use crate::catalogue::partition::Partition;
use crate::report::KnownFailure;

/// A value of a run option, written back.
pub trait Setting {
    /// As a profile writes it (a TOML value), for `--print-config`; `None`: unset.
    fn toml(&self) -> Option<String>;
    /// The words that give it on a command line, `flag` first; none when unset or off.
    fn words(&self, flag: &str) -> Vec<String>;
}

/// `value` as one word of a POSIX shell command.
pub fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

/// A TOML string (a JSON string is one: the same escapes).
fn toml_string(text: &str) -> Option<String> {
    serde_json::to_string(text).ok()
}

/// The flag and the value as one shell word.
fn flag_and(flag: &str, value: &str) -> Vec<String> {
    vec![flag.to_string(), shell_word(value)]
}

impl Setting for bool {
    fn toml(&self) -> Option<String> {
        Some(self.to_string())
    }
    fn words(&self, flag: &str) -> Vec<String> {
        if *self {
            vec![flag.to_string()]
        } else {
            Vec::new()
        }
    }
}

macro_rules! plain_setting {
    ($($t:ty),*) => {$(
        impl Setting for $t {
            fn toml(&self) -> Option<String> {
                Some(self.to_string())
            }
            fn words(&self, flag: &str) -> Vec<String> {
                flag_and(flag, &self.to_string())
            }
        }
    )*};
}
plain_setting!(u32, u64, usize);

impl Setting for f64 {
    fn toml(&self) -> Option<String> {
        Some(format!("{self:?}"))
    }
    fn words(&self, flag: &str) -> Vec<String> {
        flag_and(flag, &self.to_string())
    }
}

/// An empty text means nothing on a command line (an empty filter selects every rule).
impl Setting for String {
    fn toml(&self) -> Option<String> {
        toml_string(self)
    }
    fn words(&self, flag: &str) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        flag_and(flag, self)
    }
}

impl Setting for PathBuf {
    fn toml(&self) -> Option<String> {
        toml_string(&self.display().to_string())
    }
    fn words(&self, flag: &str) -> Vec<String> {
        flag_and(flag, &self.display().to_string())
    }
}

impl Setting for Gate {
    fn toml(&self) -> Option<String> {
        toml_string(self.as_str())
    }
    fn words(&self, flag: &str) -> Vec<String> {
        flag_and(flag, self.as_str())
    }
}

impl Setting for Partition {
    fn toml(&self) -> Option<String> {
        toml_string(&self.to_string())
    }
    fn words(&self, flag: &str) -> Vec<String> {
        flag_and(flag, &self.to_string())
    }
}

/// A duration as people write it (`50ms`, `2m`).
impl Setting for Duration {
    fn toml(&self) -> Option<String> {
        toml_string(&humantime::format_duration(*self).to_string())
    }
    fn words(&self, flag: &str) -> Vec<String> {
        flag_and(flag, &humantime::format_duration(*self).to_string())
    }
}

impl<T: Setting> Setting for Option<T> {
    fn toml(&self) -> Option<String> {
        self.as_ref().and_then(T::toml)
    }
    fn words(&self, flag: &str) -> Vec<String> {
        self.as_ref()
            .map(|value| value.words(flag))
            .unwrap_or_default()
    }
}

/// A list a profile writes as a TOML array.
fn toml_list<T: Setting>(items: &[T]) -> Option<String> {
    let items: Vec<String> = items.iter().filter_map(T::toml).collect();
    Some(format!("[{}]", items.join(", ")))
}

/// Numbers given as one comma-separated value (`--category-ids 1,2,3`).
impl Setting for Vec<i64> {
    fn toml(&self) -> Option<String> {
        let items: Vec<String> = self.iter().map(i64::to_string).collect();
        Some(format!("[{}]", items.join(", ")))
    }
    fn words(&self, flag: &str) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        let items: Vec<String> = self.iter().map(i64::to_string).collect();
        flag_and(flag, &items.join(","))
    }
}

/// Texts given one flag each (`--skip a --skip b`); an empty one means nothing.
impl Setting for Vec<String> {
    fn toml(&self) -> Option<String> {
        toml_list(self)
    }
    fn words(&self, flag: &str) -> Vec<String> {
        self.iter()
            .filter(|item| !item.is_empty())
            .flat_map(|item| flag_and(flag, item))
            .collect()
    }
}

/// A whole number of seconds, written as people write it: `20s`, `2m`, `1h 30m`, or a bare
/// number (a profile may hold either, `1800` or `"30m"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seconds(pub u64);

impl Seconds {
    pub fn duration(self) -> Duration {
        Duration::from_secs(self.0)
    }
}

impl FromStr for Seconds {
    type Err = String;

    fn from_str(text: &str) -> Result<Seconds, String> {
        let text = text.trim();
        if let Ok(seconds) = text.parse::<u64>() {
            return Ok(Seconds(seconds));
        }
        let duration = humantime::parse_duration(text)
            .map_err(|e| format!("{e} (write e.g. 20s, 2m, 1h, or a number of seconds)"))?;
        if duration.subsec_nanos() != 0 {
            return Err(format!("{text}: whole seconds only"));
        }
        Ok(Seconds(duration.as_secs()))
    }
}

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", humantime::format_duration(self.duration()))
    }
}

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Seconds, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Count(u64),
            Text(String),
        }
        match Written::deserialize(deserializer)? {
            Written::Count(seconds) => Ok(Seconds(seconds)),
            Written::Text(text) => text.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl Setting for Seconds {
    fn toml(&self) -> Option<String> {
        Some(self.0.to_string())
    }
    fn words(&self, flag: &str) -> Vec<String> {
        flag_and(flag, &self.to_string())
    }
}

/// A header sent with every request, `Name: value`, as curl's `-H` takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub value: String,
}

impl Header {
    /// Whether its value is a credential, by the header's name or the value's scheme: it is
    /// then redacted everywhere, as the key is.
    pub fn is_credential(&self) -> bool {
        crate::execution::looks_like_credential(&self.name, &self.value)
    }
}

impl FromStr for Header {
    type Err = String;

    /// The headers the rules set themselves are refused: the key goes in Authorization from
    /// its variable or file, never from a header option.
    fn from_str(text: &str) -> Result<Header, String> {
        let Some((name, value)) = text.split_once(':') else {
            // Not echoed: a value with no name may be the key, given where a header belongs.
            return Err("no header name (the value is not shown): write 'Name: value'".into());
        };
        let (name, value) = (name.trim(), value.trim());
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || !name.chars().all(token) {
            return Err(
                "the text before ':' is not a header name (not shown): write 'Name: value'".into(),
            );
        }
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(format!("{name}: a header value holds no control character"));
        }
        const OWN: [&str; 6] = [
            "authorization",
            "content-type",
            "content-length",
            "accept",
            "host",
            "transfer-encoding",
        ];
        if OWN.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "{name}: set by the suite itself (the key comes from --api-key-env or --api-key-file)"
            ));
        }
        Ok(Header {
            name: name.to_string(),
            value: value.to_string(),
        })
    }
}

impl<'de> Deserialize<'de> for Header {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Header, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A credential's value is never printed, nor put on a command line: there it is read from a
/// variable of its own.
impl Setting for Vec<Header> {
    fn toml(&self) -> Option<String> {
        let shown: Vec<String> = self
            .iter()
            .map(|header| {
                let value = if header.is_credential() {
                    crate::execution::redact::REDACTED
                } else {
                    &header.value
                };
                format!("{}: {value}", header.name)
            })
            .collect();
        toml_list(&shown)
    }
    fn words(&self, flag: &str) -> Vec<String> {
        let mut words = Vec::new();
        for header in self {
            if header.is_credential() {
                // In double quotes, so that the shell expands it: the option and its value go
                // as one word written here (a header name holds no quote or `$`).
                let variable = crate::outcome::header_variable(&header.name);
                words.push(format!("{flag} \"{}: ${{{variable}}}\"", header.name));
            } else {
                words.extend(flag_and(
                    flag,
                    &format!("{}: {}", header.name, header.value),
                ));
            }
        }
        words
    }
}

/// The proxy a run sends through (`--proxy URL`). Its userinfo is a credential: printed as
/// [`REDACTED`](crate::execution::redact::REDACTED), and read on a command line from a
/// variable of its own, `PETSTORE_PROXY_USERINFO`, as a secret header's value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyUrl(pub String);

/// The variable a Re-run line reads a proxy's userinfo from.
pub const PROXY_USERINFO_VARIABLE: &str = "PETSTORE_PROXY_USERINFO";

impl ProxyUrl {
    /// The userinfo's password (and the userinfo whole), if the URL has one: what the
    /// redactor takes out besides the key. A user name alone is no secret.
    pub fn secrets(&self) -> Vec<String> {
        crate::execution::redact::userinfo_secrets(&self.0)
    }
}

impl FromStr for ProxyUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<ProxyUrl, String> {
        Ok(ProxyUrl(text.to_string()))
    }
}

impl<'de> Deserialize<'de> for ProxyUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ProxyUrl, D::Error> {
        String::deserialize(deserializer).map(ProxyUrl)
    }
}

impl Setting for ProxyUrl {
    fn toml(&self) -> Option<String> {
        toml_string(&crate::execution::redact::url_for_display(&self.0))
    }
    fn words(&self, flag: &str) -> Vec<String> {
        let shown = crate::execution::redact::url_for_display(&self.0);
        let marker = format!("://{}@", crate::execution::redact::REDACTED);
        match shown.split_once(&marker) {
            // In double quotes, so that the shell expands the variable: the option and its
            // value as one word written here, when nothing else in it is special there.
            Some((scheme, rest)) if !rest.contains(['"', '$', '`', '\\', '!']) => vec![format!(
                "{flag} \"{scheme}://${{{PROXY_USERINFO_VARIABLE}}}@{rest}\""
            )],
            _ => flag_and(flag, &shown),
        }
    }
}

/// A profile's own list of known failures: counted, not shown; on a command line it cannot
/// go, so the Re-run line says where it came from.
impl Setting for Vec<KnownFailure> {
    fn toml(&self) -> Option<String> {
        Some(format!("[] # {} entries, not shown", self.len()))
    }
    fn words(&self, _flag: &str) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        vec![
            "--known-failures".into(),
            shell_word("<the profile's list>"),
        ]
    }
}

/// A value a profile writes as text and a flag parses (`"hash:1/3"`).
pub fn from_text<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: std::fmt::Display,
{
    String::deserialize(deserializer)?
        .parse()
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// A duration a profile writes as people do (`"50ms"`).
pub fn duration_from_text<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    let text = String::deserialize(deserializer)?;
    humantime::parse_duration(&text)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_people_write_them() {
        let seconds = |text: &str| text.parse::<Seconds>().map(|s| s.0);
        assert_eq!(seconds("20"), Ok(20));
        assert_eq!(seconds("20s"), Ok(20));
        assert_eq!(seconds("2m"), Ok(120));
        assert_eq!(seconds("1h 30m"), Ok(5400));
        assert!(seconds("1500ms").is_err());
        assert!(seconds("soon").is_err());
        assert_eq!(Seconds(1200).to_string(), "20m");
        let from_profile = |text: &str| toml::from_str::<toml::Table>(text).unwrap()["t"].clone();
        assert_eq!(
            Seconds::deserialize(from_profile("t = \"30m\"")).unwrap(),
            Seconds(1800)
        );
        assert_eq!(
            Seconds::deserialize(from_profile("t = 90")).unwrap(),
            Seconds(90)
        );
    }

    #[test]
    fn headers_are_name_colon_value_and_never_the_suites_own() {
        let header = |text: &str| text.parse::<Header>();
        assert_eq!(
            header("X-Tenant: acme"),
            Ok(Header {
                name: "X-Tenant".into(),
                value: "acme".into()
            })
        );
        assert!(header("no colon").is_err());
        assert!(header("Authorization: Bearer x").is_err());
        assert!(header("Bad Name: x").is_err());
        assert!(header("X-A: a\r\nX-B: b").is_err());
    }

    #[test]
    fn values_are_written_back_as_a_profile_and_a_shell_read_them() {
        assert_eq!(shell_word("list-pets/limit"), "list-pets/limit");
        assert_eq!(shell_word("X-Tenant: a b"), "'X-Tenant: a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
        let headers = vec![
            "X-Gateway-Token: gw-secret-value-123"
                .parse::<Header>()
                .unwrap(),
            "X-Tenant: acme".parse::<Header>().unwrap(),
        ];
        let printed = headers.toml().unwrap();
        assert!(!printed.contains("gw-secret-value-123"), "{printed}");
        assert!(printed.contains("\"X-Tenant: acme\""), "{printed}");
        let words = headers.words("--header").join(" ");
        assert!(
            words.contains(r#"--header "X-Gateway-Token: ${PETSTORE_HEADER_X_GATEWAY_TOKEN}""#),
            "{words}"
        );
        assert!(!words.contains("gw-secret-value-123"), "{words}");
        assert_eq!(
            vec![1i64, 2].words("--category-ids"),
            ["--category-ids", "1,2"]
        );
        assert_eq!(Some(38.0f64).toml().as_deref(), Some("38.0"));
        assert!(false.words("--insecure").is_empty());
        assert_eq!(None::<u64>.toml(), None);
    }

    #[test]
    fn a_proxys_userinfo_is_neither_printed_nor_on_a_command_line() {
        let proxy: ProxyUrl = "http://ops:pa%24s-w0rd-4f9a2c@proxy.example:3128"
            .parse()
            .unwrap();
        let printed = proxy.toml().unwrap();
        assert_eq!(printed, "\"http://[REDACTED]@proxy.example:3128\"");
        let words = proxy.words("--proxy").join(" ");
        assert_eq!(
            words,
            "--proxy \"http://${PETSTORE_PROXY_USERINFO}@proxy.example:3128\""
        );
        assert_eq!(
            proxy.secrets(),
            [
                "ops:pa%24s-w0rd-4f9a2c",
                "pa%24s-w0rd-4f9a2c",
                "pa$s-w0rd-4f9a2c"
            ]
        );
        let plain: ProxyUrl = "http://proxy.example:3128".parse().unwrap();
        assert_eq!(
            plain.words("--proxy"),
            ["--proxy", "http://proxy.example:3128"]
        );
        assert!(plain.secrets().is_empty());
    }
}
