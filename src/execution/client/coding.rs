//! A body read as its `Content-Encoding` says: gzip (and `x-gzip`) and deflate are inflated,
//! up to the body cap, so a small answer that inflates without end holds no more memory than
//! a large one; an answer in a coding not asked for, or one that does not inflate, stays as it
//! came (the oracles judge what the target sent).

use std::io::Read;

/// The body as decoded, and whether the decoded body passed `cap` (kept: its first `cap`
/// bytes). Bytes that are not in the coding they claim stay as they came: a body that does
/// not inflate is judged as sent (not JSON), not taken for a transport's cut.
pub(super) fn decoded(
    bytes: Vec<u8>,
    content_encoding: Option<&str>,
    cap: usize,
) -> (Vec<u8>, bool) {
    let coding = content_encoding.map(|value| value.trim().to_ascii_lowercase());
    let inflated = {
        let reader: Box<dyn Read + '_> = match coding.as_deref() {
            Some("gzip" | "x-gzip") => Box::new(flate2::read::GzDecoder::new(&bytes[..])),
            Some("deflate") => Box::new(flate2::read::ZlibDecoder::new(&bytes[..])),
            _ => return (bytes, false),
        };
        let mut out = Vec::with_capacity(bytes.len().saturating_mul(4).min(cap).min(1 << 20));
        // One byte past the cap says whether there was more.
        let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
        reader.take(limit).read_to_end(&mut out).map(|_| out)
    };
    match inflated {
        Ok(mut out) => {
            let over = out.len() > cap;
            out.truncate(cap);
            (out, over)
        }
        Err(_) => (bytes, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn gzip_is_inflated_and_other_codings_stay_as_they_came() {
        let body = br#"[{"id":1,"name":"a","categoryId":2}]"#;
        assert_eq!(
            decoded(gzip(body), Some("gzip"), 1 << 20),
            (body.to_vec(), false)
        );
        assert_eq!(decoded(gzip(body), Some(" X-GZIP "), 1 << 20).0, body);
        assert_eq!(decoded(body.to_vec(), None, 9), (body.to_vec(), false));
        assert_eq!(decoded(body.to_vec(), Some("br"), 9).0, body);
        // Not gzip at all: judged as it came.
        assert_eq!(
            decoded(body.to_vec(), Some("gzip"), 1 << 20),
            (body.to_vec(), false)
        );
    }

    #[test]
    fn an_answer_that_inflates_without_end_stops_at_the_cap() {
        // 64 MiB of zeros gzip to about 64 KiB.
        let bomb = gzip(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 1 << 20);
        let (body, over) = decoded(bomb, Some("gzip"), 1 << 20);
        assert_eq!(body.len(), 1 << 20);
        assert!(over);
    }
}
