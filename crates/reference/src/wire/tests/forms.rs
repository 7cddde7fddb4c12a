//! The shapes' forms, their bytes and their writes, without a socket.

use super::super::compose::{Answer, Payload};
use super::*;

#[test]
fn fields_of_one_name_keep_their_order() {
    let answer = Answer {
        status: 200,
        fields: ["a", "link", "b", "link", "c", "link"]
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), format!("{i}").into_bytes()))
            .collect(),
        ..Answer::default()
    };
    for order in [
        HeaderOrder::Reversed,
        HeaderOrder::Shuffled { seed: 1 },
        HeaderOrder::Shuffled { seed: 2 },
    ] {
        let shape = WireShape {
            header_order: order,
            ..WireShape::default()
        };
        let messages = parse(&shape.answer_bytes(&answer), &[false]);
        let links: Vec<&str> = messages[0]
            .fields
            .iter()
            .filter(|(n, _)| n == "link")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(links, ["1", "3", "5"], "{order:?}");
    }
}

/// Records each write and flush it is given.
#[derive(Default)]
struct Recorder {
    writes: Vec<usize>,
    flushes: usize,
    bytes: Vec<u8>,
}

impl tokio::io::AsyncWrite for Recorder {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.writes.push(buf.len());
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.flushes += 1;
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn small_writes_are_written_and_flushed_apart() {
    let answer = Answer {
        status: 200,
        body: Payload::Bytes(b"[]".to_vec()),
        ..Answer::default()
    };
    let shape = WireShape {
        writes: Writes::Pieces { size: 3 },
        ..WireShape::default()
    };
    let bytes = shape.answer_bytes(&answer);
    let mut recorder = Recorder::default();
    front::write(&mut recorder, &bytes, shape.writes)
        .await
        .expect("writes");
    assert_eq!(recorder.bytes, bytes);
    assert_eq!(recorder.writes.len(), bytes.len().div_ceil(3));
    assert!(recorder.writes.iter().all(|n| *n <= 3));
    assert!(recorder.flushes >= recorder.writes.len());
    let mut whole = Recorder::default();
    front::write(&mut whole, &bytes, Writes::Whole)
        .await
        .expect("writes");
    assert_eq!(whole.writes, [bytes.len()]);
}

#[test]
fn draws_are_reproducible_and_reach_every_form() {
    assert_eq!(WireShape::draw(9), WireShape::draw(9));
    let draws: Vec<WireShape> = (0..2000).map(WireShape::draw).collect();
    for dimension in Dimension::ALL {
        for form in WireShape::forms(dimension, 0) {
            let same = |drawn: &WireShape| match dimension {
                Dimension::HeaderCase => {
                    std::mem::discriminant(&drawn.header_case)
                        == std::mem::discriminant(&form.header_case)
                }
                Dimension::HeaderOrder => {
                    std::mem::discriminant(&drawn.header_order)
                        == std::mem::discriminant(&form.header_order)
                }
                Dimension::Spacing => drawn.spacing == form.spacing,
                Dimension::Reason => drawn.reason == form.reason,
                Dimension::Framing => drawn.framing == form.framing,
                Dimension::Writes => drawn.writes == form.writes,
                Dimension::Interim => drawn.interim == form.interim,
                Dimension::Persistence => drawn.persistence == form.persistence,
            };
            assert!(
                draws.iter().any(same),
                "{dimension:?}: {} never drawn",
                form.describe()
            );
        }
    }
    // Each form of a dimension differs from the default there, but the default's own.
    for dimension in Dimension::ALL {
        let forms = WireShape::forms(dimension, 0);
        assert!(forms[0].is_plain());
        assert!(
            forms[1..].iter().all(|form| !form.is_plain()),
            "{dimension:?}"
        );
    }
}

#[test]
fn describe_names_every_choice() {
    let shape = WireShape {
        header_case: HeaderCase::Upper,
        header_order: HeaderOrder::Shuffled { seed: 4 },
        spacing: FieldSpacing::None,
        reason: Reason::Empty,
        framing: Framing::Chunked {
            size: 1,
            extensions: true,
            padded_hex: false,
            trailer: false,
        },
        writes: Writes::Pieces { size: 3 },
        interim: vec![Interim::Continue, Interim::EarlyHints],
        persistence: Persistence::KeepAliveHeader,
    };
    let line = shape.describe();
    for words in [
        "UPPER",
        "shuffled (seed 4)",
        "'name:value'",
        "empty reason",
        "1-byte chunks",
        ";ext=1",
        "3-byte writes",
        "100, 103",
        "Connection: keep-alive",
    ] {
        assert!(line.contains(words), "{line} lacks {words}");
    }
    assert!(!line.contains('\n'));
}

#[test]
fn each_wire_variant_is_one_form_and_the_others_none() {
    for info in crate::VARIANTS {
        let shape = WireShape::default().with_variants(&[info.variant].into());
        let wire = info.name.contains("header")
            || [
                "tight-fields",
                "wide-fields",
                "empty-reason",
                "ok-reason",
                "chunked",
                "one-byte-chunks",
                "chunk-extensions",
                "close-delimited",
                "byte-writes",
                "unasked-continue",
                "early-hints",
                "keep-alive-header",
                "connection-close",
            ]
            .contains(&info.name);
        assert_eq!(!shape.is_plain(), wire, "{}", info.name);
        if wire {
            let one_form = Dimension::ALL
                .iter()
                .any(|dimension| WireShape::forms(*dimension, 27).contains(&shape));
            assert!(one_form, "{}: {}", info.name, shape.describe());
        }
    }
}
