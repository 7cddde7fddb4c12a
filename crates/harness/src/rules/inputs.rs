//! The coverage pass over the request space (`cases/request-space.json`): every case of every
//! class of an operation at a level, sent at once (one round trip), each judged as its class
//! says. What each class got is tallied for the report's request-coverage table.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{auth, stored};
use crate::contract::Operation;
use crate::engine::ctx::RuleCtx;
use crate::engine::input_tally::{ClassKey, Outcome};
use crate::engine::property::SentAhead;
use crate::engine::store_setup::Marker;
use crate::engine::{expect, property};
use crate::generation::request::{Body, RequestSpec};
use crate::generation::space::{Case, Class, Expect, Input};
use crate::outcome::{Checked, Exchange, Verdict, VerdictKind};

/// One case of the request space as a property rule draws it: the input, the class and the
/// case's index in it, and for createPet a generated valid NewPet to send instead of the
/// fixed one (for a case that leaves the body as it is).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drawn {
    pub input: String,
    pub class: String,
    pub case: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pet: Option<Value>,
}

/// Sends every case of every class of the rule's operation at the rule's level, all at once
/// (the deterministic coverage pass), and judges each: the rule fails on the first case (in
/// the file's order) answered otherwise than its class says; every case is tallied. For
/// createPet, the cases that leave the body as it is (a Content-Type spelling, a credential)
/// are then drawn at random with generated valid NewPets (shrunk on failure), as the other
/// property rules draw their cases.
pub fn walk(ctx: &RuleCtx) -> Checked {
    let operation = ctx.rule.operation;
    let mut classes = ctx.space().classes(operation, ctx.rule.level);
    // Bodies that are not UTF-8 go last (`walk_last`): kept, they may break every read.
    classes.retain(|(_, class)| !class.goes_last());
    if classes.is_empty() {
        return Err(Verdict::skipped(format!(
            "the request space has no {} class for {}",
            ctx.rule.level.as_str(),
            operation.name()
        )));
    }
    let walk = Walk {
        ctx,
        operation,
        valid: auth::request_for(ctx, operation)?,
        classes,
        refused: None,
    };
    let (coverage, pool) = walk.cases();
    let describe = |drawn: &Drawn| walk.describe(drawn);
    let case = |drawn: &Drawn| walk.case(drawn);
    let (first, then, leads) = walk.sent_ahead();
    let ahead = SentAhead {
        first: &first,
        then: Some(&then),
        leads: Some(&leads),
    };
    if pool.is_empty() {
        return first_of(&coverage, ahead, &case, ctx);
    }
    let schema = ctx.new_pet_schema();
    let prefix = ctx.pet_name("");
    let categories = ctx.categories().clone();
    let pets = crate::generation::strategy(schema).map_err(|e| Verdict::skipped(e.to_string()))?;
    let strategy = (proptest::sample::select(pool), pets).prop_map(move |(drawn, pet)| Drawn {
        pet: Some(categories.apply(crate::generation::with_prefix(&pet, &prefix))),
        ..drawn
    });
    property::check_all_sent_ahead(ctx, coverage, strategy, describe, ahead, case)
}

/// The classes of createPet the walk leaves to the last phase (bodies that are not UTF-8), sent
/// at once and judged as their classes say, each tallied for the coverage table; with what
/// the pets of the bodies refused would carry, to look for one stored anyway.
pub fn walk_last(ctx: &RuleCtx) -> (Checked, Vec<Marker>) {
    let mut classes = ctx.space().classes(Operation::CreatePet, ctx.rule.level);
    classes.retain(|(_, class)| class.goes_last());
    if classes.is_empty() {
        let none = "the request space has no createPet class whose bodies are not UTF-8";
        return (Err(Verdict::skipped(none)), Vec::new());
    }
    let valid = match auth::request_for(ctx, Operation::CreatePet) {
        Ok(valid) => valid,
        Err(verdict) => return (Err(verdict), Vec::new()),
    };
    let walk = Walk {
        ctx,
        operation: Operation::CreatePet,
        valid,
        classes,
        refused: Some(Default::default()),
    };
    let (coverage, _) = walk.cases();
    let judged = {
        let (first, then, leads) = walk.sent_ahead();
        let ahead = SentAhead {
            first: &first,
            then: Some(&then),
            leads: Some(&leads),
        };
        first_of(&coverage, ahead, &|drawn: &Drawn| walk.case(drawn), ctx)
    };
    let refused = walk
        .refused
        .map(|refused| refused.into_inner().unwrap_or_else(|e| e.into_inner()));
    (judged, refused.unwrap_or_default())
}

