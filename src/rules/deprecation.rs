//! Versioning: getPet is deprecated and removed on 5 December 2030; nothing else is deprecated.
//!
//! The header checks look at both answers getPet gives (200 for an existing pet, 404 for an
//! unknown one): a deprecated operation is deprecated whatever it answers.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use super::get_pet;
use crate::contract::{Operation, SUNSET_UNIX};
use crate::engine::ctx::RuleCtx;
use crate::engine::expect;
use crate::generation::request::{Body, RequestSpec};
use crate::outcome::{Checked, Exchange, Verdict};

fn get_pet_answers(ctx: &RuleCtx) -> Result<Vec<Exchange>, Verdict> {
    let pet = ctx.run.fixtures.existing_pet(ctx)?;
    let existing = expect::pet_id(&pet).unwrap_or_default();
    let unknown = get_pet::unknown_ids(ctx)[0];
    let mut answers = Vec::new();
    for id in [existing, unknown] {
        let exchange = ctx.send(&RequestSpec::get(format!("/pets/{id}")));
        ctx.case_done();
        expect::response(&exchange)?;
        answers.push(exchange);
    }
    Ok(answers)
}

/// Each getPet answer carries a Deprecation header (in any form).
pub fn signalled(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        if exchange.header("deprecation").is_none() {
            return Err(Verdict::failed(
                "a Deprecation header (RFC 9745) on getPet's answer",
                format!("no Deprecation header on {}", exchange.summary()),
                &exchange,
            ));
        }
    }
    Ok(())
}

/// RFC 9745: `Deprecation: @<unix seconds>` (a Structured Field Date).
pub fn parse_deprecation(value: &str) -> Option<i64> {
    let digits = value.trim().strip_prefix('@')?;
    let unsigned = digits.strip_prefix('-').unwrap_or(digits);
    if unsigned.is_empty() || unsigned.len() > 15 || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

pub fn syntax(ctx: &RuleCtx) -> Checked {
    let mut seen = false;
    for exchange in get_pet_answers(ctx)? {
        let Some(value) = exchange.header("deprecation") else {
            continue;
        };
        seen = true;
        if parse_deprecation(value).is_none() {
            let kind = if value.trim().eq_ignore_ascii_case("true")
                || httpdate::parse_http_date(value).is_ok()
            {
                "a legacy form: deprecation is signalled, but not as RFC 9745 says"
            } else {
                "not a Structured Field Date"
            };
            return Err(Verdict::failed(
                "Deprecation: @<unix seconds> (RFC 9745)",
                format!("Deprecation: {value} ({kind})"),
                &exchange,
            ));
        }
    }
    if !seen {
        return Err(Verdict::skipped("no Deprecation header to check"));
    }
    Ok(())
}

pub fn sunset_present(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        if exchange.header("sunset").is_none() {
            return Err(Verdict::failed(
                "a Sunset header (RFC 8594) naming the removal date",
                format!("no Sunset header on {}", exchange.summary()),
                &exchange,
            ));
        }
    }
    Ok(())
}

fn unix_seconds(time: std::time::SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs() as i64,
        Err(before) => -(before.duration().as_secs() as i64),
    }
}

/// The Sunset header, where there is one, parses as an HTTP-date (any of the three forms of
/// RFC 9110) on 5 December 2030 (UTC).
pub fn sunset_date(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        let Some(value) = exchange.header("sunset") else {
            continue;
        };
        let Ok(when) = httpdate::parse_http_date(value.trim()) else {
            return Err(Verdict::failed(
                "Sunset: an HTTP-date on 5 December 2030",
                format!("Sunset: {value} (not an HTTP-date)"),
                &exchange,
            ));
        };
        let seconds = unix_seconds(when);
        let day = SUNSET_UNIX as i64..SUNSET_UNIX as i64 + 86_400;
        if !day.contains(&seconds) {
            return Err(Verdict::failed(
                "Sunset on 5 December 2030 (the stated removal date)",
                format!("Sunset: {value} ({})", httpdate::fmt_http_date(when)),
                &exchange,
            ));
        }
    }
    // No Sunset header states no date, so none contradicts the contract's: the rule holds (a
    // skip would leave a conforming store's run undetermined). Whether one is sent at all is
    // deprecation/get-pet/sunset-header's business.
    Ok(())
}

