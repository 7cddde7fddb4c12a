//! A body that need not be UTF-8, written as text that says every byte (and read back).

/// `bytes` as text that says every byte: the runs of UTF-8 as they are (each passed through
/// `redact`, each backslash doubled), every other byte as `\xHH`. [`unescape_body`] reads
/// it back. A run of UTF-8 holds the key whole, if it holds it, so redaction sees it.
pub fn escape_body(bytes: &[u8], redact: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(&redact(chunk.valid()).replace('\\', "\\\\"));
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02X}"));
        }
    }
    out
}

/// The bytes an escaped body (see [`escape_body`]) says.
pub fn unescape_body(text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, after)) = rest.split_first() {
        match (first, after) {
            (b'\\', [b'\\', more @ ..]) => {
                bytes.push(b'\\');
                rest = more;
            }
            (b'\\', [b'x', high, low, more @ ..]) => {
                let hex = [*high, *low];
                let byte = std::str::from_utf8(&hex)
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                match byte {
                    Some(byte) => {
                        bytes.push(byte);
                        rest = more;
                    }
                    None => {
                        bytes.push(first);
                        rest = after;
                    }
                }
            }
            _ => {
                bytes.push(first);
                rest = after;
            }
        }
    }
    bytes
}
