//! One operator of `cases/operators.json` as data: the change it makes, where it applies, how it
//! is spelt in a body and in a URL. The request space holds them (its parameters' values come
//! from them); `operators/` applies them to NewPet's positions.

use serde::Deserialize;

/// One way to change one value: its spellings, templates over the position's baseline value.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operator {
    pub operator: String,
    /// The kinds of position it applies to: `string` (free text), `integer`, `enum`.
    pub applies: Vec<Kind>,
    pub reason: String,
    #[serde(default)]
    pub spellings: Vec<String>,
    /// Leaves out a spelling of the baseline's own JSON type (a string for a string).
    #[serde(default)]
    pub skip_same_type: bool,
    /// The spellings are bytes (`\xHH` is the byte 0xHH), not JSON text.
    #[serde(default)]
    pub bytes: bool,
    /// The member travels in another channel than the body (see [`Channel`]).
    #[serde(default)]
    pub channel: Option<Channel>,
    /// Only to members NewPet requires.
    #[serde(default)]
    pub required_only: bool,
    /// The same change to a path or query parameter, spelt as it travels in a URL
    /// (see [`super::parameter_values::operator_values`]).
    #[serde(default)]
    pub parameter_spellings: Vec<String>,
    /// The kinds of parameter those apply to, where not `applies`.
    #[serde(default)]
    pub parameter_applies: Option<Vec<Kind>>,
}

impl Operator {
    /// Whether its parameter spellings apply to a parameter of `kind`.
    pub fn applies_to_parameter(&self, kind: Kind) -> bool {
        !self.parameter_spellings.is_empty()
            && self
                .parameter_applies
                .as_ref()
                .unwrap_or(&self.applies)
                .contains(&kind)
    }
}

/// A channel a body member may travel in instead of the JSON body, as frameworks that merge
/// every input source into one bag read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// A request header of the member's name.
    Header,
    /// A query parameter of the member's name.
    Query,
}

/// What a position of the body holds, from its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    String,
    Integer,
    Enum,
}

/// `text` as a JSON string whose every character is a `\u` escape (surrogate pairs past the
/// Basic Multilingual Plane).
pub fn escape_all(text: &str) -> String {
    let mut out = String::from("\"");
    for unit in text.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out
}
