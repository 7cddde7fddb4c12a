//! `Link` header values as RFC 8288 section 3 reads them (several links, each a target and
//! parameters in any order, quoted strings that may hold commas and semicolons), and URI
//! paths compared as RFC 3986 section 6.2.2 normalises them: `/%7Estage/v1` is `/~stage/v1`.

/// One link of a `Link` value: its target (the URI-Reference between `<` and `>`) and its
/// parameters, names lowercased, quoted values unquoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link<'v> {
    pub target: &'v str,
    pub params: Vec<(String, String)>,
}

impl Link<'_> {
    /// The relation types of its first `rel` parameter (RFC 8288 section 3.3: a later one is
    /// ignored), compared without case.
    pub fn has_rel(&self, relation: &str) -> bool {
        self.params
            .iter()
            .find(|(name, _)| name == "rel")
            .is_some_and(|(_, rels)| {
                rels.split_ascii_whitespace()
                    .any(|rel| rel.eq_ignore_ascii_case(relation))
            })
    }
}

/// The links of one `Link` field value. A link that does not parse is skipped up to the next
/// comma outside quotes and brackets; the others are read.
pub fn parse(value: &str) -> Vec<Link<'_>> {
    let mut reader = Reader { text: value, at: 0 };
    let mut links = Vec::new();
    loop {
        reader.skip(|c| c == b',' || is_ows(c));
        if reader.at >= value.len() {
            return links;
        }
        match reader.link() {
            Some(link) => links.push(link),
            // A target left open where the next begins: that one is read.
            None if reader.peek() == Some(b'<') => {}
            None => reader.skip_link(),
        }
    }
}

/// The targets of the links in `value` whose `rel` includes `relation`.
pub fn targets<'v>(value: &'v str, relation: &str) -> Vec<&'v str> {
    parse(value)
        .into_iter()
        .filter(|link| link.has_rel(relation))
        .map(|link| link.target)
        .collect()
}

fn is_ows(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// RFC 9110 section 5.6.2's tchar.
fn is_tchar(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c)
}

struct Reader<'v> {
    text: &'v str,
    at: usize,
}

impl<'v> Reader<'v> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip(&mut self, what: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&what) {
            self.at += 1;
        }
    }

    fn take(&mut self, what: impl Fn(u8) -> bool) -> &'v str {
        let start = self.at;
        self.skip(what);
        &self.text[start..self.at]
    }

    /// `"<" URI-Reference ">" *( OWS ";" OWS link-param )`, up to the comma after it.
    fn link(&mut self) -> Option<Link<'v>> {
        if self.peek()? != b'<' {
            return None;
        }
        self.at += 1;
        // No URI-Reference holds `<`: one here begins the next link.
        let target = self.take(|c| c != b'>' && c != b'<');
        if self.peek()? != b'>' {
            return None;
        }
        self.at += 1;
        let mut params = Vec::new();
        loop {
            self.skip(is_ows);
            match self.peek() {
                None | Some(b',') => return Some(Link { target, params }),
                Some(b';') => self.at += 1,
                Some(_) => return None,
            }
            self.skip(is_ows);
            let name = self.take(is_tchar);
            if name.is_empty() {
                // `;` with nothing after it before the next link or the end: tolerated.
                if matches!(self.peek(), None | Some(b',')) {
                    continue;
                }
                return None;
            }
            self.skip(is_ows);
            let value = if self.peek() == Some(b'=') {
                self.at += 1;
                self.skip(is_ows);
                self.param_value()?
            } else {
                String::new()
            };
            params.push((name.to_ascii_lowercase(), value));
        }
    }

    /// A token or a quoted-string (its backslash escapes undone).
    fn param_value(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return Some(self.take(is_tchar).to_string());
        }
        self.at += 1;
        let mut value = String::new();
        let mut chars = self.text[self.at..].char_indices();
        while let Some((offset, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += offset + 1;
                    return Some(value);
                }
                '\\' => value.push(chars.next()?.1),
                c => value.push(c),
            }
        }
        None // unclosed
    }

    /// Past the rest of a link that does not parse: to the next comma outside a quoted string
    /// or a target.
    fn skip_link(&mut self) {
        let (mut quoted, mut bracketed, mut escaped) = (false, false, false);
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                _ if escaped => escaped = false,
                b'\\' if quoted => escaped = true,
                b'"' if !bracketed => quoted = !quoted,
                b'<' if !quoted => bracketed = true,
                b'>' if !quoted => bracketed = false,
                b',' if !quoted && !bracketed => return,
                _ => {}
            }
        }
    }
}

