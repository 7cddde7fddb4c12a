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

/// getPet's answers for the run's pet and an unknown id, both sent at once.
fn get_pet_answers(ctx: &RuleCtx) -> Result<Vec<Exchange>, Verdict> {
    let pet = ctx.fixtures().existing_pet(ctx)?;
    let existing = expect::pet_id(&pet).unwrap_or_default();
    let unknown = get_pet::unknown_ids(ctx)[0].0;
    let specs = [existing, unknown].map(|id| RequestSpec::get(format!("/pets/{id}")));
    let answers = ctx.send_all(&specs);
    for exchange in &answers {
        ctx.case_done();
        expect::response(exchange)?;
    }
    Ok(answers)
}

/// The stated removal, "5 December 2030", as the instants it may name: the day begins at
/// UTC+14 and ends at UTC-12 (the contract names no time zone).
const REMOVAL_DAY: std::ops::Range<i64> =
    SUNSET_UNIX as i64 - 14 * 3600..SUNSET_UNIX as i64 + 36 * 3600;

/// A date for a failure's words: an HTTP-date where one can be written (years up to 9999),
/// else the seconds themselves (a Deprecation in milliseconds is tens of thousands of years
/// ahead, past what an HTTP-date holds).
fn date(secs: i64) -> String {
    const YEAR_10000: i64 = 253_402_300_800;
    if (0..YEAR_10000).contains(&secs) {
        httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs as u64))
    } else {
        format!("@{secs} (unix seconds)")
    }
}

/// The Deprecation date, in unix seconds: the RFC 9745 form, or a legacy HTTP-date.
fn deprecation_date(exchange: &Exchange) -> Option<i64> {
    exchange.header("deprecation").and_then(|value| {
        parse_deprecation(value).or_else(|| {
            httpdate::parse_http_date(value.trim())
                .ok()
                .map(unix_seconds)
        })
    })
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
        let Some(value) = exchange.header("sunset") else {
            return Err(Verdict::failed(
                "a Sunset header (RFC 8594) naming the removal date",
                format!("no Sunset header on {}", exchange.summary()),
                &exchange,
            ));
        };
        if !matches!(sunset_of(value), Sunset::HttpDate(_)) {
            return Err(Verdict::failed(
                "a Sunset header (RFC 8594) naming the removal date as an HTTP-date",
                format!("Sunset: {value} (not an HTTP-date, RFC 8594 section 3)"),
                &exchange,
            ));
        }
    }
    Ok(())
}

/// What a Sunset value names: an instant as RFC 8594 spells it (an HTTP-date, any of RFC
/// 9110's three forms), a day as ISO 8601 spells it (`2030-12-05`, a time after it or not),
/// which stores send by mistake, or nothing either reads.
enum Sunset {
    HttpDate(std::time::SystemTime),
    /// The Unix day (days since 1970-01-01) of the date as written, and the instant (Unix
    /// seconds) where a time and a zone follow it (`T05:00:00-05:00`, `T00:00:00Z`).
    Iso {
        day: i64,
        instant: Option<i64>,
    },
    Unreadable,
}

impl Sunset {
    /// The latest instant the value may name, Unix seconds: a day without a time and a zone
    /// may be that day in any zone, so up to its last second in UTC-12 (a comparison with it
    /// fails only where every reading of the day does).
    fn latest(&self) -> Option<i64> {
        match *self {
            Sunset::HttpDate(when) => Some(unix_seconds(when)),
            Sunset::Iso {
                instant: Some(instant),
                ..
            } => Some(instant),
            Sunset::Iso { day, instant: None } => Some(day * 86_400 + 36 * 3_600 - 1),
            Sunset::Unreadable => None,
        }
    }
}

