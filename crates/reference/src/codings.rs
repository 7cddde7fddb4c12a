//! The content codings a store may answer in unasked (RFC 9110 section 12.5.3): brotli and
//! zstd. The reference writes brotli as stored meta-blocks (RFC 7932 section 9.2: a valid
//! stream any decoder reads; the tree holds a decoder, not an encoder) and zstd with ruzstd's
//! encoder.

/// `bytes` as a brotli stream of uncompressed meta-blocks, 64 KiB each.
pub fn brotli_stored(bytes: &[u8]) -> Vec<u8> {
    let mut bits = Bits::default();
    bits.push(0, 1); // WBITS: 16
    for block in bytes.chunks(1 << 16) {
        bits.push(0, 1); // ISLAST
        bits.push(0, 2); // MNIBBLES: 4
        bits.push(block.len() as u32 - 1, 16); // MLEN - 1
        bits.push(1, 1); // ISUNCOMPRESSED
        bits.align();
        bits.out.extend_from_slice(block);
    }
    bits.push(1, 1); // ISLAST
    bits.push(1, 1); // ISLASTEMPTY
    bits.align();
    bits.out
}

/// `bytes` as one zstd frame.
pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

/// Bits written least significant first, as brotli packs them.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    /// Bits of the last byte of `out` already used (0: a new byte is begun).
    used: u32,
}

impl Bits {
    fn push(&mut self, value: u32, count: u32) {
        for bit in 0..count {
            if self.used == 0 {
                self.out.push(0);
            }
            if let Some(last) = self.out.last_mut() {
                *last |= (((value >> bit) & 1) as u8) << self.used;
            }
            self.used = (self.used + 1) % 8;
        }
    }

    fn align(&mut self) {
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_brotli_reads_back() {
        // `brotli` writes an empty input as 0x06 with WBITS 16 (ISLAST and ISLASTEMPTY set).
        assert_eq!(brotli_stored(b""), [0x06]);
        let long: Vec<u8> = (0..200_000u32).map(|n| (n % 251) as u8).collect();
        let stored = brotli_stored(&long);
        // Three bytes of header a meta-block, one for the last.
        assert_eq!(stored.len(), long.len() + 4 * 3 + 1);
        let mut read = Vec::new();
        std::io::Read::read_to_end(
            &mut brotli_decompressor::Decompressor::new(&stored[..], 4096),
            &mut read,
        )
        .unwrap();
        assert_eq!(read, long);
    }
}
