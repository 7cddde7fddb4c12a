//! A body read as its `Content-Encoding` says: gzip (and `x-gzip`, every member of it, RFC
//! 1952 section 2.2), deflate, br and zstd are decoded, last applied first, up to the body cap,
//! so a small answer that inflates without end holds no more memory than a large one. The
//! harness sends no `Accept-Encoding` of its own, which accepts any coding (RFC 9110 section
//! 12.5.3): a body in a coding it does not read is not read (no evidence either way), and one
//! that does not decode in the coding it claims stays as it came (the oracles judge what the
//! target sent).

use std::io::Read;

/// A body as the harness reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Decoded {
    /// The bytes (decoded where they could be), at most the cap.
    pub bytes: Vec<u8>,
    /// The decoded body passed the cap (kept: its first `cap` bytes).
    pub over: bool,
    /// Why the body is not read: it is in a coding the harness does not decode.
    pub unread: Option<String>,
}

/// The largest zstd window decoded: 8 MiB, what RFC 8878 section 3 holds an HTTP `zstd`
/// coding to (a frame may not make the decoder hold more).
const ZSTD_WINDOW: u64 = 8 << 20;

/// `bytes` decoded as `content_encoding` (the codings in the order applied, comma-separated,
/// every field's values joined) says. Bytes that are not in the coding they claim stay as they
/// came: a body that does not decode is judged as sent (not JSON), not taken for a transport's
/// cut.
pub(super) fn decoded(bytes: Vec<u8>, content_encoding: Option<&str>, cap: usize) -> Decoded {
    let codings: Vec<String> = content_encoding
        .unwrap_or("")
        .split(',')
        .map(|coding| coding.trim().to_ascii_lowercase())
        .filter(|coding| !coding.is_empty() && coding != "identity")
        .collect();
    let as_sent = |bytes, unread| Decoded {
        bytes,
        over: false,
        unread,
    };
    if let Some(unknown) = codings.iter().find(|coding| !known(coding)) {
        let reason = format!(
            "it is in the content coding {unknown:?} (Content-Encoding: {}), which the harness does not decode",
            content_encoding.unwrap_or("").trim()
        );
        return as_sent(bytes, Some(reason));
    }
    let mut body = bytes;
    // The last coding applied is the first undone (RFC 9110 section 8.4).
    for coding in codings.iter().rev() {
        match decode(&body, coding, cap) {
            Ok(out) if out.len() > cap => {
                let mut out = out;
                out.truncate(cap);
                return Decoded {
                    bytes: out,
                    over: true,
                    unread: None,
                };
            }
            Ok(out) => body = out,
            // Not in the coding it claims (the whole of it, not a layer of it).
            Err(_) if codings.len() == 1 => return as_sent(body, None),
            Err(_) => {
                let reason = format!(
                    "it does not decode as its Content-Encoding ({}) says",
                    content_encoding.unwrap_or("").trim()
                );
                return as_sent(body, Some(reason));
            }
        }
    }
    as_sent(body, None)
}

fn known(coding: &str) -> bool {
    matches!(coding, "gzip" | "x-gzip" | "deflate" | "br" | "zstd")
}

/// One layer undone: at most `cap + 1` bytes (one byte past the cap says there was more).
fn decode(bytes: &[u8], coding: &str, cap: usize) -> std::io::Result<Vec<u8>> {
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(4).min(cap).min(1 << 20));
    match coding {
        "gzip" | "x-gzip" => {
            flate2::read::MultiGzDecoder::new(bytes)
                .take(limit)
                .read_to_end(&mut out)?;
        }
        "deflate" => {
            // RFC 9110 section 8.4.1.2: zlib; some servers send the raw deflate stream under
            // the name, which clients have long read too.
            let zlib = flate2::read::ZlibDecoder::new(bytes)
                .take(limit)
                .read_to_end(&mut out);
            if zlib.is_err() {
                out.clear();
                flate2::read::DeflateDecoder::new(bytes)
                    .take(limit)
                    .read_to_end(&mut out)?;
            }
        }
        "br" => {
            brotli_decompressor::Decompressor::new(bytes, 4096)
                .take(limit)
                .read_to_end(&mut out)?;
        }
        _ => zstd_frames(bytes, limit, &mut out)?,
    }
    Ok(out)
}

