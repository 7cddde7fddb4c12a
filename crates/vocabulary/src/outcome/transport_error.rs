//! What went wrong on the way to the target and back, typed: the client acts on the kind
//! (a connect that failed may be sent again, a timeout is overload, a head too large is an
//! answer), reports show the words. Written as it always was (`could not connect: ...`,
//! `body cut short: timed out`), and read back from those words where a report is read.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The kind of a transport error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// The connect failed: the request never reached the target.
    ConnectFailed,
    /// The exchange outlasted `--timeout`.
    TimedOut,
    /// The target answered with a head the client does not read (too many fields or bytes).
    HeadTooLarge,
    /// The body could not be read or decoded.
    BrokenBody,
    /// Anything else the HTTP client reports.
    RequestFailed,
    /// The harness's own reason the request was not built (the detail says why).
    Harness,
    /// The request never left: the run had stopped sending (budget, interrupt, a target that
    /// stopped answering); the detail says why. Written as the harness's reasons are, and read
    /// back as one.
    NotSent,
}

impl TransportKind {
    const ALL: [TransportKind; 5] = [
        TransportKind::ConnectFailed,
        TransportKind::TimedOut,
        TransportKind::HeadTooLarge,
        TransportKind::BrokenBody,
        TransportKind::RequestFailed,
    ];

    /// The words a report starts the error with (none for the harness's own reasons).
    pub fn words(self) -> &'static str {
        match self {
            TransportKind::ConnectFailed => "could not connect",
            TransportKind::TimedOut => "timed out",
            TransportKind::HeadTooLarge => "answer's head too large",
            TransportKind::BrokenBody => "broken body",
            TransportKind::RequestFailed => "request failed",
            TransportKind::Harness | TransportKind::NotSent => "",
        }
    }
}

/// The words that start an error whose answer's head came and whose body was cut.
const BODY_CUT: &str = "body cut short";

/// A transport error: its kind, whether it cut a body whose head had come, and its causes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    pub kind: TransportKind,
    /// The answer's head came and its body was cut short: the response is recorded, and what
    /// the whole body says is unknown.
    pub body_cut: bool,
    /// The causes as the client gave them (redacted where it is recorded), or the harness's
    /// reason; empty when there is nothing to add to the kind.
    pub detail: String,
}

impl TransportError {
    pub fn new(kind: TransportKind, detail: impl Into<String>) -> TransportError {
        TransportError {
            kind,
            body_cut: false,
            detail: detail.into(),
        }
    }

    /// The harness's own reason a request got no answer (not built, not sent).
    pub fn harness(reason: impl Into<String>) -> TransportError {
        TransportError::new(TransportKind::Harness, reason)
    }

    /// The same error, as one that cut a body short.
    pub fn cutting_body(self) -> TransportError {
        TransportError {
            body_cut: true,
            ..self
        }
    }

    /// Whether the connect failed and nothing reached the target.
    pub fn connect_failed(&self) -> bool {
        self.kind == TransportKind::ConnectFailed && !self.body_cut
    }

    /// Whether the exchange outlasted the timeout (before any answer).
    pub fn timed_out(&self) -> bool {
        self.kind == TransportKind::TimedOut && !self.body_cut
    }

    /// Reads the words a report wrote back into an error; words it does not know are the
    /// harness's own.
    pub fn parse(text: &str) -> TransportError {
        let (body_cut, rest) = match text.strip_prefix(BODY_CUT) {
            Some(rest) => (true, rest.strip_prefix(": ").unwrap_or(rest)),
            None => (false, text),
        };
        for kind in TransportKind::ALL {
            if let Some(after) = rest.strip_prefix(kind.words())
                && (after.is_empty() || after.starts_with(": "))
            {
                return TransportError {
                    kind,
                    body_cut,
                    detail: after.strip_prefix(": ").unwrap_or("").to_string(),
                };
            }
        }
        TransportError {
            kind: TransportKind::Harness,
            body_cut,
            detail: rest.to_string(),
        }
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::with_capacity(3);
        if self.body_cut {
            parts.push(BODY_CUT);
        }
        if !matches!(self.kind, TransportKind::Harness | TransportKind::NotSent) {
            parts.push(self.kind.words());
        }
        if !self.detail.is_empty() {
            parts.push(&self.detail);
        }
        f.write_str(&parts.join(": "))
    }
}

impl Serialize for TransportError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TransportError {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(TransportError::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::{TransportError, TransportKind};

    #[test]
    fn the_words_read_back_into_the_same_error() {
        for text in [
            "could not connect: tcp connect error: Connection refused (os error 111)",
            "timed out",
            "body cut short: timed out",
            "body cut short: request failed: connection reset",
            "answer's head too large: the target answered with a head of more than 256 fields",
            "broken body: error decoding response body",
            "cut off: the run was interrupted",
            "not sent",
        ] {
            let error = TransportError::parse(text);
            assert_eq!(error.to_string(), text);
            let json = serde_json::to_string(&error).unwrap();
            assert_eq!(
                serde_json::from_str::<TransportError>(&json).unwrap(),
                error
            );
        }
        let cut = TransportError::parse("body cut short: timed out");
        assert!(cut.body_cut && cut.kind == TransportKind::TimedOut && !cut.timed_out());
        assert!(TransportError::parse("could not connect").connect_failed());
        // A request held back is shown by its reason alone, as the harness's reasons are.
        let held = TransportError::new(TransportKind::NotSent, "cut off: the run was interrupted");
        assert_eq!(held.to_string(), "cut off: the run was interrupted");
        // A reason that only starts like a kind's words is the harness's own.
        assert_eq!(
            TransportError::parse("timed outright").kind,
            TransportKind::Harness
        );
    }
}
