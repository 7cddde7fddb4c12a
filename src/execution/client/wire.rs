//! One request on one lane: built, recorded with the key redacted, its answer read capped.

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use super::Client;
use super::transport::{describe_error, elapsed_ms, persists, read_capped};
use crate::execution::lanes::Lane;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{BODY_KEPT, Exchange, RecordedRequest, RecordedResponse};

impl Client {
    /// One request on `http` (a lane's client). `None` when, after `stall_after` without
    /// response headers, the request turns out to sit on a connection opened for it (`fresh`):
    /// one the server has not taken (the caller cuts the level and sends it again).
    #[allow(
        clippy::too_many_lines,
        reason = "split once the probes of issue 28 that change it are merged"
    )]
    pub(super) async fn send_once(
        &self,
        lane: &Lane,
        spec: &RequestSpec,
        stall_after: Option<Duration>,
        answers_before: u64,
    ) -> Option<Exchange> {
        let connects = lane.connects();
        let started = Instant::now();
        let mut url = match reqwest::Url::parse(&format!("{}{}", self.base, spec.path)) {
            Ok(url) => url,
            Err(e) => {
                return Some(self.failed_exchange(
                    spec,
                    String::new(),
                    format!("bad URL: {e}"),
                    started,
                ));
            }
        };
        if let Some(raw) = &spec.raw_query {
            url.set_query(Some(raw));
        } else if !spec.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &spec.query {
                pairs.append_pair(name, value);
            }
        }
        let method =
            reqwest::Method::from_bytes(spec.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut request = lane.http.request(method, url.clone());
        let mut headers = Vec::new();
        if let Some(value) = spec.credential.header_value(&self.key) {
            headers.push(("Authorization".to_string(), value));
        }
        let recorded_authorization = spec.credential.recorded_value();
        let body: Option<bytes::Bytes> = match &spec.body {
            Body::None => None,
            Body::Json(value) => {
                headers.push(("Content-Type".into(), "application/json".into()));
                Some(serde_json::to_vec(value).unwrap_or_default().into())
            }
            Body::Raw {
                content_type,
                bytes,
            } => {
                if let Some(content_type) = content_type {
                    headers.push(("Content-Type".into(), content_type.clone()));
                }
                Some(bytes.clone())
            }
        };
        headers.push(("Accept".into(), "application/json".into()));
        headers.extend(self.settings.extra_headers.iter().cloned());
        for (name, value) in &headers {
            request = request.header(name, value);
        }
        let (recorded_body, body_length) = match &body {
            Some(bytes) => {
                let (text, length) = self.recorded_body(bytes);
                (Some(text), length)
            }
            None => (None, None),
        };
        if let Some(body) = body {
            request = request.body(body); // shared with the spec, not copied: a body may be 1 MiB
        }
        let recorded = RecordedRequest {
            method: spec.method.to_string(),
            url: self.redactor.redact(url.as_str()),
            headers: headers
                .iter()
                .map(|(n, v)| match (n.as_str(), &recorded_authorization) {
                    ("Authorization", Some(recorded)) => (n.clone(), recorded.clone()),
                    _ => (n.clone(), self.redactor.redact(v)),
                })
                .collect(),
            body: recorded_body,
            body_length,
        };
        let pending = request.send();
        tokio::pin!(pending);
        let sent = match stall_after {
            Some(after) => tokio::select! {
                sent = &mut pending => sent,
                _ = tokio::time::sleep(after) => {
                    // Fresh, and others answered meanwhile: the server did not take it.
                    if lane.connects() != connects
                        && self.answers.load(Relaxed) > answers_before
                    {
                        lane.disconnected();
                        return None;
                    }
                    pending.await
                }
            },
            None => pending.await,
        };
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                lane.disconnected();
                return Some(Exchange {
                    request: recorded,
                    response: None,
                    transport_error: Some(self.redactor.redact(&describe_error(&e))),
                    elapsed_ms: elapsed_ms(started),
                    throttled: None,
                    not_sent: false,
                });
            }
        };
        self.slowest_ms.fetch_max(elapsed_ms(started), Relaxed);
        lane.served(persists(
            response.version(),
            response.status().as_u16(),
            spec.method == "HEAD",
            response.headers(),
        ));
        let status = response.status().as_u16();
        let version = format!("{:?}", response.version());
        let response_headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                // As received: rules judge what came back, whatever the key is; every
                // writer redacts (the reports as a whole, the request log, the terminal).
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let (bytes, body_truncated, body_error) =
            read_capped(response, self.settings.body_cap).await;
        if body_truncated || body_error.is_some() {
            lane.disconnected(); // a body not read to its end takes its connection with it
        }
        // A cut may leave the start of the key at the end.
        let cut = body_truncated || body_error.is_some();
        let unparsed =
            body_truncated.then(|| format!("body exceeds {} bytes", self.settings.body_cap));
        let body = self
            .bodies
            .record(&bytes, cut, unparsed, &self.redactor)
            .await;
        drop(bytes);
        Some(Exchange {
            request: recorded,
            response: Some(RecordedResponse {
                version,
                status,
                headers: response_headers,
                body: body.text,
                body_truncated,
                body_omitted: body.omitted,
                json: body.json,
                json_error: body.json_error,
                duplicate_names: body.duplicate_names,
            }),
            transport_error: body_error.map(|e| self.redactor.redact(&e)),
            elapsed_ms: elapsed_ms(started),
            throttled: None,
            not_sent: false,
        })
    }

    /// An exchange for a request that was not sent, and why.
    /// A request body as an exchange records it: redacted, its first [`BODY_KEPT`] bytes and
    /// the whole length when it is longer (what evidence and reports keep anyway; a 1 MiB
    /// rung of a size ladder is not copied and redacted whole while it is in flight).
    fn recorded_body(&self, bytes: &[u8]) -> (String, Option<usize>) {
        if bytes.len() <= BODY_KEPT {
            return (self.redactor.redact(&String::from_utf8_lossy(bytes)), None);
        }
        let mut end = BODY_KEPT;
        // Not inside a character (it would show as U+FFFD).
        while end > 0 && bytes[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        // Cut: the start of the key may be left at the end.
        let text = self
            .redactor
            .redact_cut(&String::from_utf8_lossy(&bytes[..end]));
        (text, Some(bytes.len()))
    }

    /// The whole body of `spec`, redacted, for the writers that keep every byte sent (the
    /// request log, the HAR) where the exchange kept its first [`BODY_KEPT`] bytes.
    pub fn whole_request_body(&self, spec: &RequestSpec) -> Option<String> {
        let bytes = match &spec.body {
            Body::None => return None,
            Body::Json(value) => {
                std::borrow::Cow::Owned(serde_json::to_vec(value).unwrap_or_default())
            }
            Body::Raw { bytes, .. } => std::borrow::Cow::Borrowed(&bytes[..]),
        };
        Some(self.redactor.redact(&String::from_utf8_lossy(&bytes)))
    }

    pub fn not_sent(&self, spec: &RequestSpec, reason: &str) -> Exchange {
        let url = format!("{}{}", self.base, spec.path);
        Exchange {
            not_sent: true,
            ..self.failed_exchange(
                spec,
                self.redactor.redact(&url),
                reason.to_string(),
                Instant::now(),
            )
        }
    }

    pub(super) fn failed_exchange(
        &self,
        spec: &RequestSpec,
        url: String,
        error: String,
        started: Instant,
    ) -> Exchange {
        Exchange {
            request: RecordedRequest {
                method: spec.method.into(),
                url,
                headers: Vec::new(),
                body: None,
                body_length: None,
            },
            response: None,
            transport_error: Some(error),
            elapsed_ms: elapsed_ms(started),
            throttled: None,
            not_sent: false,
        }
    }
}