/// What a case's pet would carry, had a refused body been stored: its name, its category.
type Refused = (Option<String>, Option<i64>);

/// One rule's walk over its operation's classes at its level.
struct Walk<'a, 'r> {
    ctx: &'a RuleCtx<'r>,
    operation: Operation,
    /// A valid request of the operation, which each case changes.
    valid: RequestSpec,
    classes: Vec<(&'a Input, &'a Class)>,
    /// What the pets of the bodies refused (a whole 4xx) would carry, had they been stored:
    /// kept by the walk whose rule looks for them (the last one).
    refused: Option<std::sync::Mutex<Vec<Marker>>>,
}

impl Walk<'_, '_> {
    /// Every case the run may send, in the file's order, and (for createPet) the ones that
    /// leave the body as it is, which are drawn again with generated NewPets.
    fn cases(&self) -> (Vec<Drawn>, Vec<Drawn>) {
        let mut coverage = Vec::new();
        let mut pool = Vec::new();
        for (input, class) in &self.classes {
            for (n, case) in class.cases.iter().enumerate() {
                let drawn = Drawn {
                    input: input.input.clone(),
                    class: class.class.clone(),
                    case: n,
                    pet: None,
                };
                if !stored::may_send(self.ctx, case) {
                    continue; // a categoryId the run was told the store does not take
                }
                if self.operation == Operation::CreatePet && !case.sends_body() {
                    pool.push(drawn.clone());
                }
                coverage.push(drawn);
            }
        }
        (coverage, pool)
    }

    fn find(&self, drawn: &Drawn) -> Option<(&Input, &Class, &Case)> {
        self.classes
            .iter()
            .find(|(input, class)| input.input == drawn.input && class.class == drawn.class)
            .and_then(|(input, class)| Some((*input, *class, class.cases.get(drawn.case)?)))
    }

    /// A case's place in the space, so that its marker category is its own.
    fn index(&self, drawn: &Drawn) -> usize {
        self.classes
            .iter()
            .take_while(|(input, class)| input.input != drawn.input || class.class != drawn.class)
            .map(|(_, class)| class.cases.len())
            .sum::<usize>()
            + drawn.case
    }

    fn describe(&self, drawn: &Drawn) -> String {
        match (self.find(drawn), &drawn.pet) {
            (Some((input, class, case)), pet) => {
                let pet = pet.as_ref().map_or(String::new(), |pet| {
                    format!(" with {}", crate::generation::describe_pet(pet))
                });
                format!(
                    "class {} of {}: {}{pet}",
                    class.class,
                    input.input,
                    case.describe()
                )
            }
            (None, _) => format!("{drawn:?} (no such case in the request space)"),
        }
    }

    /// The request a case sends: the valid one with the case's one change, its placeholders
    /// filled; with what its pet would carry (`Case::marker`), and the pet the case names as
    /// existing, if it names one.
    fn request(
        &self,
        drawn: &Drawn,
        class: &Class,
        case: &Case,
    ) -> Result<(RequestSpec, Refused, Option<Value>), Verdict> {
        let ctx = self.ctx;
        let mut valid = self.valid.clone();
        if let Some(pet) = &drawn.pet {
            valid.body = Body::Json(pet.clone());
        }
        let index = self.index(drawn);
        let name = ctx.pet_name(&format!("inputs-{index}-{}-{}", class.class, drawn.case));
        let fill = stored::fill(ctx, case, index, &name)?;
        let existing = match fill.existing_id {
            Some(_) => Some(ctx.fixtures().existing_pet(ctx)?),
            None => None,
        };
        let spec = case
            .apply_filled(&valid, &fill)
            .refused_by_contract(class.requires_refusal());
        Ok((spec, case.marker(&fill), existing))
    }

