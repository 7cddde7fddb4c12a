//! How a store's headers read where the contract leaves the words open: whether it gzips an
//! answer a client asked gzip for (in one member or two, RFC 1952 section 2.2), how it codes
//! an answer to a client that asked for no coding (any, RFC 9110 section 12.5.3), how many
//! fields its heads carry, and the values of getPet's deprecation signals (a Deprecation date
//! at or before the removal, a Sunset instant on 5 December 2030 in some time zone and any of
//! the three HTTP-date forms, a successor-version link in any form that resolves to
//! `GET /pets`).

use petstore_vocabulary::contract::{DEPRECATED_SINCE_UNIX, SUNSET_UNIX};

/// How getPet's successor-version link is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkForm {
    /// `</v1/pets>`
    AbsolutePath,
    /// `<http://host/v1/pets>`, from the Host the request named.
    AbsoluteUrl,
    /// `<../pets>`, relative to `/v1/pets/{petId}`.
    Relative,
    /// `</v1/pets?status=available>`: the replacement "with the `status` filter".
    WithStatusFilter,
    /// After another link: `<https://docs.example/deprecations>; rel="deprecation", </v1/pets>`.
    AfterDocsLink,
    /// `</%76%31/pets>`: unreserved characters percent-encoded, the same URI (RFC 3986
    /// section 6.2.2.2).
    PercentEncoded,
    /// Quoted titles holding commas and semicolons, `rel` after them (RFC 8288 section 3), the
    /// successor percent-encoded as `PercentEncoded`'s.
    QuotedTitles,
}

/// The coding of an answer to a client that named none in `Accept-Encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unasked {
    Identity,
    Brotli,
    Zstd,
}

/// A store's header choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderChoices {
    /// Answers are gzipped when the client asks for gzip.
    pub gzip: bool,
    /// A gzipped answer's members (1 or 2: its body cut in two, each part gzipped).
    pub gzip_members: usize,
    /// How answers to a client that asked for no coding are coded.
    pub unasked: Unasked,
    /// Fields of no meaning each answer's head carries besides its own (a gateway's traces).
    pub filler_fields: usize,
    /// The Deprecation date, unix seconds (at or before the Sunset).
    pub deprecated_since: i64,
    /// The Sunset header's value.
    pub sunset: String,
    /// Whether `sunset` is an ISO 8601 day, not an HTTP-date (a recommendation parted from).
    pub sunset_iso: bool,
    pub link: LinkForm,
}

/// Seconds from 00:00 UTC on 5 December 2030 to the removal as a store may name it, with the
/// zone it names it in (seconds east of UTC): that midnight in UTC, UTC+14, UTC+1, UTC-5, noon
/// UTC, the day's last second in UTC-12.
const SUNSET_OFFSETS: [(i64, i64); 6] = [
    (0, 0),
    (-14 * 3600, 14 * 3600),
    (-3600, 3600),
    (5 * 3600, -5 * 3600),
    (12 * 3600, 0),
    (36 * 3600 - 1, -12 * 3600),
];

/// How many forms a Sunset is drawn in: RFC 9110's three HTTP-date forms, and the ISO 8601
/// day a store may write by mistake (RFC 8594 asks for an HTTP-date; the contract names only
/// the day), with the time and zone or without.
const SUNSET_FORMS: usize = 5;

impl HeaderChoices {
    pub fn reference() -> HeaderChoices {
        HeaderChoices {
            gzip: false,
            gzip_members: 1,
            unasked: Unasked::Identity,
            filler_fields: 0,
            deprecated_since: DEPRECATED_SINCE_UNIX as i64,
            sunset: http_date(SUNSET_UNIX as i64, 0),
            sunset_iso: false,
            link: LinkForm::AbsolutePath,
        }
    }

    pub fn draw(seed: u64) -> HeaderChoices {
        let mut state = seed ^ 0x6865_6164_6572_7321;
        let mut next = |n: usize| {
            state = petstore_vocabulary::seed::splitmix64(state);
            (state % n as u64) as usize
        };
        let (offset, zone) = SUNSET_OFFSETS[next(SUNSET_OFFSETS.len())];
        let sunset = SUNSET_UNIX as i64 + offset;
        let form = next(SUNSET_FORMS);
        // Never after the Sunset (RFC 9745 section 3 recommends so).
        let deprecated_since = [DEPRECATED_SINCE_UNIX as i64, 0, sunset - 86_400, sunset][next(4)];
        let link = [
            LinkForm::AbsolutePath,
            LinkForm::AbsoluteUrl,
            LinkForm::Relative,
            LinkForm::WithStatusFilter,
            LinkForm::AfterDocsLink,
            LinkForm::PercentEncoded,
            LinkForm::QuotedTitles,
        ][next(7)];
        HeaderChoices {
            gzip: next(2) == 0,
            gzip_members: 1 + next(2),
            unasked: [Unasked::Identity, Unasked::Brotli, Unasked::Zstd][next(3)],
            filler_fields: [0, 120][next(2)],
            deprecated_since,
            sunset: match form {
                3 => iso_day(sunset, zone, true),
                4 => iso_day(sunset, zone, false),
                _ => http_date(sunset, form),
            },
            sunset_iso: form >= 3,
            link,
        }
    }