fn sunset_of(value: &str) -> Sunset {
    let value = value.trim();
    if let Ok(when) = httpdate::parse_http_date(value) {
        return Sunset::HttpDate(when);
    }
    let date = value.get(..10).unwrap_or_default();
    let rest = value.get(10..).unwrap_or_default();
    let parts: Vec<&str> = date.split('-').collect();
    let number = |text: &str, digits: usize| {
        (text.len() == digits && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<i64>().ok())
            .flatten()
    };
    match parts[..] {
        [year, month, day] if rest.is_empty() || rest.starts_with(['T', 't', ' ']) => {
            match (number(year, 4), number(month, 2), number(day, 2)) {
                (Some(y), Some(m @ 1..=12), Some(d @ 1..=31)) => {
                    let day = unix_day(y, m, d);
                    Sunset::Iso {
                        day,
                        instant: iso_time(rest).map(|secs| day * 86_400 + secs),
                    }
                }
                _ => Sunset::Unreadable,
            }
        }
        _ => Sunset::Unreadable,
    }
}

/// Seconds from the date's midnight in UTC to the instant an ISO 8601 time and zone after it
/// name (`T05:00:00-05:00` is 10 hours, `T00:00:00Z` none; a fraction of a second is dropped),
/// if `rest` is exactly that.
fn iso_time(rest: &str) -> Option<i64> {
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let two = |text: &str| {
        (text.len() == 2 && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<i64>().ok())
            .flatten()
    };
    let (h, m, s) = (
        two(rest.get(0..2)?)?,
        two(rest.get(3..5)?)?,
        two(rest.get(6..8)?)?,
    );
    if rest.get(2..3)? != ":" || rest.get(5..6)? != ":" || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut zone = rest.get(8..)?;
    if let Some(fraction) = zone.strip_prefix('.') {
        zone = fraction.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let east = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = match zone.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            if zone.len() != 6 || zone.get(3..4)? != ":" {
                return None;
            }
            sign * (two(zone.get(1..3)?)? * 3_600 + two(zone.get(4..6)?)? * 60)
        }
    };
    Some(h * 3_600 + m * 60 + s - east)
}

/// Days from 1970-01-01 to the civil date `year-month-day` (proleptic Gregorian).
fn unix_day(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let of_era = year - era * 400;
    let of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let of_era_day = of_era * 365 + of_era / 4 - of_era / 100 + of_year;
    era * 146_097 + of_era_day - 719_468
}

fn unix_seconds(time: std::time::SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs() as i64,
        Err(before) => -(before.duration().as_secs() as i64),
    }
}