    /// What a case sends, known before it is judged: its request (none for a case withheld,
    /// or whose request cannot be built: it says why when judged), the read back of an
    /// accepted one, and whether its class reads back (those cases go first). Sent ahead, a batch's cases cost a round trip and then one more for the
    /// read backs, whatever helper threads the run has free: from worker threads, a walk of
    /// 150 cases that started while other rules held them went a few cases at a time.
    #[allow(clippy::type_complexity)]
    fn sent_ahead(
        &self,
    ) -> (
        impl Fn(&Drawn) -> Option<RequestSpec> + Sync + '_,
        impl Fn(&Drawn, &Exchange) -> Vec<RequestSpec> + Sync + '_,
        impl Fn(&Drawn) -> bool + Sync + '_,
    ) {
        let first = |drawn: &Drawn| {
            let (_, class, case) = self.find(drawn)?;
            if clashes_with_extra_headers(self.ctx, case) {
                return None;
            }
            Some(self.request(drawn, class, case).ok()?.0)
        };
        let then = |drawn: &Drawn, exchange: &Exchange| match self.find(drawn) {
            Some((_, class, case)) if reads_back(class, exchange) => {
                match self.request(drawn, class, case) {
                    Ok((spec, _, existing)) => {
                        stored::read_back_requests(&spec, exchange, existing.as_ref())
                    }
                    Err(_) => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        let leads = |drawn: &Drawn| {
            self.find(drawn)
                .is_some_and(|(_, class, _)| class.read_back)
        };
        (first, then, leads)
    }

    /// Sends one case (unless it went ahead) and judges it as its class says; every case is
    /// tallied.
    fn case(&self, drawn: &Drawn) -> Checked {
        let ctx = self.ctx;
        let Some((input, class, case)) = self.find(drawn) else {
            return Ok(()); // a saved case the space no longer holds
        };
        let key = ClassKey::new(self.operation, &input.input, &class.class);
        if clashes_with_extra_headers(ctx, case) {
            // The run sends that header itself (`-H`, a gateway's X-API-Key): two of them would
            // test the gateway, not the store. Not sent, and the coverage table says why.
            ctx.input_tally().count(key, Outcome::Withheld, String::new);
            return Ok(());
        }
        let (spec, marker, existing) = self.request(drawn, class, case)?;
        let exchange = ctx.send(&spec);
        if let Some(refused) = &self.refused
            && exchange.status().is_some_and(|s| (400..500).contains(&s))
            && !exchange.cut_by_transport()
            && let (name, category_id) = marker
            && (name.is_some() || category_id.is_some())
        {
            let mut refused = refused.lock().unwrap_or_else(|e| e.into_inner());
            refused.push(Marker { name, category_id });
        }
        let described = self.describe(drawn);
        // A response may echo the key: the note is redacted as a verdict is.
        let what = || {
            let note = format!("{described}: {}", exchange.summary());
            ctx.redactor().redact_sent(&note)
        };
        let accepted = exchange.status().is_some_and(|s| (200..300).contains(&s));
        let judged = judge(ctx, self.operation, class.expect, &exchange).and_then(|()| {
            if reads_back(class, &exchange) {
                stored::read_back(ctx, &spec, &exchange, existing.as_ref())
            } else {
                Ok(())
            }
        });
        match judged {
            Ok(()) => {
                ctx.input_tally().count(key, Outcome::Passed, what);
                Ok(())
            }
            Err(verdict) if verdict.kind() == VerdictKind::Failed && !unanswered(&exchange) => {
                // A read back fails on what it read, not on the create's answer.
                let note = || {
                    let note = match verdict.clone() {
                        Verdict::Failed(failure) if class.read_back && accepted => {
                            format!("{described}: {}", failure.observed)
                        }
                        _ => format!("{described}: {}", exchange.summary()),
                    };
                    ctx.redactor().redact_sent(&note)
                };
                ctx.input_tally().count(key, Outcome::Failed, note);
                Err(annotate(verdict, class, &described))
            }
            Err(verdict) => {
                ctx.input_tally().count(key, Outcome::Unanswered, what);
                Err(verdict)
            }
        }
    }
}

/// Whether a case would send a header the run already sends with `-H`.
fn clashes_with_extra_headers(ctx: &RuleCtx, case: &crate::generation::space::Case) -> bool {
    let credential = case
        .credential
        .as_deref()
        .and_then(crate::generation::request::Credential::parse);
    let channel = credential
        .as_ref()
        .and_then(|credential| credential.channel())
        .and_then(|channel| channel.strip_prefix("header "));
    channel
        .into_iter()
        .chain(case.headers.iter().flatten().map(|(name, _)| name.as_str()))
        .any(|name| ctx.sends_extra_header(name))
}

/// The coverage pass alone: every case at once, the first failure in the file's order.
fn first_of(
    cases: &[Drawn],
    ahead: SentAhead<Drawn>,
    case: &(impl Fn(&Drawn) -> Checked + Sync),
    ctx: &RuleCtx,
) -> Checked {
    let mut first_undecided = None;
    for verdict in property::judge_all(ctx, cases, Some(ahead), case) {
        match verdict {
            Ok(()) => {}
            Err(verdict) if verdict.kind() == VerdictKind::Failed => return Err(verdict),
            Err(verdict) => {
                first_undecided.get_or_insert(verdict);
            }
        }
    }
    first_undecided.map_or(Ok(()), Err)
}

/// Whether a case's answer is read back: its class says so, and the create was accepted
/// with an answer whole.
fn reads_back(class: &Class, exchange: &Exchange) -> bool {
    let accepted = exchange.status().is_some_and(|s| (200..300).contains(&s));
    class.read_back && accepted && !unanswered(exchange)
}

fn unanswered(exchange: &Exchange) -> bool {
    exchange.response.is_none() || exchange.cut_by_transport()
}

/// The failure, saying which input, class and case showed it.
fn annotate(verdict: Verdict, class: &Class, described: &str) -> Verdict {
    match verdict {
        Verdict::Failed(mut failure) => {
            failure.expected = format!("{} ({described}; {})", failure.expected, class.reason);
            Verdict::Failed(failure)
        }
        other => other,
    }
}

/// The answer to one case against what its class says.
fn judge(ctx: &RuleCtx, operation: Operation, expect: Expect, exchange: &Exchange) -> Checked {
    match expect {
        Expect::Accepted => {
            let (status, what) = match operation {
                Operation::CreatePet => (201, "201 (the animal was added)"),
                _ => (200, "200 (the request is valid)"),
            };
            expect::status(exchange, &[status], what)
        }
        Expect::Refused400 => {
            expect::status(exchange, &[400], "400 with an Error body")?;
            expect::error_body(ctx.contract(), exchange)
        }
        Expect::Refused4xx => {
            expect::client_error(exchange, "a 4xx with an Error body (a refusal)")?;
            expect::error_body(ctx.contract(), exchange)
        }
        Expect::Refused401 => {
            expect::status(exchange, &[401], "401 (missing or invalid API key)")?;
            expect::error_body(ctx.contract(), exchange)
        }
        Expect::Answered => no_server_error(exchange),
        Expect::AnsweredJson => {
            no_server_error(exchange)?;
            json_answer(ctx, exchange)
        }
    }
}

fn no_server_error(exchange: &Exchange) -> Checked {
    let response = expect::response(exchange)?;
    if response.status >= 500 {
        return Err(Verdict::failed(
            "any answer but a 5xx (no operation lists one)",
            exchange.summary(),
            exchange,
        ));
    }
    Ok(())
}

/// Whatever the status, a body that is there is JSON under a JSON Content-Type, and a 4xx's
/// is an Error ("Request and response bodies are `application/json`."; "Errors use the Error
/// body ... with `Content-Type: application/json`."). A redirect, 204 or 304 has no body.
fn json_answer(ctx: &RuleCtx, exchange: &Exchange) -> Checked {
    let response = expect::response(exchange)?;
    if matches!(response.status, 100..=199 | 204 | 300..=399) {
        return Ok(());
    }
    let content_type = exchange.header("content-type").unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(Verdict::failed(
            "a JSON body under Content-Type: application/json, whatever the status",
            format!("Content-Type: {content_type:?} on {}", exchange.summary()),
            exchange,
        ));
    }
    expect::truncated(exchange)?;
    if response.status >= 400 {
        return expect::error_body(ctx.contract(), exchange);
    }
    if response.json.is_none() {
        return Err(Verdict::failed(
            "a JSON body under Content-Type: application/json, whatever the status",
            format!("a body that is not JSON: {}", exchange.summary()),
            exchange,
        ));
    }
    Ok(())
}
