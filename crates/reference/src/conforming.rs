//! Every choice the reference makes where the contract is silent or permissive, as data: one
//! [`Choices`] value a store. [`Choices::reference`] is the reference's usual one; the variants
//! are named changes to it; [`Choices::draw`] draws a whole conforming store from a seed, each
//! dimension from every answer the contract and HTTP allow, so that a rule that fails a
//! conforming store is found by construction, not by the luck of which variants someone wrote.
//!
//! What a store answers to each class of the request space is drawn from the answers the class
//! itself lists (`allows` in cases/request-space.json): the data that says what a conforming
//! store may do is the data the generator draws from.

use std::collections::BTreeMap;

pub use headers::{HeaderChoices, LinkForm, Unasked};

use super::json_text::{Controls, Escaping, Order, Spacing, Style};
use super::variants::Variant;
use super::wire::{Framing, WireShape, Writes};

/// How the store hands out ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdScheme {
    /// 1, 2, 3, ... from `start`, `step` apart.
    Counting { start: i64, step: i64 },
    /// Random int64 values (negative ones included).
    Random,
}

/// What the store does with a name holding a lone surrogate escape (not Unicode text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surrogates {
    /// Refused: 400, as the reference does.
    Refused,
    /// Stored as it came, and written back as the same escape (Python, Node).
    AsSent,
    /// Stored with U+FFFD in its place (Go, most UTF-8 stores).
    Repaired,
}

/// Which check answers a request that is wrong twice: without the key and invalid otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precedence {
    AuthFirst,
    /// Validation or lookup first (recommended against: auth/precedence/*).
    ValidateFirst,
}

/// What `limit` outside 1..=100 (or no integer at all) gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitPolicy {
    Refused,
    /// Clamped into 1..=100 (a 200 with at most 100 pets).
    Clamped,
    /// Ignored: the default page.
    Ignored,
}

/// How a trailing slash (`GET /pets/`) is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrailingSlash {
    NotFound,
    /// A body-less 307 to the path without it, before authentication (Starlette).
    Redirect,
    /// Routed as the path without it.
    SameAsWithout,
}

/// The `WWW-Authenticate` of a 401.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Challenge {
    Bearer,
    LowercaseBearer,
    None,
}

/// Which of getPet's deprecation signals a store sends (the contract names none of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signals {
    All,
    WithoutLink,
    DeprecationOnly,
    None,
}

/// The pets a store holds before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    Empty,
    /// A few pets of every shape other clients leave: every status and none, names in every
    /// script, escapes, empty, long.
    Few(usize),
    /// 5,000 pets, sequential ids.
    Crowded,
    /// This many plain pets (`resident N`, status available), sequential ids.
    Plain(usize),
}

/// One store's every choice.
#[derive(Debug, Clone, PartialEq)]
pub struct Choices {
    /// The seed it was drawn from; `None` for the reference and its variants.
    pub seed: Option<u64>,
    pub ids: IdScheme,
    /// What a pet created without a status gets (`None`: no status).
    pub status_default: Option<&'static str>,
    /// Pets carry fields the contract does not name.
    pub extra_fields: bool,
    /// The status of a well-formed body with invalid values: 400, or 422.
    pub invalid_values: u16,
    /// Only categories 1 to 10 exist (the run must be told: --category-ids).
    pub known_categories: bool,
    pub stored: Stored,
    /// Other clients store 50 pets a second.
    pub busy: bool,
    /// A gateway lets this many requests in per 100 ms, and answers 429 to the rest.
    pub throttle: Option<u32>,
    pub text: Style,
    pub content_type: &'static str,
    pub challenge: Challenge,
    pub trailing_slash: TrailingSlash,
    /// 404 or 405 for a method no operation has.
    pub undeclared_method: u16,
    pub precedence: Precedence,
    pub surrogates: Surrogates,
    /// An integral categoryId sent as a float (100.0, 1e2) is echoed as a float.
    pub float_echo: bool,
    /// Bodies past this many bytes are refused, with `body_limit_status` and an Error.
    pub body_limit: Option<usize>,
    /// 413, or the contract's 400, for a body past `body_limit`.
    pub body_limit_status: u16,
    pub limit: LimitPolicy,
    /// An unknown status filter gets an empty page instead of 400.
    pub unknown_status_empty: bool,
    /// A petId that is no integer: 400 or 404.
    pub non_integer_pet_id: u16,
    /// Pages hold at most this many pets, whatever limit asks.
    pub page_cap: Option<usize>,
    pub signals: Signals,
    /// The first answer waits this long (a cold start).
    pub first_answer_delay_ms: u64,
    /// How HTTP/1.1 answers travel (header case and order, framing, writes, interim answers,
    /// keep-alive); for the reference and its variants, `ReferenceConfig::wire` says.
    pub wire: WireShape,
    /// The answer to each class of the request space, by (input, class).
    pub classes: BTreeMap<(String, String), Answer>,
    /// gzip when asked; the deprecation headers' values.
    pub headers: HeaderChoices,
}

