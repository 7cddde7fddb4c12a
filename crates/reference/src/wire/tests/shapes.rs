//! Each shape on a socket.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_form_says_what_the_store_says() {
    let reference = plain_server().await;
    let plain = scenario_at(reference.addr, false).await;
    let plain: Vec<_> = finals(&plain).into_iter().map(said).collect();
    assert_eq!(plain.len(), 6);
    assert_eq!(plain[0].0, 201);
    let drawn = (0..12).map(WireShape::draw);
    for shape in WireShape::all_forms(27).into_iter().chain(drawn) {
        let answers = scenario_answers(&shape).await;
        let shaped: Vec<_> = finals(&answers).into_iter().map(said).collect();
        assert_eq!(shaped, plain, "{}", shape.describe());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_names_are_cased_as_claimed() {
    let names = |messages: &[Message]| -> Vec<String> {
        messages
            .iter()
            .flat_map(|m| m.fields.iter().map(|(n, _)| n.clone()))
            .collect()
    };
    let title = |name: &str| {
        name.split('-').all(|word| {
            word.starts_with(|c: char| c.is_ascii_uppercase())
                && !word[1..].contains(|c: char| c.is_ascii_uppercase())
        })
    };
    for (case, check) in [
        (
            HeaderCase::Lower,
            &(|n: &str| n == n.to_ascii_lowercase()) as &dyn Fn(&str) -> bool,
        ),
        (HeaderCase::Title, &title),
        (HeaderCase::Upper, &|n: &str| n == n.to_ascii_uppercase()),
    ] {
        let shape = WireShape {
            header_case: case,
            ..WireShape::default()
        };
        for name in names(&scenario_answers(&shape).await) {
            assert!(check(&name), "{case:?}: {name}");
        }
    }
    let shape = WireShape {
        header_case: HeaderCase::Mixed { seed: 27 },
        ..WireShape::default()
    };
    let mixed = names(&scenario_answers(&shape).await);
    let lower = mixed
        .iter()
        .filter(|n| **n == n.to_ascii_lowercase())
        .count();
    let upper = mixed
        .iter()
        .filter(|n| **n == n.to_ascii_uppercase())
        .count();
    assert!(
        lower > 0 && lower < mixed.len() && upper < mixed.len(),
        "{mixed:?}"
    );
    // One name, one spelling: the case is the name's, not the answer's.
    let content_type: std::collections::BTreeSet<_> = mixed
        .iter()
        .filter(|n| n.eq_ignore_ascii_case("content-type"))
        .collect();
    assert_eq!(content_type.len(), 1, "{mixed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_fields_are_ordered_as_claimed() {
    let orders = |messages: Vec<Message>| -> Vec<Vec<String>> {
        messages
            .iter()
            .map(|m| {
                m.fields
                    .iter()
                    .map(|(n, _)| n.to_ascii_lowercase())
                    .collect()
            })
            .collect()
    };
    let produced = orders(scenario_answers(&WireShape::default()).await);
    let shape = WireShape {
        header_order: HeaderOrder::Reversed,
        ..WireShape::default()
    };
    let reversed = orders(scenario_answers(&shape).await);
    for (produced, reversed) in produced.iter().zip(&reversed) {
        let mut expected = produced.clone();
        expected.reverse();
        assert_eq!(*reversed, expected);
    }
    let mut moved = false;
    for seed in 0..4 {
        let shape = WireShape {
            header_order: HeaderOrder::Shuffled { seed },
            ..WireShape::default()
        };
        let shuffled = orders(scenario_answers(&shape).await);
        for (produced, shuffled) in produced.iter().zip(&shuffled) {
            let (mut a, mut b) = (produced.clone(), shuffled.clone());
            moved |= a != b;
            a.sort();
            b.sort();
            assert_eq!(a, b, "a shuffle keeps every field");
        }
    }
    assert!(moved, "some shuffle moved a field");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_spacing_and_reason_phrases_are_as_claimed() {
    let shape = WireShape {
        spacing: FieldSpacing::None,
        reason: Reason::Empty,
        ..WireShape::default()
    };
    for message in scenario_answers(&shape).await {
        assert!(
            message
                .lines
                .iter()
                .all(|l| !l.contains(": ") && !l.ends_with(' ')),
            "{:?}",
            message.lines
        );
        assert_eq!(message.status_line, format!("HTTP/1.1 {} ", message.status));
    }
    let shape = WireShape {
        spacing: FieldSpacing::Wide,
        reason: Reason::AlwaysOk,
        ..WireShape::default()
    };
    for message in scenario_answers(&shape).await {
        assert!(
            message
                .lines
                .iter()
                .all(|l| l.contains(": \t ") && l.ends_with(" \t")),
            "{:?}",
            message.lines
        );
        assert_eq!(
            message.status_line,
            format!("HTTP/1.1 {} OK", message.status)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_framing_is_as_claimed() {
    let framing = Framing::Chunked {
        size: 1,
        extensions: false,
        padded_hex: false,
        trailer: false,
    };
    let answers = scenario_answers(&WireShape {
        framing,
        ..WireShape::default()
    })
    .await;
    for (i, message) in finals(&answers).iter().enumerate() {
        assert_eq!(message.field("transfer-encoding"), Some("chunked"));
        assert_eq!(message.field("content-length"), None);
        if i == 2 {
            assert!(message.size_lines.is_empty(), "a HEAD answer has no chunks");
            continue;
        }
        let (last, data) = message.size_lines.split_last().expect("a last chunk");
        assert_eq!(last, "0");
        assert!(data.iter().all(|line| line == "1"), "{data:?}");
        assert_eq!(data.len(), message.body.len());
        assert!(message.trailers.is_empty());
    }
    let framing = Framing::Chunked {
        size: 16,
        extensions: true,
        padded_hex: true,
        trailer: true,
    };
    let answers = scenario_answers(&WireShape {
        framing,
        ..WireShape::default()
    })
    .await;
    let listing = finals(&answers)[5];
    assert!(
        listing
            .size_lines
            .iter()
            .all(|l| l.len() == 10 && l.ends_with(";ext=1")),
        "{:?}",
        listing.size_lines
    );
    assert_eq!(
        listing.size_lines.last().map(String::as_str),
        Some("0000;ext=1")
    );
    assert_eq!(listing.field("trailer"), Some("server-timing"));
    assert_eq!(
        listing.trailers,
        [("server-timing".to_string(), "total;dur=0".to_string())]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_delimited_bodies_end_at_the_close() {
    for persistence in [Persistence::KeepAlive, Persistence::Close] {
        let shape = WireShape {
            framing: Framing::CloseDelimited,
            persistence,
            ..WireShape::default()
        };
        let server = server(shape).await;
        // Not asked to close, two requests: the first answer's body ends at the close.
        let two = [
            request("GET", "/pets", None, false),
            request("GET", "/pets", None, false),
        ]
        .concat();
        let messages = parse(&raw(server.addr, &two).await, &[false]);
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].body, b"[]");
        assert_eq!(messages[0].field("content-length"), None);
        assert_eq!(messages[0].field("transfer-encoding"), None);
        let said_close = messages[0].field("connection") == Some("close");
        assert_eq!(said_close, persistence == Persistence::Close);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistence_is_as_claimed() {
    for persistence in [
        Persistence::KeepAlive,
        Persistence::KeepAliveHeader,
        Persistence::Close,
    ] {
        let server = server(WireShape {
            persistence,
            ..WireShape::default()
        })
        .await;
        let mut stream = TcpStream::connect(server.addr).await.expect("connects");
        stream
            .write_all(&request("GET", "/pets", None, false))
            .await
            .expect("writes");
        let mut bytes = vec![0u8; 4096];
        let mut read = 0;
        while parse_complete(&bytes[..read]).is_none() {
            let n = stream.read(&mut bytes[read..]).await.expect("reads");
            assert!(n > 0, "closed before the answer");
            read += n;
        }
        let message = parse_complete(&bytes[..read]).expect("an answer");
        let connection = message.field("connection").map(str::to_string);
        // A second request on the same connection: answered unless the first closed it.
        let _ = stream.write_all(&request("GET", "/pets", None, true)).await;
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut rest)).await;
        match persistence {
            Persistence::Close => {
                assert_eq!(connection.as_deref(), Some("close"));
                assert!(rest.is_empty(), "nothing after a close");
            }
            Persistence::KeepAliveHeader => {
                assert_eq!(connection.as_deref(), Some("keep-alive"));
                assert_eq!(parse(&rest, &[false]).len(), 1);
            }
            Persistence::KeepAlive => {
                assert_eq!(connection, None);
                assert_eq!(parse(&rest, &[false]).len(), 1);
            }
        }
    }
}

/// The first answer in `bytes`, once it is all there (Content-Length framing).
fn parse_complete(bytes: &[u8]) -> Option<Message> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let length: usize = head
        .split("content-length:")
        .nth(1)?
        .split("\r\n")
        .next()?
        .trim()
        .parse()
        .ok()?;
    (bytes.len() >= end + length).then(|| parse(&bytes[..end + length], &[false]).remove(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interim_answers_come_first() {
    let shape = WireShape {
        interim: vec![Interim::Continue],
        ..WireShape::default()
    };
    let answers = scenario_answers(&shape).await;
    let statuses: Vec<u16> = answers.iter().map(|m| m.status).collect();
    assert_eq!(
        statuses,
        [100, 201, 100, 200, 100, 200, 100, 404, 100, 400, 100, 200]
    );
    let shape = WireShape {
        interim: vec![Interim::Processing, Interim::EarlyHints],
        ..WireShape::default()
    };
    let answers = scenario_answers(&shape).await;
    assert_eq!(
        answers.iter().map(|m| m.status).take(3).collect::<Vec<_>>(),
        [102, 103, 201]
    );
    assert_eq!(answers[1].field("link"), Some("</v1/pets>; rel=preload"));
    // Not to HTTP/1.0, which has no 1xx (RFC 9110 section 15.2), nor chunks (RFC 9112 section 7).
    let framing = Framing::Chunked {
        size: 1,
        extensions: false,
        padded_hex: false,
        trailer: false,
    };
    let server = server(WireShape { framing, ..shape }).await;
    let old = format!("GET /v1/pets HTTP/1.0\r\nAuthorization: Bearer {KEY}\r\n\r\n");
    let messages = parse(&raw(server.addr, old.as_bytes()).await, &[false]);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].field("content-length"), Some("2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_request_bodies_and_http2_pass_through() {
    let shape = WireShape::draw(5);
    let name = "n".repeat(1 << 20);
    let big = format!(r#"{{"name":"{name}","categoryId":1}}"#);
    let plain = plain_server().await;
    let shaped = server(shape.clone()).await;
    let ask = request("POST", "/pets", Some(&big), true);
    let expected = parse(&raw(plain.addr, &ask).await, &[false]);
    let got = parse(&raw(shaped.addr, &ask).await, &[false]);
    assert_eq!(
        said(finals(&got)[0]),
        said(finals(&expected)[0]),
        "{}",
        shape.describe()
    );
    // HTTP/2 with prior knowledge: the preface passes, and the answers come unshaped.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("a client");
    let answer = client
        .get(format!("{}/pets", shaped.base_url))
        .bearer_auth(KEY)
        .send()
        .await
        .expect("an HTTP/2 answer");
    assert_eq!(answer.version(), reqwest::Version::HTTP_2);
    assert_eq!(answer.status(), 200);
}
