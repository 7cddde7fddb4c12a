//! The curl line of an exchange: the request as a shell command that sends it again, each
//! secret read from a variable, never written.

use super::{Exchange, RECORDED_FORMS, REDACTED, SHIFTED_FORM};

impl Exchange {
    /// A shell command that sends the same request; the key is read from `key_env`, wherever
    /// the request carried it (the Authorization header, or the channel `key_channel` names).
    pub fn curl(&self, key_env: &str) -> String {
        let channel = self.request.key_channel.as_deref();
        let key_header = channel.and_then(|channel| channel.strip_prefix("header "));
        let mut url = self.request.url.as_str();
        let mut url_query = None;
        if let Some(name) = channel.and_then(|channel| channel.strip_prefix("query ")) {
            // The key was appended last, `name=[REDACTED]`: curl encodes it from the variable.
            let pair = format!("{name}={REDACTED}");
            if let Some(rest) = url.strip_suffix(pair.as_str())
                && (rest.ends_with('?') || rest.ends_with('&'))
            {
                url = &rest[..rest.len() - 1];
                url_query = Some(format!(
                    "--url-query \"{}\"",
                    expanded(&pair.replace(['"', '$', '`', '\\'], ""), key_env)
                ));
            }
        }
        let mut parts = vec![
            "curl -sS -i".to_string(),
            format!("-X {}", self.request.method),
            shell_quote(url),
        ];
        parts.extend(url_query);
        for (name, value) in &self.request.headers {
            let header = format!("{name}: {value}");
            if header.contains("[REDACTED") {
                // The key is the Authorization header's and the channel's; any other secret
                // (`-H 'X-Gateway-Token: ...'`) is read from a variable of its own.
                let authorization = name.eq_ignore_ascii_case("authorization");
                let variable = if authorization
                    || key_header.is_some_and(|key_header| key_header.eq_ignore_ascii_case(name))
                {
                    key_env.to_string()
                } else {
                    header_variable(name)
                };
                let basic = value
                    .strip_prefix("Basic base64(")
                    .and_then(|rest| rest.strip_suffix(')'));
                if let (true, Some(user_and_password)) = (authorization, basic) {
                    // curl encodes `user:password` itself: the key's encoding is never written.
                    let user_and_password = user_and_password.replace(['"', '$', '`', '\\'], "");
                    parts.push(format!(
                        "-u \"{}\"",
                        expanded(&user_and_password, &variable)
                    ));
                    continue;
                }
                let header = header.replace(['"', '$', '`', '\\'], "");
                parts.push(format!("-H \"{}\"", expanded(&header, &variable)));
            } else {
                parts.push(format!("-H {}", shell_quote(&header)));
            }
        }
        match &self.request.body {
            // Bytes that are not UTF-8: printf writes them (octal escapes are POSIX), curl
            // sends what it reads.
            Some(body) if self.request.body_escaped => {
                parts.push("--data-binary @-".into());
                return format!(
                    "printf {} | {}",
                    shell_quote(&printf_format(body)),
                    parts.join(" ")
                );
            }
            Some(body) => parts.push(format!("--data-binary {}", shell_quote(body))),
            None => {}
        }
        parts.join(" ")
    }
}

/// `text` (already free of what a double-quoted shell word expands) with `[REDACTED]` and its
/// near misses' forms turned into expansions of `variable`.
fn expanded(text: &str, variable: &str) -> String {
    let mut text = text.to_string();
    for (form, operator) in RECORDED_FORMS {
        text = text.replace(form, &format!("${{{variable}{operator}}}"));
    }
    let (form, tr) = SHIFTED_FORM;
    text = text.replace(form, &format!("$(printf %s \"${{{variable}}}\" | {tr})"));
    text.replace(REDACTED, &format!("${{{variable}}}"))
}