/// The Sunset header, where there is one, names 5 December 2030: as an HTTP-date (any of the
/// three forms of RFC 9110) in some time zone (the contract names none), or as an ISO 8601
/// day. The contract fixes the day, RFC 8594 the form: a Sunset in another form is
/// deprecation/get-pet/sunset-header's finding, and one that names no date either way states
/// none that could contradict the contract's.
pub fn sunset_date(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        let Some(value) = exchange.header("sunset") else {
            continue;
        };
        let when = match sunset_of(value) {
            Sunset::HttpDate(when) => when,
            Sunset::Iso { day, .. } if day == SUNSET_UNIX as i64 / 86_400 => continue,
            Sunset::Iso { .. } => {
                return Err(Verdict::failed(
                    "Sunset on 5 December 2030 (the stated removal date)",
                    format!("Sunset: {value} (another day)"),
                    &exchange,
                ));
            }
            Sunset::Unreadable => continue,
        };
        if !REMOVAL_DAY.contains(&unix_seconds(when)) {
            return Err(Verdict::failed(
                "Sunset on 5 December 2030 (the stated removal date, in some time zone)",
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

/// RFC 9745 section 3: the Sunset date is not earlier than the Deprecation date, each read
/// as seconds (a Deprecation in milliseconds is after any Sunset; a Sunset that names an ISO
/// 8601 day, at the instant its time and zone name, or else at the day's latest reading).
pub fn sunset_after_deprecation(ctx: &RuleCtx) -> Checked {
    let mut compared = false;
    for exchange in get_pet_answers(ctx)? {
        let deprecation = deprecation_date(&exchange);
        let sunset = exchange
            .header("sunset")
            .and_then(|value| sunset_of(value).latest());
        let (Some(deprecation), Some(sunset)) = (deprecation, sunset) else {
            continue;
        };
        compared = true;
        if sunset < deprecation {
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

/// A Deprecation date that is there is not after the stated removal: getPet "is deprecated"
/// while it exists, so a date past 5 December 2030 (in any time zone) says otherwise. No
/// Deprecation date states nothing (whether one is sent is deprecation-header's business).
pub fn before_removal(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        let Some(deprecation) = deprecation_date(&exchange) else {
            continue;
        };
        if deprecation >= REMOVAL_DAY.end {
            return Err(Verdict::failed(
                "a Deprecation date not after the removal on 5 December 2030 (getPet is deprecated while it exists)",
                format!(
                    "Deprecation: {} ({})",
                    exchange.header("deprecation").unwrap_or(""),
                    date(deprecation)
                ),
                &exchange,
            ));
        }
    }
    Ok(())
}

/// The successor-version links of an answer.
fn successor_targets(exchange: &Exchange) -> Vec<&str> {
    exchange
        .headers("link")
        .into_iter()
        .flat_map(|value| super::links::targets(value, "successor-version"))
        .collect()
}

/// Each getPet answer carries a `successor-version` link (where it points is
/// [`successor_is_list_pets`]'s business).
pub fn successor_link(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        if successor_targets(&exchange).is_empty() {
            return Err(Verdict::failed(
                "Link: <…/pets>; rel=\"successor-version\"",
                format!("no successor-version link on {}", exchange.summary()),
                &exchange,
            ));
        }
    }
    Ok(())
}

/// Whether `target`, resolved against `request_url` (RFC 3986 section 5), is listPets under
/// `base_url`: the same path on the request's own origin, or a path ending in the base's
/// `/v1/pets` on another (a gateway's public address), each compared after RFC 3986's
/// normalisation (`/%7Estage/v1/pets` is `/~stage/v1/pets`). A query (the status filter) may
/// follow.
pub fn resolves_to_list_pets(target: &str, request_url: &str, base_url: &str) -> Option<String> {
    use super::links::normalised;
    let request = normalised(&reqwest::Url::parse(request_url).ok()?);
    let resolved = normalised(&request.join(target).ok()?);
    let base = normalised(&reqwest::Url::parse(base_url).ok()?);
    let list_pets = format!("{}/pets", base.path().trim_end_matches('/'));
    let same_origin = resolved.origin() == request.origin();
    let version_pets = format!(
        "/{}/pets",
        base.path()
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("v1")
    );
    let ok = if same_origin {
        resolved.path() == list_pets
    } else {
        resolved.path().ends_with(&version_pets)
    };
    (!ok).then(|| resolved.to_string())
}

/// A `successor-version` link that is there resolves, against the URL of the request it
/// answers, to `GET /pets`, the stated replacement (no link states nothing).
pub fn successor_is_list_pets(ctx: &RuleCtx) -> Checked {
    for exchange in get_pet_answers(ctx)? {
        for target in successor_targets(&exchange) {
            let Some(resolved) =
                resolves_to_list_pets(target, &exchange.request.url, ctx.base_url())
            else {
                continue;
            };
            return Err(Verdict::failed(
                "a successor-version link that resolves to GET /pets (the stated replacement)",
                format!(
                    "<{target}> resolves, against {}, to {resolved}",
                    exchange.request.url
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
            let pet = json!({"name": ctx.pet_name("not-deprecated"), "categoryId": ctx.categories().accepted(1)});
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
    fn sunset_values_name_an_instant_a_day_or_nothing() {
        let removal = SUNSET_UNIX as i64 / 86_400;
        assert!(matches!(
            sunset_of("Thu, 05 Dec 2030 00:00:00 GMT"),
            Sunset::HttpDate(_)
        ));
        let day = |value: &str| match sunset_of(value) {
            Sunset::Iso { day, .. } => Some(day),
            _ => None,
        };
        assert_eq!(day("2030-12-05"), Some(removal));
        assert_eq!(day("2030-12-05T23:59:59Z"), Some(removal));
        assert_eq!(day("2030-12-06"), Some(removal + 1));
        assert_eq!(day("1970-01-01"), Some(0));
        assert_eq!(day("2000-03-01"), Some(11_017));
        // The instant, where a time and a zone name one; else the day's latest reading.
        let latest = |value: &str| sunset_of(value).latest();
        let midnight = removal * 86_400;
        assert_eq!(latest("2030-12-05T00:00:00Z"), Some(midnight));
        assert_eq!(
            latest("2030-12-05T00:00:00-05:00"),
            Some(midnight + 5 * 3_600)
        );
        assert_eq!(
            latest("2030-12-05T00:00:00.250+14:00"),
            Some(midnight - 14 * 3_600)
        );
        assert_eq!(
            latest("2030-12-05T23:59:59-12:00"),
            Some(midnight + 36 * 3_600 - 1)
        );
        for day_only in [
            "2030-12-05",
            "2030-12-05T00:00",
            "2030-12-05T00:00:00",
            "2030-12-05T00:00:00+5",
        ] {
            assert_eq!(
                latest(day_only),
                Some(midnight + 36 * 3_600 - 1),
                "{day_only}"
            );
        }
        for unreadable in [
            "",
            "soon",
            "2030-13-05",
            "2030-12-05x",
            "20301205",
            "1922659200",
        ] {
            assert!(
                matches!(sunset_of(unreadable), Sunset::Unreadable),
                "{unreadable}"
            );
        }
    }

    #[test]
    fn deprecation_values() {
        assert_eq!(parse_deprecation("@1735689600"), Some(1_735_689_600));
        assert_eq!(parse_deprecation(" @-5 "), Some(-5));
        assert_eq!(parse_deprecation("true"), None);
        assert_eq!(parse_deprecation("@"), None);
        assert_eq!(parse_deprecation("@1.5"), None);
    }

    #[test]
    fn successor_links_resolve_against_the_request() {
        let base = "http://h:1/v1";
        let request = "http://h:1/v1/pets/7";
        for good in [
            "/v1/pets",
            "../pets",
            "http://h:1/v1/pets?status=available",
            "https://public.example/shop/v1/pets",
        ] {
            assert_eq!(resolves_to_list_pets(good, request, base), None, "{good}");
        }
        for bad in ["pets", "/pets", "/v1/pets/", "http://h:1/v2/pets", "."] {
            assert!(resolves_to_list_pets(bad, request, base).is_some(), "{bad}");
        }
        // The same URI once normalised (RFC 3986 section 6.2.2).
        let (base, request) = ("http://h:1/~stage/v1", "http://h:1/~stage/v1/pets/7");
        for good in [
            "/%7Estage/v1/pets",
            "/%7estage/%76%31/pets",
            "HTTP://H:1/~stage/v1/pets",
            "http://h/~stage/v1/x/../pets",
            "../%70ets",
        ] {
            assert_eq!(resolves_to_list_pets(good, request, base), None, "{good}");
        }
        for bad in [
            "/%7Estage/v1/pets%2F",
            "/stage/v1/pets",
            "/%257Estage/v1/pets",
        ] {
            assert!(resolves_to_list_pets(bad, request, base).is_some(), "{bad}");
        }
    }

    #[test]
    fn dates_past_an_http_date_are_written_as_seconds() {
        assert_eq!(date(SUNSET_UNIX as i64), "Thu, 05 Dec 2030 00:00:00 GMT");
        assert_eq!(date(1_735_689_600_000), "@1735689600000 (unix seconds)");
        assert!(date(-5).starts_with("@-5"));
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