/// Draws values from a seed, one after another.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = petstore_vocabulary::seed::splitmix64(self.0);
        self.0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }

    /// True about one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

impl Choices {
    /// The reference's usual choices: the first answer each class allows.
    pub fn reference() -> Choices {
        let classes = space_classes()
            .into_iter()
            .filter_map(|(_, input, class)| {
                let answer = Answer::parse(class.allows.first()?)?;
                Some(((input, class.class), answer))
            })
            .collect();
        Choices {
            seed: None,
            ids: IdScheme::Counting { start: 1, step: 1 },
            status_default: None,
            extra_fields: false,
            invalid_values: 400,
            known_categories: false,
            stored: Stored::Empty,
            busy: false,
            throttle: None,
            text: Style::PLAIN,
            content_type: "application/json",
            challenge: Challenge::Bearer,
            trailing_slash: TrailingSlash::NotFound,
            undeclared_method: 405,
            precedence: Precedence::AuthFirst,
            surrogates: Surrogates::Refused,
            float_echo: false,
            body_limit: None,
            body_limit_status: 413,
            limit: LimitPolicy::Refused,
            unknown_status_empty: false,
            non_integer_pet_id: 400,
            page_cap: None,
            signals: Signals::All,
            first_answer_delay_ms: 0,
            wire: WireShape::default(),
            classes,
            headers: HeaderChoices::reference(),
        }
    }

    /// The reference with `variants` applied: each a named change to its choices.
    pub fn of_variants(variants: &std::collections::BTreeSet<Variant>) -> Choices {
        let mut choices = Choices::reference();
        for variant in variants {
            match variant {
                Variant::RandomIds => choices.ids = IdScheme::Random,
                Variant::HugeIds => {
                    choices.ids = IdScheme::Counting {
                        start: (1 << 62) + 1,
                        step: 1,
                    }
                }
                Variant::ZeroBasedIds => choices.ids = IdScheme::Counting { start: 0, step: 1 },
                Variant::NegativeIds => {
                    choices.ids = IdScheme::Counting {
                        start: -1,
                        step: -1,
                    }
                }
                Variant::StatusDefaultAvailable => choices.status_default = Some("available"),
                Variant::ExtraFields => choices.extra_fields = true,
                Variant::LowercaseChallenge => choices.challenge = Challenge::LowercaseBearer,
                Variant::Charset => choices.content_type = "application/json; charset=utf-8",
                Variant::PrettyReordered => {
                    choices.text.spacing = Spacing::Pretty(4, false);
                    choices.text.order = Order::Reversed;
                }
                Variant::CrowdedStore => choices.stored = Stored::Crowded,
                Variant::NearlyFullStore => choices.stored = Stored::Plain(90),
                Variant::BusyStore => choices.busy = true,
                Variant::Unprocessable422 => choices.invalid_values = 422,
                Variant::Throttled => choices.throttle = Some(30),
                Variant::SlowGateway => choices.throttle = Some(4),
                Variant::KnownCategories => choices.known_categories = true,
                Variant::TrailingSlashRedirect => choices.trailing_slash = TrailingSlash::Redirect,
                // How an answer travels, not what it says: the wire's business.
                _ => {}
            }
        }
        choices
    }