/// A path with its percent-encoding normalised (RFC 3986 section 6.2.2.2): an encoded
/// unreserved character decoded, every other triplet's hex digits in upper case.
pub fn normalised_path(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut at = 0;
    while at < bytes.len() {
        let triplet = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit));
        let Some(hex) = triplet else {
            let c = path[at..].chars().next().unwrap_or_default();
            out.push(c);
            at += c.len_utf8().max(1);
            continue;
        };
        let hex = std::str::from_utf8(hex).unwrap_or("00");
        let byte = u8::from_str_radix(hex, 16).unwrap_or(0);
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push_str(&hex.to_ascii_uppercase());
        }
        at += 3;
    }
    out
}

/// `url` normalised as RFC 3986 section 6.2.2 says: scheme and host in lower case and the
/// default port dropped (as the URL parser keeps them), percent-encoding normalised, and the
/// dot segments that decoding may have made removed.
pub fn normalised(url: &url::Url) -> url::Url {
    let mut copy = url.clone();
    copy.set_path(&normalised_path(url.path()));
    url::Url::parse(copy.as_str()).unwrap_or(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_read_as_rfc_8288_writes_them() {
        let value = r#"</v1/pets>; rel="successor-version", <https://x/docs>; rel=help"#;
        assert_eq!(targets(value, "successor-version"), vec!["/v1/pets"]);
        assert_eq!(
            targets("<a>; rel=\"help successor-version\"", "successor-version"),
            vec!["a"]
        );
        assert!(targets("garbage", "successor-version").is_empty());
        // A quoted title holding a comma, a semicolon and an escaped quote; rel after it.
        let value = r#"<https://docs.example/d>; title="old, \"new\"; gone"; rel=deprecation, </v1/pets>;title="pets, all";REL=Successor-Version"#;
        assert_eq!(targets(value, "successor-version"), vec!["/v1/pets"]);
        assert_eq!(
            targets(value, "deprecation"),
            vec!["https://docs.example/d"]
        );
        let links = parse(value);
        assert_eq!(
            links[0].params[0],
            ("title".into(), "old, \"new\"; gone".into())
        );
        // A target may hold a comma and a semicolon.
        assert_eq!(
            targets(
                "</v1/pets?a=1,2;b>; rel=successor-version",
                "successor-version"
            ),
            vec!["/v1/pets?a=1,2;b"]
        );
        // Only the first rel counts.
        assert!(targets("</x>; rel=help; rel=successor-version", "successor-version").is_empty());
        // A broken link is skipped, not the ones after it.
        let value = r#"<broken; rel="a, b" junk, </v1/pets>; rel="successor-version""#;
        assert_eq!(targets(value, "successor-version"), vec!["/v1/pets"]);
        let value = r#"nonsense "q, q", </v1/pets> ; rel = successor-version ;"#;
        assert_eq!(targets(value, "successor-version"), vec!["/v1/pets"]);
    }

    #[test]
    fn percent_encoding_is_normalised() {
        assert_eq!(normalised_path("/%7Estage/v1/pets"), "/~stage/v1/pets");
        assert_eq!(normalised_path("/%7estage/%76%31/pets"), "/~stage/v1/pets");
        assert_eq!(normalised_path("/a%2fb/%e2%82%ac/%"), "/a%2Fb/%E2%82%AC/%");
        assert_eq!(normalised_path("/é/%zz"), "/é/%zz");
        let url = url::Url::parse("HTTP://Host.Example:80/%7Estage/v1/a/%2E%2E/pets").unwrap();
        assert_eq!(
            normalised(&url).as_str(),
            "http://host.example/~stage/v1/pets"
        );
    }
}
