//! The state of an exchange as one of four, read from what was recorded (the response, the
//! transport error and its kind): the recorded form keeps its fields, which reports write.

use super::{Exchange, RecordedResponse, TransportError, TransportKind};

/// What came of a request, one of four: what every reader of an exchange decides on.
#[derive(Debug, Clone, Copy)]
pub enum ExchangeState<'a> {
    /// The run held it back ([`TransportKind::NotSent`]): it never left, which says nothing
    /// about the target, so it is never counted against it.
    NotSent(&'a TransportError),
    /// It left and no answer came (a connect that failed, a timeout, a reset before any byte).
    Unanswered(Option<&'a TransportError>),
    /// The head came and the transport cut the body short (a reset, an early end, a timeout
    /// mid-body): what the whole body says is unknown, so nothing in it is evidence.
    Cut(&'a RecordedResponse, &'a TransportError),
    /// A whole answer.
    Answered(&'a RecordedResponse),
}

impl Exchange {
    /// What came of the request.
    pub fn state(&self) -> ExchangeState<'_> {
        match (&self.response, &self.transport_error) {
            (Some(response), Some(error)) => ExchangeState::Cut(response, error),
            (Some(response), None) => ExchangeState::Answered(response),
            (None, Some(error)) if error.kind == TransportKind::NotSent => {
                ExchangeState::NotSent(error)
            }
            (None, error) => ExchangeState::Unanswered(error.as_ref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ExchangeState, TransportError, TransportKind};
    use crate::outcome::{Exchange, RecordedRequest, RecordedResponse};

    fn exchange(response: bool, error: Option<TransportKind>) -> Exchange {
        let response: Option<RecordedResponse> = response.then(|| {
            serde_json::from_value(serde_json::json!({
                "status": 200, "version": "HTTP/1.1", "headers": [], "body": "[]"
            }))
            .unwrap()
        });
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
            response,
            transport_error: error.map(|kind| TransportError::new(kind, "why")),
            elapsed_ms: 0,
            throttled: None,
            retries: None,
        }
    }

    #[test]
    fn each_recording_is_one_state() {
        let held = exchange(false, Some(TransportKind::NotSent));
        assert!(matches!(held.state(), ExchangeState::NotSent(_)) && !held.was_sent());
        let lost = exchange(false, Some(TransportKind::ConnectFailed));
        assert!(matches!(lost.state(), ExchangeState::Unanswered(Some(_))) && lost.was_sent());
        let cut = exchange(true, Some(TransportKind::RequestFailed));
        assert!(matches!(cut.state(), ExchangeState::Cut(..)) && cut.cut_by_transport());
        let answered = exchange(true, None);
        assert!(matches!(answered.state(), ExchangeState::Answered(r) if r.status == 200));
        assert!(!answered.cut_by_transport());
    }
}