    /// A conforming store drawn from `seed`: every dimension from every answer the contract
    /// and HTTP allow. Dimensions that only cost time (a throttling gateway, other clients, a
    /// crowded store, a run that must be told the categories) are drawn rarely or not at all:
    /// the variants' own tests run those.
    pub fn draw(seed: u64) -> Choices {
        let mut draw = Draw(seed ^ 0x636f_6e66_6f72_6d73);
        let mut choices = Choices::reference();
        choices.seed = Some(seed);
        choices.ids = draw_ids(&mut draw);
        choices.status_default =
            draw.pick(&[None, None, Some("available"), Some("pending"), Some("sold")]);
        choices.extra_fields = draw.one_in(3);
        choices.invalid_values = draw.pick(&[400, 400, 422]);
        choices.stored = match draw.next() % 6 {
            0 => Stored::Few(1 + (draw.next() % 40) as usize),
            1 => Stored::Few(101 + (draw.next() % 200) as usize),
            2 if draw.one_in(4) => Stored::Crowded,
            _ => Stored::Empty,
        };
        choices.text = draw_text(&mut draw);
        choices.content_type = draw.pick(&[
            "application/json",
            "application/json; charset=utf-8",
            "application/json;charset=UTF-8",
            "Application/JSON",
            "application/json; charset=\"utf-8\"",
        ]);
        choices.challenge = draw.pick(&[
            Challenge::Bearer,
            Challenge::LowercaseBearer,
            Challenge::None,
        ]);
        choices.trailing_slash = draw.pick(&[
            TrailingSlash::NotFound,
            TrailingSlash::Redirect,
            TrailingSlash::SameAsWithout,
        ]);
        choices.undeclared_method = draw.pick(&[404, 405]);
        choices.precedence = draw.pick(&[Precedence::AuthFirst, Precedence::ValidateFirst]);
        choices.surrogates = draw.pick(&[
            Surrogates::Refused,
            Surrogates::AsSent,
            Surrogates::Repaired,
        ]);
        choices.float_echo = draw.one_in(2);
        // nginx's 1 MiB, Django's 2.5 MB, and others'.
        choices.body_limit = draw.pick(&[
            None,
            None,
            Some(80 << 10),
            Some(300 << 10),
            Some(1 << 20),
            Some(2_621_440),
            Some(8 << 20),
        ]);
        choices.body_limit_status = draw.pick(&[413, 413, 400]);
        choices.limit = draw.pick(&[
            LimitPolicy::Refused,
            LimitPolicy::Clamped,
            LimitPolicy::Ignored,
        ]);
        choices.unknown_status_empty = draw.one_in(3);
        choices.non_integer_pet_id = draw.pick(&[400, 404]);
        choices.page_cap = draw.pick(&[None, None, None, Some(50)]);
        choices.signals = draw.pick(&[
            Signals::All,
            Signals::All,
            Signals::WithoutLink,
            Signals::DeprecationOnly,
            Signals::None,
        ]);
        choices.first_answer_delay_ms = draw.pick(&[0, 0, 0, 300]);
        // Every form of every wire dimension, but chunks and writes of a few bytes: each costs
        // the client a frame, so a run takes 25 s (the variant trials run those forms).
        let mut wire = WireShape::draw(draw.next());
        if let Framing::Chunked { size, .. } = &mut wire.framing {
            *size = (*size).max(64);
        }
        if let Writes::Pieces { size } = &mut wire.writes {
            *size = (*size).max(100);
        }
        choices.wire = wire;
        // The request space's classes draw from a stream of their own: a class added to the
        // space changes no other dimension of a seed's store.
        let classes = draw.next();
        choices.headers = HeaderChoices::draw(draw.next());
        choices.classes = draw_class_answers(&mut Draw(classes));
        choices
    }

    /// What a class of the request space gets from this store.
    pub fn answer(&self, input: &str, class: &str) -> Answer {
        self.classes
            .get(&(input.to_string(), class.to_string()))
            .copied()
            .unwrap_or(Answer::Accepted)
    }

    /// The recommended rules this store may fail: each choice that parts from a
    /// recommendation names the rules that ask for it (`conforming/predictions.json`).
    /// Whatever it draws, no required rule may fail.
    pub fn may_fail(&self) -> Vec<String> {
        let mut rules: Vec<String> = Vec::new();
        let mut add = |choice: &str| rules.extend(predicted(choice).iter().cloned());
        if self.precedence == Precedence::ValidateFirst {
            add("precedence-validate-first");
        }
        if self.invalid_values != 400 {
            add("invalid-values-not-400");
        }
        if self.limit != LimitPolicy::Refused {
            add("limit-not-refused");
        }
        if self.unknown_status_empty {
            add("unknown-status-empty");
        }
        if self.page_cap.is_some() {
            add("page-cap");
        }
        match self.signals {
            Signals::All => {}
            Signals::WithoutLink => add("signals-without-link"),
            Signals::DeprecationOnly => add("signals-deprecation-only"),
            Signals::None => add("signals-none"),
        }
        if self.headers.sunset_iso && matches!(self.signals, Signals::All | Signals::WithoutLink) {
            add("sunset-iso-8601");
        }
        for (operations, input, class) in space_classes() {
            let answer = self.answer(&input, &class.class);
            // The rules outside the walk that send values of the class's kind, and recommend
            // exactly 400 for them (an input the file does not name: none).
            let not_400 = format!("refused-class-not-400 {input}");
            if answer != Answer::Refused(400)
                && class.expect.is_refusal()
                && PREDICTIONS.contains_key(&not_400)
            {
                add(&not_400);
            }
            // Generated parameter values may fall in a query class (a NUL, a `+`), which
            // list-pets/parameters/refused recommends refusing with a 4xx.
            if input == "query string" && !matches!(answer, Answer::Refused(_)) {
                add("query-string-class-accepted");
            }
            if class.level == petstore_vocabulary::contract::Level::Recommended
                && !meets(answer, class.expect)
            {
                for operation in operations {
                    add(&format!("recommended-class-missed {operation}"));
                }
            }
        }
        rules.sort();
        rules.dedup();
        rules
    }

