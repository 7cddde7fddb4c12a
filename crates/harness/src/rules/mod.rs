//! Rules: the check logic behind the catalogue, one module per area of the contract.
//!
//! A check is a plain function from a [`RuleCtx`] and its typed params to `Ok(())` (passed)
//! or the verdict that stopped it. The catalogue (`cases/*.json`) names the check and its
//! params, read into a [`Check`]; [`run`] dispatches on it, and [`Check::traits`] says
//! when it runs. The run they stand on (its state, the recorder, the property runner,
//! the store setup) is `engine/`.

mod auth;
mod concurrency;
mod create_pet;
mod crowded;
mod deprecation;
mod get_pet;
pub mod inputs;
mod links;
mod list_pets;
mod parameters;
mod read_back;
pub mod responses;
mod sequences;
mod sizes;
mod stored;

use crate::catalogue::Check;
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::outcome::{Checked, Exchange, Failure, Verdict};

/// Runs the rule's check with its params.
pub fn run(ctx: &RuleCtx) -> Checked {
    match &ctx.rule.check {
        Check::AuthRefused { credential } => auth::refused(ctx, credential),
        Check::AuthAccepted { credential } => auth::accepted(ctx, credential),
        Check::AuthRefusedCreateStoresNothing {} => auth::refused_create_stores_nothing(ctx),
        Check::AuthNearMissRefused { near_miss } => auth::near_miss_refused(ctx, near_miss),
        Check::AuthPrecedence {
            credentials,
            queries,
            pet_ids,
            mutations,
        } => auth::precedence(
            ctx,
            credentials,
            auth::Invalid {
                queries: queries.as_deref().unwrap_or_default(),
                pet_ids: pet_ids.as_deref().unwrap_or_default(),
                mutations: mutations.as_deref().unwrap_or_default(),
            },
        ),
        Check::StoreOrdersAnswered {} => auth::store_orders_answered(ctx),
        Check::ParametersAnswered {} => parameters::answered(ctx),
        Check::ParametersRefused {} => parameters::refused(ctx),
        Check::ListOk {} => list_pets::ok(ctx),
        Check::ListEmptyIsArray {} => list_pets::empty_is_array(ctx),
        Check::CreateNameLadder { lengths } => sizes::name_ladder(ctx, lengths),
        Check::CreateBodyLadder { sizes } => sizes::body_ladder(ctx, sizes),
        Check::CreatePoisonedReadBack {} => read_back::lone_surrogate(ctx),
        Check::CreatePoisonedBytes {} => read_back::not_utf_8(ctx),
        Check::ListDefaultAtMost { max, header } => {
            list_pets::default_at_most(ctx, *max, header.as_deref())
        }
        Check::ListLimitProperty {} => list_pets::limit_property(ctx),
        Check::ListLimitAccepted { limit } => list_pets::limit_accepted(ctx, limit),
        Check::ListFillsPage { expect, limit } => {
            list_pets::fills_page(ctx, *expect, limit.as_deref())
        }
        Check::ListLimitRefused { limit } => list_pets::limit_refused(ctx, limit),
        Check::ListOutOfRangeCapped { limits } => list_pets::out_of_range_capped(ctx, limits),
        Check::ListLimitBeside { limit, besides } => list_pets::limit_beside(ctx, limit, besides),
        Check::ListCrowded { past } => crowded::crowded(ctx, past),
        Check::ListStatusProperty {} => list_pets::status_property(ctx),
        Check::ListStatusRefused { status } => list_pets::status_refused(ctx, status),
        Check::CreateProperty {} => create_pet::created_property(ctx),
        Check::CreateUniqueIds { count } => create_pet::unique_ids(ctx, *count),
        Check::CreateRoundTrip {} => create_pet::round_trip(ctx),
        Check::CreateRefused { mutation, expect } => create_pet::refused(ctx, mutation, *expect),
        Check::CreateMutationsProperty {} => create_pet::mutations_property(ctx),
        Check::CreateTypeConfusion {} => create_pet::type_confusion(ctx),
        Check::CreateTypeConfusionStoresNothing {} => {
            create_pet::type_confusion_stores_nothing(ctx)
        }
        Check::CreateConcurrentDistinctIds { clients, rounds } => {
            concurrency::distinct_ids(ctx, *clients, *rounds)
        }
        Check::CreateConcurrentAllListed { clients } => concurrency::all_listed(ctx, *clients),
        Check::CreateInvalidValues400 { mutations } => {
            create_pet::invalid_values_400(ctx, mutations)
        }
        Check::SequencesReadYourWrites { max_steps } => {
            sequences::read_your_writes(ctx, *max_steps)
        }
        Check::GetExisting {} => get_pet::existing(ctx),
        Check::GetUnknown {} => get_pet::unknown(ctx),
        Check::GetNonInteger { pet_id } => get_pet::non_integer(ctx, pet_id),
        Check::DeprecationSignalled {} => deprecation::signalled(ctx),
        Check::DeprecationSyntax {} => deprecation::syntax(ctx),
        Check::SunsetPresent {} => deprecation::sunset_present(ctx),
        Check::SunsetDate {} => deprecation::sunset_date(ctx),
        Check::SunsetAfterDeprecation {} => deprecation::sunset_after_deprecation(ctx),
        Check::SuccessorLink {} => deprecation::successor_link(ctx),
        Check::DeprecationBeforeRemoval {} => deprecation::before_removal(ctx),
        Check::SuccessorIsListPets {} => deprecation::successor_is_list_pets(ctx),
        Check::NotDeprecated {} => deprecation::not_deprecated(ctx),
        Check::ResponsesJsonContentType {} => responses::json_content_type(ctx),
        Check::ResponsesErrorBody {} => responses::error_body(ctx),
        Check::ResponsesNoServerError {} => responses::no_server_error(ctx),
        Check::ResponsesSuccessSchema {} => responses::success_schema(ctx),
        Check::ResponsesDeprecationGetPetOnly {} => responses::deprecation_on_get_pet_only(ctx),
        Check::ResponsesOutsideNoServerError {} => responses::outside_no_server_error(ctx),
        Check::InputsWalk {} => inputs::walk(ctx),
        Check::InputsStoresNothing {} => stored::stores_nothing(ctx),
    }
}