    /// The Link header's value; `host` is the Host the request named.
    pub fn link_value(&self, host: Option<&str>) -> String {
        let successor = |target: &str| format!("<{target}>; rel=\"successor-version\"");
        match self.link {
            LinkForm::AbsolutePath => successor("/v1/pets"),
            LinkForm::AbsoluteUrl => match host {
                Some(host) => successor(&format!("http://{host}/v1/pets")),
                None => successor("/v1/pets"),
            },
            LinkForm::Relative => successor("../pets"),
            LinkForm::WithStatusFilter => successor("/v1/pets?status=available"),
            LinkForm::AfterDocsLink => format!(
                "<https://docs.example/deprecations>; rel=\"deprecation\", {}",
                successor("/v1/pets")
            ),
            LinkForm::PercentEncoded => successor("/%76%31/pets"),
            LinkForm::QuotedTitles => concat!(
                r#"<https://docs.example/deprecations>; title="getPet, then listPets; see \"pets\""; rel=deprecation, "#,
                r#"</%76%31/pets>;title="pets, by status";rel="successor-version""#
            )
            .to_string(),
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "gzip when asked: {} ({} members); unasked coding: {:?}; filler fields: {}; Deprecation: @{}; Sunset: {}; successor link: {:?}",
            self.gzip,
            self.gzip_members,
            self.unasked,
            self.filler_fields,
            self.deprecated_since,
            self.sunset,
            self.link
        )
    }
}

/// `secs` as an HTTP-date in form 0 (IMF-fixdate), 1 (RFC 850) or 2 (asctime), RFC 9110
/// section 5.6.7.
fn http_date(secs: i64, form: usize) -> String {
    let (imf, parts) = imf_fixdate(secs);
    let Some([weekday, day, month, year, time]) = parts else {
        return imf;
    };
    let (weekday, day, month, year, time) = (&*weekday, &*day, &*month, &*year, &*time);
    let long = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ]
    .into_iter()
    .find(|long| long.starts_with(weekday))
    .unwrap_or(weekday);
    match form {
        1 => format!("{long}, {day}-{month}-{} {time} GMT", &year[2..]),
        2 => format!(
            "{weekday} {month} {:>2} {time} {year}",
            day.trim_start_matches('0')
        ),
        _ => imf,
    }
}

/// `secs` as IMF-fixdate (`Thu, 05 Dec 2030 00:00:00 GMT`), and its parts: weekday, day,
/// month, year and time.
fn imf_fixdate(secs: i64) -> (String, Option<[String; 5]>) {
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs.max(0) as u64);
    let imf = httpdate::fmt_http_date(when);
    let parts: Vec<String> = imf
        .split([' ', ','])
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let parts = match <[String; 6]>::try_from(parts) {
        Ok([weekday, day, month, year, time, _]) => Some([weekday, day, month, year, time]),
        Err(_) => None,
    };
    (imf, parts)
}

/// `secs` as the ISO 8601 day it falls on in the zone `east` seconds east of UTC, with the
/// time and the zone (`2030-12-05T00:00:00-05:00`, `Z` for UTC) where `timed`.
fn iso_day(secs: i64, east: i64, timed: bool) -> String {
    let (imf, parts) = imf_fixdate(secs + east);
    let Some([_, day, month, year, time]) = parts else {
        return imf;
    };
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| *m == month).unwrap_or(0) + 1;
    let date = format!("{year}-{month:02}-{day}");
    if !timed {
        return date;
    }
    let zone = match east {
        0 => "Z".to_string(),
        _ => format!(
            "{}{:02}:{:02}",
            if east < 0 { '-' } else { '+' },
            east.abs() / 3600,
            east.abs() % 3600 / 60
        ),
    };
    format!("{date}T{time}{zone}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_an_http_date_of_the_same_instant() {
        for (offset, _) in SUNSET_OFFSETS {
            let secs = SUNSET_UNIX as i64 + offset;
            for form in 0..3 {
                let text = http_date(secs, form);
                let parsed =
                    httpdate::parse_http_date(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                let back = parsed
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs();
                assert_eq!(back as i64, secs, "{text}");
            }
        }
        assert_eq!(http_date(SUNSET_UNIX as i64, 2), "Thu Dec  5 00:00:00 2030");
    }

    #[test]
    fn a_drawn_deprecation_is_never_after_its_sunset() {
        for seed in 0..200 {
            let choices = HeaderChoices::draw(seed);
            if choices.sunset_iso {
                continue; // the ISO day's own test reads it
            }
            let sunset = httpdate::parse_http_date(&choices.sunset).unwrap();
            let sunset = sunset
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            assert!(choices.deprecated_since <= sunset as i64, "{choices:?}");
        }
    }

    /// Each removal instant, as an ISO 8601 day in its own zone, names 5 December 2030, and
    /// with its time and zone the same instant.
    #[test]
    fn every_iso_day_is_the_removal_day_in_its_zone() {
        let expected = [
            "2030-12-05T00:00:00Z",
            "2030-12-05T00:00:00+14:00",
            "2030-12-05T00:00:00+01:00",
            "2030-12-05T00:00:00-05:00",
            "2030-12-05T12:00:00Z",
            "2030-12-05T23:59:59-12:00",
        ];
        for ((offset, zone), expected) in SUNSET_OFFSETS.into_iter().zip(expected) {
            let secs = SUNSET_UNIX as i64 + offset;
            assert_eq!(iso_day(secs, zone, true), expected);
            assert_eq!(iso_day(secs, zone, false), "2030-12-05");
        }
        assert!((0..200).any(|seed| HeaderChoices::draw(seed).sunset_iso));
    }
}