    /// Every choice, one to a line: a failing seed prints the store it drew.
    pub fn describe(&self) -> String {
        let mut lines = vec![
            format!("seed: {:?}", self.seed),
            format!("ids: {:?}", self.ids),
            format!("status when none is sent: {:?}", self.status_default),
            format!("extra fields: {}", self.extra_fields),
            format!("invalid values: {}", self.invalid_values),
            format!("stored before the run: {:?}", self.stored),
            format!("JSON text: {}", self.text.describe()),
            format!("Content-Type: {}", self.content_type),
            format!("WWW-Authenticate: {:?}", self.challenge),
            format!("trailing slash: {:?}", self.trailing_slash),
            format!("undeclared method: {}", self.undeclared_method),
            format!("wrong twice: {:?}", self.precedence),
            format!("lone surrogates: {:?}", self.surrogates),
            format!("integral floats echoed as floats: {}", self.float_echo),
            format!(
                "body limit: {:?} (then {})",
                self.body_limit, self.body_limit_status
            ),
            format!("limit out of range: {:?}", self.limit),
            format!(
                "unknown status filter gets an empty page: {}",
                self.unknown_status_empty
            ),
            format!("non-integer petId: {}", self.non_integer_pet_id),
            format!("page cap: {:?}", self.page_cap),
            format!("deprecation signals: {:?}", self.signals),
            format!("first answer delay: {} ms", self.first_answer_delay_ms),
            format!("wire: {}", self.wire.describe()),
            format!("headers: {}", self.headers.describe()),
        ];
        for ((input, class), answer) in &self.classes {
            lines.push(format!("{input} / {class}: {answer:?}"));
        }
        lines.join("\n")
    }
}

/// How a drawn store hands out ids.
fn draw_ids(draw: &mut Draw) -> IdScheme {
    match draw.next() % 7 {
        0 => IdScheme::Random,
        1 => IdScheme::Counting { start: 0, step: 1 },
        2 => IdScheme::Counting {
            start: -1,
            step: -1,
        },
        3 => IdScheme::Counting {
            start: (1 << 53) + 1,
            step: 1,
        },
        4 => IdScheme::Counting {
            start: (1 << 62) + 1,
            step: 1,
        },
        5 => IdScheme::Counting {
            start: 1 + (draw.next() % 1000) as i64,
            step: 1 + (draw.next() % 97) as i64,
        },
        _ => IdScheme::Counting { start: 1, step: 1 },
    }
}

/// How a drawn store writes JSON text.
fn draw_text(draw: &mut Draw) -> Style {
    Style {
        escaping: draw.pick(&[
            Escaping::Raw,
            Escaping::AsciiLower,
            Escaping::AsciiUpper,
            Escaping::HtmlSafe,
            Escaping::Slashes,
        ]),
        controls: draw.pick(&[Controls::Short, Controls::Unicode]),
        order: match draw.next() % 4 {
            0 => Order::AsWritten,
            1 => Order::Reversed,
            2 => Order::Sorted,
            _ => Order::Shuffled(draw.next()),
        },
        spacing: draw.pick(&[
            Spacing::Compact,
            Spacing::Spaced,
            Spacing::Pretty(2, false),
            Spacing::Pretty(4, true),
        ]),
    }
}

/// What a drawn store answers to each class of the request space: one answer per set of
/// requests (two classes of the same requests, one required and one recommended, are one
/// answer of a store), drawn from what the class allows.
fn draw_class_answers(draw: &mut Draw) -> BTreeMap<(String, String), Answer> {
    let mut classes = BTreeMap::new();
    let mut by_requests: BTreeMap<(String, String), Answer> = BTreeMap::new();
    for (_, input, class) in space_classes() {
        let answers: Vec<Answer> = class
            .allows
            .iter()
            .filter_map(|a| Answer::parse(a))
            .collect();
        if answers.is_empty() {
            continue;
        }
        let requests = (input.clone(), class.cases.to_string());
        let answer = *by_requests
            .entry(requests)
            .or_insert_with(|| draw.pick(&answers));
        classes.insert((input, class.class), answer);
    }
    classes
}

mod classes;
pub use classes::{Answer, meets, space_classes};
mod predictions;
pub use predictions::PREDICTIONS;
use predictions::predicted;

mod headers;
#[cfg(test)]
mod tests;