/// An escaped body (`outcome::escape_body`) as a printf format that writes its bytes: `\\`
/// stays, `\xHH` becomes an octal escape, `%` is doubled.
fn printf_format(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("\\\\") {
            out.push_str("\\\\");
            rest = after;
        } else if let Some(byte) = rest
            .strip_prefix("\\x")
            .and_then(|after| after.get(..2))
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push_str(&format!("\\{byte:03o}"));
            rest = &rest[4..];
        } else {
            if c == '%' {
                out.push('%');
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The shell variable a curl or Re-run line reads a secret header's value from, one per header
/// (`X-Gateway-Token` -> `PETSTORE_HEADER_X_GATEWAY_TOKEN`): copied, a line never sends the
/// API key as another header's value.
pub fn header_variable(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("PETSTORE_HEADER_{name}")
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::super::RecordedRequest;
    use super::*;

    /// A request to /v1/pets as recorded, with no answer.
    fn sent(method: &str, headers: &[(&str, &str)], body: Option<&str>) -> Exchange {
        Exchange {
            request: RecordedRequest {
                method: method.into(),
                url: "http://127.0.0.1:1/v1/pets".into(),
                headers: headers
                    .iter()
                    .map(|(name, value)| (name.to_string(), value.to_string()))
                    .collect(),
                body: body.map(String::from),
                body_length: None,
                key_channel: None,
                body_escaped: false,
            },
            response: None,
            transport_error: None,
            elapsed_ms: 0,
            throttled: None,
            retries: None,
        }
    }

    #[test]
    fn curl_line_reads_the_key_from_the_environment() {
        let exchange = sent(
            "POST",
            &[
                ("Authorization", &format!("Bearer {REDACTED}")),
                ("Content-Type", "application/json"),
            ],
            Some(r#"{"name":"O'Brien"}"#),
        );
        let curl = exchange.curl("PETSTORE_API_KEY");
        assert!(
            curl.contains(r#"-H "Authorization: Bearer ${PETSTORE_API_KEY}""#),
            "{curl}"
        );
        assert!(curl.contains(r#"'{"name":"O'\''Brien"}'"#), "{curl}");
        assert!(!curl.contains(REDACTED));
    }

    #[test]
    fn a_body_that_is_not_utf_8_is_written_with_its_bytes_and_sent_by_printf() {
        let bytes = b"{\"name\": \"a\\\\b%\xFF\xC0\xAF\"}";
        let escaped = super::super::escape_body(bytes, str::to_string);
        assert_eq!(escaped, r#"{"name": "a\\\\b%\xFF\xC0\xAF"}"#);
        assert_eq!(super::super::unescape_body(&escaped), bytes);
        let mut exchange = sent(
            "POST",
            &[("Content-Type", "application/json")],
            Some(&escaped),
        );
        exchange.request.body_escaped = true;
        let curl = exchange.curl("K");
        assert!(
            curl.starts_with(r#"printf '{"name": "a\\\\b%%\377\300\257"}' | curl -sS -i"#),
            "{curl}"
        );
        assert!(curl.ends_with("--data-binary @-"), "{curl}");
        // What a shell's printf makes of the format is the bytes sent.
        let format = printf_format(&escaped);
        let output = std::process::Command::new("sh")
            .args(["-c", &format!("printf {}", shell_quote(&format))])
            .output()
            .unwrap();
        assert_eq!(output.stdout, bytes);
    }

    #[test]
    fn each_secret_header_is_read_from_a_variable_of_its_own() {
        let exchange = sent(
            "GET",
            &[
                ("Authorization", &format!("Bearer {REDACTED}")),
                ("X-Gateway-Token", REDACTED),
                ("x-api.key", &format!("k {REDACTED}")),
            ],
            None,
        );
        let curl = exchange.curl("STAGING_KEY");
        assert!(
            curl.contains(r#"-H "Authorization: Bearer ${STAGING_KEY}""#),
            "{curl}"
        );
        assert!(
            curl.contains(r#"-H "X-Gateway-Token: ${PETSTORE_HEADER_X_GATEWAY_TOKEN}""#),
            "{curl}"
        );
        assert!(
            curl.contains(r#"-H "x-api.key: k ${PETSTORE_HEADER_X_API_KEY}""#),
            "{curl}"
        );
        assert_eq!(curl.matches("STAGING_KEY").count(), 1, "{curl}");
    }

    #[test]
    fn the_key_in_another_channel_is_read_from_the_key_variable_and_basic_rebuilt_by_curl() {
        let mut exchange = sent(
            "GET",
            &[
                ("X-API-Key", REDACTED),
                ("X-Gateway-Token", REDACTED),
                ("Accept", "*/*"),
            ],
            None,
        );
        exchange.request.key_channel = Some("header X-API-Key".into());
        let curl = exchange.curl("K");
        assert!(curl.contains(r#"-H "X-API-Key: ${K}""#), "{curl}");
        assert!(
            curl.contains(r#"-H "X-Gateway-Token: ${PETSTORE_HEADER_X_GATEWAY_TOKEN}""#),
            "{curl}"
        );
        // Without the channel, an X-API-Key's secret is its own (-H), never the key.
        exchange.request.key_channel = None;
        assert!(exchange.curl("K").contains("${PETSTORE_HEADER_X_API_KEY}"));

        let mut exchange = sent("GET", &[("Accept", "application/json")], None);
        exchange.request.url = format!("http://127.0.0.1:1/v1/pets?limit=5&api_key={REDACTED}");
        exchange.request.key_channel = Some("query api_key".into());
        let curl = exchange.curl("K");
        assert!(
            curl.contains(r#"'http://127.0.0.1:1/v1/pets?limit=5' --url-query "api_key=${K}""#),
            "{curl}"
        );

        for (recorded, option) in [
            (format!("Basic base64({REDACTED}:)"), r#"-u "${K}:""#),
            (format!("Basic base64(:{REDACTED})"), r#"-u ":${K}""#),
        ] {
            let exchange = sent("GET", &[("Authorization", &recorded)], None);
            let curl = exchange.curl("K");
            assert!(
                curl.contains(option) && !curl.contains("Authorization"),
                "{curl}"
            );
        }
    }
}