/// RFC 9745 section 3: the Sunset date is not earlier than the Deprecation date.
pub fn sunset_after_deprecation(ctx: &RuleCtx) -> Checked {
    let mut compared = false;
    for exchange in get_pet_answers(ctx)? {
        let deprecation = exchange.header("deprecation").and_then(|value| {
            parse_deprecation(value).or_else(|| {
                httpdate::parse_http_date(value.trim())
                    .ok()
                    .map(unix_seconds)
            })
        });
        let sunset = exchange
            .header("sunset")
            .and_then(|value| httpdate::parse_http_date(value.trim()).ok())
            .map(unix_seconds);
        let (Some(deprecation), Some(sunset)) = (deprecation, sunset) else {
            continue;
        };
        compared = true;
        if sunset < deprecation {
            let date = |secs: i64| {
                httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs.max(0) as u64))
            };
            return Err(Verdict::failed(
                "Sunset not earlier than Deprecation",
                format!(
                    "Deprecation {} is after Sunset {}",
                    date(deprecation),
                    date(sunset)
                ),
                &exchange,
            ));
        }
    }
    if !compared {
        return Err(Verdict::skipped(
            "no Deprecation and Sunset dates to compare",
        ));
    }
    Ok(())
}

/// Links of a `Link` header value whose `rel` includes `relation`; returns their targets.
pub fn link_targets<'v>(value: &'v str, relation: &str) -> Vec<&'v str> {
    value
        .split(',')
        .filter_map(|link| {
            let mut parts = link.split(';');
            let target = parts.next()?.trim().strip_prefix('<')?.strip_suffix('>')?;
            let has_rel = parts.any(|param| {
                let Some((name, rel)) = param.split_once('=') else {
                    return false;
                };
                name.trim().eq_ignore_ascii_case("rel")
                    && rel
                        .trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|r| r.eq_ignore_ascii_case(relation))
            });
            has_rel.then_some(target)
        })
        .collect()
}

/// A `successor-version` link to `GET /pets`, the stated replacement.
pub fn successor_link(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        let targets: Vec<&str> = exchange
            .headers("link")
            .into_iter()
            .flat_map(|value| link_targets(value, "successor-version"))
            .collect();
        let to_pets = targets.iter().any(|target| {
            let path = target.split(['?', '#']).next().unwrap_or("");
            path.trim_end_matches('/').ends_with("/pets")
        });
        if !to_pets {
            return Err(Verdict::failed(
                "Link: <…/pets>; rel=\"successor-version\"",
                format!(
                    "successor-version targets {targets:?} on {}",
                    exchange.summary()
                ),
                &exchange,
            ));
        }
    }
    Ok(())
}

/// Only getPet is deprecated: other operations carry no Deprecation header.
pub fn not_deprecated(ctx: &RuleCtx) -> Checked {
    let spec = match ctx.rule.operation {
        Operation::CreatePet => {
            let pet = json!({"name": ctx.pet_name("not-deprecated"), "categoryId": ctx.run.categories.accepted(1)});
            RequestSpec::post("/pets", Body::Json(pet))
        }
        _ => RequestSpec::get("/pets"),
    };
    let exchange = ctx.send(&spec);
    ctx.case_done();
    expect::response(&exchange)?;
    if let Some(value) = exchange.header("deprecation") {
        return Err(Verdict::failed(
            format!("no Deprecation header on {}", ctx.rule.operation.name()),
            format!("Deprecation: {value}"),
            &exchange,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deprecation_values() {
        assert_eq!(parse_deprecation("@1735689600"), Some(1_735_689_600));
        assert_eq!(parse_deprecation(" @-5 "), Some(-5));
        assert_eq!(parse_deprecation("true"), None);
        assert_eq!(parse_deprecation("@"), None);
        assert_eq!(parse_deprecation("@1.5"), None);
    }

    #[test]
    fn link_header_values() {
        let value = r#"</v1/pets>; rel="successor-version", <https://x/docs>; rel=help"#;
        assert_eq!(link_targets(value, "successor-version"), vec!["/v1/pets"]);
        assert_eq!(
            link_targets("<a>; rel=\"help successor-version\"", "successor-version"),
            vec!["a"]
        );
        assert!(link_targets("garbage", "successor-version").is_empty());
    }

    #[test]
    fn all_three_http_date_forms_parse() {
        for form in [
            "Thu, 05 Dec 2030 00:00:00 GMT",
            "Thursday, 05-Dec-30 00:00:00 GMT",
            "Thu Dec  5 00:00:00 2030",
        ] {
            let when = httpdate::parse_http_date(form).unwrap_or_else(|e| panic!("{form}: {e}"));
            assert_eq!(unix_seconds(when), SUNSET_UNIX as i64, "{form}");
        }
    }
}
