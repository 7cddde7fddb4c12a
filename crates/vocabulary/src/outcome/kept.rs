//! What an exchange keeps of a body once it is recorded: memory bounded by bytes, whatever
//! the target sends and however many exchanges the rules hold at once (a batch of cases, the
//! steps of a sequence, the evidence of every failure until the reports are written).

use super::{BODY_KEPT, Exchange, NoJson};

/// Characters of a response body's text an exchange keeps once it has passed the recorder
/// (the HAR has written its first [`BODY_KEPT`] bytes by then): what every report shows of it.
/// The rest is counted in `body_omitted`, so a report says as much as it did; 256 exchanges
/// of large answers held at once keep 1 MiB of text, not 16.
pub const BODY_SHOWN: usize = 4096;

impl Exchange {
    /// A copy to keep as evidence for the rest of the run: the parse of a body longer than
    /// [`BODY_KEPT`] is let go (many times the body's size; the reports show its text), and
    /// the text is cut to [`BODY_SHOWN`] characters, so what failures keep is bounded by bytes.
    pub fn evidence(&self) -> Exchange {
        let mut copy = self.clone();
        if let Some(body) = &mut copy.request.body
            && body.len() > BODY_KEPT
        {
            // The client may have cut it already (and redaction changed its length since).
            copy.request.body_length.get_or_insert(body.len());
            let mut end = BODY_KEPT;
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            body.truncate(end);
        }
        // Characters in the whole text (as many as its bytes, but for text past ASCII).
        let whole = copy.response.as_ref().map_or(0, |response| {
            response.body_omitted
                + match response.body_omitted {
                    0 => response.body.len(),
                    _ => response.body.chars().count(),
                }
        });
        copy.keep_shown();
        if let Some(response) = &mut copy.response
            && whole > BODY_KEPT
            && response.json.take().is_some()
        {
            response.json_error = Some(NoJson::NotRead(format!(
                "parsed body not kept with the evidence: the body passed {BODY_KEPT} bytes"
            )));
        }
        copy
    }

    /// Lets go of the response text past its first [`BODY_SHOWN`] characters, counting them
    /// in `body_omitted`: once the recorder has written it, no rule reads further (rules judge
    /// the parse, messages quote 160 characters, reports show [`BODY_SHOWN`]).
    pub fn keep_shown(&mut self) {
        let Some(response) = &mut self.response else {
            return;
        };
        let body = &mut response.body;
        if body.len() <= BODY_SHOWN {
            return; // at most BODY_SHOWN bytes: at most as many characters
        }
        let Some((end, _)) = body.char_indices().nth(BODY_SHOWN) else {
            return;
        };
        response.body_omitted += body[end..].chars().count();
        body.truncate(end);
        body.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::Value;

    use super::super::{RecordedRequest, RecordedResponse};
    use super::*;

    /// An exchange whose answer is `body`, its text kept as the client keeps it.
    fn answered(body: &str) -> Exchange {
        let mut end = body.len().min(BODY_KEPT);
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        Exchange {
            request: RecordedRequest {
                method: "GET".into(),
                url: "http://127.0.0.1:1/v1/pets".into(),
                headers: Vec::new(),
                body: None,
                body_length: None,
                key_channel: None,
                body_escaped: false,
            },
            response: Some(RecordedResponse {
                version: "HTTP/1.1".into(),
                status: 200,
                headers: Vec::new(),
                body: body[..end].to_string(),
                body_truncated: false,
                body_omitted: body[end..].chars().count(),
                json: crate::json::read(body.as_bytes())
                    .ok()
                    .map(|read| Arc::new(read.value)),
                json_error: None,
                duplicate_names: Vec::new(),
            }),
            transport_error: None,
            elapsed_ms: 0,
            throttled: None,
            retries: None,
        }
    }

    fn text(exchange: &Exchange) -> (&str, usize) {
        let response = exchange.response.as_ref().unwrap();
        (&response.body, response.body_omitted)
    }

    #[test]
    fn a_recorded_answer_keeps_what_reports_show_and_counts_the_rest() {
        // 2 bytes a character, so characters and bytes differ.
        let body = format!("[\"{}\"]", "é".repeat(BODY_KEPT));
        let mut exchange = answered(&body);
        let parse = Arc::clone(exchange.response.as_ref().unwrap().json.as_ref().unwrap());
        exchange.keep_shown();
        let (kept, omitted) = text(&exchange);
        assert_eq!(kept.chars().count(), BODY_SHOWN);
        assert!(body.starts_with(kept));
        assert_eq!(kept.chars().count() + omitted, body.chars().count());
        // The parse, of the whole body, stays for the rules.
        assert!(Arc::ptr_eq(
            exchange.response.unwrap().json.as_ref().unwrap(),
            &parse
        ));
        // A short body is kept whole.
        let mut short = answered("[1,2,3]");
        short.keep_shown();
        assert_eq!(text(&short), ("[1,2,3]", 0));
    }

    #[test]
    fn evidence_keeps_what_reports_show_and_the_parse_of_a_body_up_to_the_kept_bytes() {
        // Past what is shown, within what is kept: the parse stays with the evidence.
        let middle = format!("[{}0]", "0,".repeat(BODY_SHOWN));
        let evidence = answered(&middle).evidence();
        let (kept, omitted) = text(&evidence);
        assert_eq!(kept.len() + omitted, middle.len());
        assert_eq!(kept.len(), BODY_SHOWN);
        let parsed = evidence.json().and_then(Value::as_array).map(Vec::len);
        assert_eq!(parsed, Some(BODY_SHOWN + 1));
        // Past what is kept: the parse is let go, and says why.
        let large = format!("[{}0]", "0,".repeat(BODY_KEPT));
        let mut recorded = answered(&large);
        recorded.keep_shown(); // as the recorder leaves it
        for exchange in [answered(&large), recorded] {
            let evidence = exchange.evidence();
            let (kept, omitted) = text(&evidence);
            assert_eq!(
                (kept.len(), kept.len() + omitted),
                (BODY_SHOWN, large.len())
            );
            assert!(evidence.json().is_none());
            assert!(matches!(
                evidence.response.unwrap().json_error,
                Some(NoJson::NotRead(_))
            ));
        }
    }
}