/// Every frame of a zstd body (RFC 8878 section 3.1: one or more, skippable ones skipped).
fn zstd_frames(mut rest: &[u8], limit: u64, out: &mut Vec<u8>) -> std::io::Result<()> {
    let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    if rest.is_empty() {
        return Err(invalid("no zstd frame"));
    }
    while !rest.is_empty() && (out.len() as u64) < limit {
        let magic = rest
            .get(..4)
            .map(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]]));
        if magic.is_some_and(|m| m & 0xFFFF_FFF0 == 0x184D_2A50) {
            let size = rest
                .get(4..8)
                .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
                .ok_or_else(|| invalid("a skippable frame cut short"))?;
            rest = rest
                .get(8 + size..)
                .ok_or_else(|| invalid("a skippable frame cut short"))?;
            continue;
        }
        let mut frame =
            ruzstd::decoding::StreamingDecoder::new_with_max_window_size(&mut rest, ZSTD_WINDOW)
                .map_err(std::io::Error::other)?;
        let room = limit - out.len() as u64;
        (&mut frame).take(room).read_to_end(out)?;
    }
    Ok(())
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

    fn read(bytes: Vec<u8>, coding: Option<&str>, cap: usize) -> (Vec<u8>, bool) {
        let decoded = decoded(bytes, coding, cap);
        assert_eq!(decoded.unread, None);
        (decoded.bytes, decoded.over)
    }

    const BODY: &[u8] = br#"[{"id":1,"name":"a","categoryId":2}]"#;

    #[test]
    fn gzip_is_inflated_and_a_body_not_in_its_coding_stays_as_it_came() {
        assert_eq!(
            read(gzip(BODY), Some("gzip"), 1 << 20),
            (BODY.to_vec(), false)
        );
        assert_eq!(read(gzip(BODY), Some(" X-GZIP "), 1 << 20).0, BODY);
        assert_eq!(read(BODY.to_vec(), None, 9), (BODY.to_vec(), false));
        assert_eq!(read(BODY.to_vec(), Some("identity"), 9).0, BODY);
        // Not gzip at all: judged as it came.
        assert_eq!(
            read(BODY.to_vec(), Some("gzip"), 1 << 20),
            (BODY.to_vec(), false)
        );
    }

    #[test]
    fn every_member_of_a_gzip_body_is_read() {
        let (first, second) = BODY.split_at(10);
        let mut two = gzip(first);
        two.extend(gzip(second));
        assert_eq!(read(two, Some("gzip"), 1 << 20).0, BODY);
    }

    #[test]
    fn deflate_as_zlib_or_raw() {
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        zlib.write_all(BODY).unwrap();
        assert_eq!(
            read(zlib.finish().unwrap(), Some("deflate"), 1 << 20).0,
            BODY
        );
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        raw.write_all(BODY).unwrap();
        assert_eq!(
            read(raw.finish().unwrap(), Some("deflate"), 1 << 20).0,
            BODY
        );
    }

    #[test]
    fn brotli_is_decoded() {
        // Six pets as `brotli -q 11` writes them: Huffman-coded, with back references.
        let compressed = [
            0x1b, 0x68, 0x01, 0x38, 0xac, 0x0a, 0xec, 0x86, 0xcf, 0xcf, 0x36, 0xd1, 0x0b, 0xf7,
            0x5e, 0x7f, 0x46, 0xa4, 0x66, 0xc4, 0xaa, 0x24, 0xdb, 0xda, 0x83, 0x09, 0x1c, 0x92,
            0x07, 0xb6, 0x5b, 0x69, 0x70, 0xc9, 0xd2, 0x55, 0x56, 0x3a, 0x7d, 0x2d, 0x02, 0x92,
            0x44, 0x17, 0x54, 0x39, 0xe7, 0x4a, 0x19, 0x06, 0xbc, 0xe4, 0x22, 0x07, 0xa0, 0xc3,
            0x3b, 0xc4, 0x0a, 0x17, 0x2f, 0x1c, 0x0d, 0xc4, 0x7f, 0xf0, 0x27, 0xe0, 0x1e, 0x8c,
            0x0c, 0x54, 0xa5, 0xb4, 0x67, 0xc6, 0x0b, 0xeb, 0x95, 0xf3, 0xc6, 0x0b, 0x4f,
        ];
        let pets: Vec<String> = (1..=6)
            .map(|n| {
                format!(r#"{{"id":{n},"name":"pet {n}","categoryId":2,"status":"available"}}"#)
            })
            .collect();
        let want = format!("[{}]", pets.join(","));
        assert_eq!(
            read(compressed.to_vec(), Some("br"), 1 << 20).0,
            want.as_bytes()
        );
        // Cut short: not brotli, judged as it came.
        assert_eq!(
            read(compressed[..40].to_vec(), Some("br"), 1 << 20).0,
            &compressed[..40]
        );
    }

    #[test]
    fn zstd_frames_are_decoded_and_skippable_ones_skipped() {
        let frame = |bytes: &[u8]| {
            ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
        };
        let (first, second) = BODY.split_at(7);
        let mut body = frame(first);
        body.extend([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        body.extend(frame(second));
        assert_eq!(read(body, Some("zstd"), 1 << 20).0, BODY);
    }

    #[test]
    fn codings_are_undone_last_first() {
        let zstd = ruzstd::encoding::compress_to_vec(
            &gzip(BODY)[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        assert_eq!(read(zstd, Some("gzip, zstd"), 1 << 20).0, BODY);
        assert_eq!(read(gzip(BODY), Some("identity, gzip"), 1 << 20).0, BODY);
    }

    #[test]
    fn a_coding_the_harness_does_not_decode_leaves_the_body_unread() {
        let decoded = decoded(BODY.to_vec(), Some("compress"), 1 << 20);
        assert_eq!(decoded.bytes, BODY);
        assert!(decoded.unread.unwrap().contains("\"compress\""));
        // A layer that does not decode: not the body as sent either.
        let decoded = super::decoded(gzip(BODY), Some("gzip, br"), 1 << 20);
        assert!(decoded.unread.is_some());
    }

    #[test]
    fn an_answer_that_inflates_without_end_stops_at_the_cap() {
        // 64 MiB of zeros gzip to about 64 KiB.
        let bomb = gzip(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 1 << 20);
        let (body, over) = read(bomb, Some("gzip"), 1 << 20);
        assert_eq!(body.len(), 1 << 20);
        assert!(over);
        let zeros = ruzstd::encoding::compress_to_vec(
            &vec![0u8; 16 << 20][..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let (body, over) = read(zeros, Some("zstd"), 1 << 20);
        assert_eq!(body.len(), 1 << 20);
        assert!(over);
    }
}