/// Runs a rule's check, turning a panic in check code into an inconclusive verdict rather
/// than a crashed run; the verdict comes back redacted.
pub fn evaluate(ctx: &RuleCtx) -> Verdict {
    ctx.redactor().redact_verdict(judge(ctx))
}

/// No rule fails without a response that shows it: a failure whose exchange got no answer
/// (a timeout, a reset, a request not sent), or an answer the transport cut mid-body, is the
/// absence of evidence, so inconclusive. The one exception is a request no try of which was
/// answered while the store answered others (`Exchange::never_answered`): that silence is
/// the evidence.
fn judge(ctx: &RuleCtx) -> Verdict {
    match check(ctx) {
        // Distinct failures: each must stand on its own evidence; one that does not is
        // dropped, and the first that does leads.
        Verdict::Failed(mut failure) if !failure.more.is_empty() => {
            let more = std::mem::take(&mut failure.more);
            let all: Vec<Failure> = std::iter::once(*failure).chain(more).collect();
            let (shown, unshown): (Vec<_>, Vec<_>) = all
                .into_iter()
                .partition(|f| evidenced(&Verdict::Failed(Box::new(f.clone()))));
            match Verdict::failed_distinct(shown) {
                Some(verdict) => verdict,
                None => judge_one(
                    unshown
                        .into_iter()
                        .next()
                        .map(|f| Verdict::Failed(Box::new(f))),
                ),
            }
        }
        verdict => judge_one(Some(verdict)),
    }
}

/// A failure whose evidence [`judge_one`] leaves as it is.
fn evidenced(verdict: &Verdict) -> bool {
    matches!(judge_one(Some(verdict.clone())), Verdict::Failed(_))
}

fn judge_one(verdict: Option<Verdict>) -> Verdict {
    let Some(verdict) = verdict else {
        return Verdict::inconclusive("no failure shown");
    };
    match verdict {
        Verdict::Failed(failure)
            if failure
                .exchange
                .as_ref()
                .is_some_and(Exchange::cut_by_transport)
                || failure
                    .steps
                    .iter()
                    .any(|step| step.exchange.cut_by_transport()) =>
        {
            let cut = failure
                .exchange
                .iter()
                .chain(failure.steps.iter().map(|step| &step.exchange))
                .find(|exchange| exchange.cut_by_transport())
                .map(expect::cut);
            cut.unwrap_or_else(|| Verdict::inconclusive("a response was cut by the transport"))
        }
        Verdict::Failed(failure)
            if failure
                .exchange
                .as_ref()
                .is_some_and(Exchange::gave_up_throttled) =>
        {
            failure
                .exchange
                .as_ref()
                .map_or_else(|| Verdict::inconclusive("throttled"), expect::throttled)
        }
        Verdict::Failed(failure)
            if failure.exchange.as_ref().is_none_or(|exchange| {
                exchange.response.is_none() && exchange.never_answered().is_none()
            }) =>
        {
            let seen = failure
                .exchange
                .as_ref()
                .map_or("no exchange".to_string(), |exchange| exchange.summary());
            Verdict::inconclusive(format!(
                "no response shows it (expected {}; {seen})",
                failure.expected
            ))
        }
        verdict => verdict,
    }
}

fn check(ctx: &RuleCtx) -> Verdict {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(ctx))) {
        Ok(Ok(())) => Verdict::Passed,
        Ok(Err(verdict)) => verdict,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Verdict::inconclusive(format!("the harness's check panicked: {message}"))
        }
    }
}
