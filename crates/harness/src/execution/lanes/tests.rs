//! The level's growth, cuts and caps, on lanes no request is sent on.

use super::*;

pub(super) fn lanes(ceiling: usize) -> Lanes {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Lanes::new(ceiling, |count| {
        count
            .install(reqwest::Client::builder().no_proxy())
            .build()
            .expect("a plain client builds")
    })
}

/// `n` lanes taken at once.
pub(super) async fn checkouts(lanes: &Lanes, n: usize) -> Vec<Checkout<'_>> {
    futures_util::future::join_all((0..n).map(|_| lanes.checkout(Priority::Chain)))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test]
async fn the_level_grows_per_answer_then_halves_and_grows_by_one_per_round() {
    let lanes = lanes(5 * START / 2);
    assert_eq!(lanes.level(), START);
    let mut held = Vec::new();
    for _ in 0..START {
        held.push(lanes.checkout(Priority::Chain).await.unwrap());
    }
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    let top = lanes.level();
    assert!(
        top > START && top <= 2 * START,
        "slow start, within twice the lanes proven: {top}"
    );
    lanes.overloaded(Overload::TimedOut);
    assert_eq!(lanes.level(), top / 2);
    lanes.overloaded(Overload::TimedOut);
    assert_eq!(lanes.level(), top / 2, "one cut per overload");
    let level = lanes.level();
    let lane = held[0].lane();
    for _ in 0..level - 1 {
        lanes.answered(lane, 50, true);
    }
    assert_eq!(
        lanes.level(),
        level,
        "additive: one step per level's answers"
    );
    lanes.answered(lane, 50, true);
    assert_eq!(lanes.level(), level + 1);
    for _ in 0..100_000 {
        lanes.answered(lane, 50, true);
    }
    assert_eq!(lanes.level(), 2 * START, "within twice the lanes proven");
    drop(held);
    assert!(lanes.live() <= 2 * START);
    assert_eq!(lanes.tally().concurrency_reached, 2 * START as u64);
}

#[tokio::test]
async fn an_answer_that_waited_in_the_servers_queue_does_not_grow_the_level() {
    let lanes = lanes(16 * START);
    let mut held = checkouts(&lanes, START).await;
    // Slow start: one more per answer as fast as the fastest, within twice the lanes proven
    // (or START past them before any overload): answered one by one, 8 lanes take it to 16.
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    assert_eq!(
        lanes.level(),
        2 * START,
        "answers as fast as the fastest grow it"
    );
    let level = lanes.level();
    held.extend(checkouts(&lanes, level - START).await);
    for checkout in &held[START..] {
        lanes.answered(checkout.lane(), 50 + 101 + 50, true);
    }
    assert_eq!(lanes.level(), level, "queued answers do not grow it");
    lanes.answered(held[0].lane(), 90, true);
    assert_eq!(
        lanes.level(),
        level + 1,
        "within twice the fastest, it grows"
    );
    lanes.answered(held[1].lane(), 140, true);
    assert_eq!(
        lanes.level(),
        level + 2,
        "within the fastest and 100 ms, it grows"
    );
}

/// Before a first overload the level may run [`START`] lanes past those proven, as it does at
/// its start (a preflight of 4 answers grows it); after one, [`PROBES`] past them.
#[tokio::test]
async fn past_the_proven_lanes_the_level_runs_start_ahead_then_probes_after_an_overload() {
    let lanes = lanes(16 * START);
    let held = checkouts(&lanes, 2).await;
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    assert_eq!(lanes.level(), 2 + START, "two answers grow it past START");
    lanes.overloaded(Overload::Throttled);
    for _ in 0..200 {
        for checkout in &held {
            lanes.answered(checkout.lane(), 50, true);
        }
    }
    assert_eq!(
        lanes.level(),
        2 + PROBES,
        "after an overload, it grows back to PROBES past the proven lanes only"
    );
}

/// Answers every lane the level allows, `rounds` times over, each after `ms` (`served`: a
/// 2xx); returns the level reached.
async fn grow(lanes: &Lanes, rounds: usize, ms: u64, served: bool) -> usize {
    for _ in 0..rounds {
        let held = checkouts(lanes, lanes.level()).await;
        for checkout in &held {
            lanes.answered(checkout.lane(), ms, served);
        }
    }
    lanes.level()
}

#[tokio::test]
async fn against_a_near_target_the_level_stays_at_the_near_level() {
    let lanes = lanes(4 * NEAR_LEVEL);
    assert_eq!(
        grow(&lanes, 8, 0, true).await,
        NEAR_LEVEL,
        "grown from the start up to the near level, not past it"
    );
    assert_eq!(
        grow(&lanes, 2, 50, true).await,
        NEAR_LEVEL,
        "the fastest answer says the target is near"
    );
    assert!(lanes.live() <= NEAR_LEVEL, "no lane past it");
    // A refusal at a gateway's edge, however fast, says nothing of how far the store is.
    let far = super::tests::lanes(4 * NEAR_LEVEL);
    assert!(grow(&far, 8, 0, false).await > NEAR_LEVEL);
    assert_eq!(far.fastest_answer(), std::time::Duration::MAX);
}

/// An answer whose time held a wait for a connection (which the level leaves out of it) says
/// nothing of how near the target is: what is left may be far less than a round trip, and
/// taken as the fastest answer it held a target 50 ms away to the near level for a whole run.
#[tokio::test]
async fn an_answer_that_waited_for_a_connection_says_nothing_of_nearness() {
    let lanes = lanes(4 * NEAR_LEVEL);
    let held = checkouts(&lanes, 1).await;
    let lane = held[0].lane();
    lane.shared
        .graced_ms
        .store(225, std::sync::atomic::Ordering::Relaxed);
    lanes.answered(lane, 229, true);
    assert_eq!(lanes.fastest_answer(), std::time::Duration::MAX);
    lanes.answered(lane, 60, true);
    assert_eq!(lanes.fastest_answer(), std::time::Duration::from_millis(60));
}

#[tokio::test]
async fn lanes_never_outnumber_the_level_and_a_stall_caps_it_at_the_proven_lanes() {
    let lanes = lanes(64);
    let start = lanes.level();
    assert_eq!(start, START.min(64), "the ceiling bounds the start");
    let mut held = Vec::new();
    for _ in 0..start {
        held.push(lanes.checkout(Priority::Chain).await.unwrap());
    }
    assert_eq!(lanes.live(), start);
    assert!(lanes.permits.try_acquire().is_err(), "the level is full");
    let proven = start / 2;
    for checkout in &held[..proven] {
        lanes.answered(checkout.lane(), 50, true);
    }
    let mut stalled = held.pop().unwrap();
    lanes.overloaded(Overload::StalledConnect);
    stalled.discard();
    drop(stalled);
    let level = lanes.level();
    assert!(
        level <= proven,
        "halved, and capped at the lanes proven: {level}"
    );
    drop(held);
    assert_eq!(lanes.live(), level, "lanes past the level are closed");
    assert_eq!(lanes.permits.available_permits(), level);
    let lane = lanes.checkout(Priority::Chain).await.unwrap();
    for _ in 0..1000 {
        lanes.answered(lane.lane(), 50, true);
    }
    drop(lane);
    assert_eq!(
        lanes.level(),
        proven,
        "capped at the lanes proven at the stall, for a while"
    );
    let many = lanes.checkout_many(100, Reuse::Any).await.unwrap();
    assert_eq!(
        many.len(),
        proven,
        "after an overload, a burst takes at most the level"
    );
    assert!(lanes.live() <= proven);
    drop(many);
    let fresh = super::tests::lanes(64);
    let many = fresh.checkout_many(100, Reuse::Any).await.unwrap();
    assert_eq!(
        many.len(),
        64,
        "in slow start, a burst may reach the ceiling"
    );
    assert_eq!(fresh.level(), 64);
}

#[tokio::test]
async fn a_plain_request_takes_a_place_no_chain_request_waits_for_and_joins_the_line_in_time() {
    use tokio::time::{Duration, timeout};
    let lanes = lanes(START);
    let mut held = checkouts(&lanes, START).await;
    for _ in 0..64 {
        lanes.answered(held[0].lane(), 40, true); // the usual answer: 40 ms
    }
    assert_eq!(lanes.level(), START, "the ceiling: no place to spare");
    let chain = lanes.checkout(Priority::Chain);
    let plain = lanes.checkout(Priority::Plain);
    tokio::pin!(chain, plain);
    assert!(timeout(Duration::from_millis(5), &mut plain).await.is_err());
    assert!(timeout(Duration::from_millis(5), &mut chain).await.is_err());
    drop(held.pop());
    let chained = timeout(Duration::from_millis(500), &mut chain).await;
    assert!(
        chained.is_ok(),
        "the place given back goes to the chain request"
    );
    assert!(
        timeout(Duration::from_millis(5), &mut plain).await.is_err(),
        "not to the plain one that asked"
    );
    drop(held.pop());
    let plained = timeout(Duration::from_millis(500), &mut plain).await;
    assert!(
        plained.is_ok(),
        "a place no chain request waits for goes to a plain one"
    );
    // A plain request that waited the usual answer's time is in line: before a chain request
    // that asks after it.
    let late_plain = lanes.checkout(Priority::Plain);
    tokio::pin!(late_plain);
    assert!(
        timeout(Duration::from_millis(60), &mut late_plain)
            .await
            .is_err()
    );
    let late_chain = lanes.checkout(Priority::Chain);
    tokio::pin!(late_chain);
    assert!(
        timeout(Duration::from_millis(5), &mut late_chain)
            .await
            .is_err()
    );
    drop(held.pop());
    let served = timeout(Duration::from_millis(500), &mut late_plain).await;
    assert!(served.is_ok(), "in line first, served first");
    assert!(
        timeout(Duration::from_millis(5), &mut late_chain)
            .await
            .is_err()
    );
    drop(served);
    assert!(
        timeout(Duration::from_millis(500), &mut late_chain)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_request_that_may_not_be_sent_twice_opens_no_connection_past_those_served_at_once() {
    // A worker pool that resets connections past its cap would take such a request with the
    // connection; a lane comes back soon, and it goes on that one.
    let lanes = lanes(16 * START);
    let held = checkouts(&lanes, START).await;
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    assert!(lanes.level() > START, "room for more: {}", lanes.level());
    let unrepeatable = Reuse::Unrepeatable(Some(SAFE_IDLE));
    let waiting = tokio::time::timeout(
        std::time::Duration::from_millis(200),
        lanes.checkout_reusing(Priority::Chain, unrepeatable),
    )
    .await;
    assert!(
        waiting.is_err(),
        "it waited rather than open a ninth connection"
    );
    let repeatable = lanes.checkout_reusing(Priority::Chain, Reuse::Any).await;
    assert_eq!(
        lanes.live(),
        START + 1,
        "one that may be sent again probes past them"
    );
    drop(repeatable);
    drop(held);
    let taken = lanes
        .checkout_reusing(Priority::Chain, unrepeatable)
        .await
        .unwrap();
    assert!(
        taken.lane().proven.load(Ordering::Relaxed),
        "it took a lane the target answered on"
    );
    assert_eq!(lanes.live(), START + 1);
}

#[tokio::test]
async fn while_a_create_waits_a_read_opens_a_fresh_lane_and_leaves_the_idle_one_to_it() {
    // Reads taking every lane that came back held a run's first creates for four round trips
    // at 50 ms: the creates may open no connection past those served at once, and only the
    // reads, which may be sent again, show more.
    let lanes = lanes(16 * START);
    let mut held = checkouts(&lanes, START).await;
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    // A create takes an idle lane once the target has kept a connection (`Lanes::reuse_for`);
    // till then a read takes them, which shows whether it does.
    lanes.kept_answered();
    let create = lanes.checkout_reusing(Priority::Chain, Reuse::Unrepeatable(Some(SAFE_IDLE)));
    tokio::pin!(create);
    let waited = tokio::time::timeout(std::time::Duration::from_millis(50), &mut create).await;
    assert!(waited.is_err(), "every connection served at once is busy");
    drop(held.pop()); // one comes back idle
    let read = lanes
        .checkout_reusing(Priority::Chain, Reuse::Any)
        .await
        .unwrap();
    assert!(
        !read.lane().proven.load(Ordering::Relaxed),
        "the read opened a fresh lane"
    );
    let taken = tokio::time::timeout(std::time::Duration::from_millis(500), create)
        .await
        .expect("the create took the lane that came back, well before it would open one")
        .unwrap();
    assert!(taken.lane().proven.load(Ordering::Relaxed));
}

/// `START` lanes proven and held, and reads (of `priority`) on every other place of the
/// level: the level full, no lane idle.
pub(super) async fn a_full_level(
    lanes: &Lanes,
    priority: Priority,
) -> (Vec<Checkout<'_>>, Vec<Checkout<'_>>) {
    let held = checkouts(lanes, START).await;
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    let mut reads = Vec::new();
    for _ in START..lanes.level() {
        reads.push(lanes.checkout_reusing(priority, Reuse::Any).await.unwrap());
    }
    (held, reads)
}

/// On a full level, a create of `waits_first` waits, then one of `takes`: the lane that comes
/// back (one of `held`) goes to `takes`, and the other still waits. The lane taken, held.
pub(super) async fn the_lane_back_goes_to<'a>(
    lanes: &'a Lanes,
    held: &mut Vec<Checkout<'a>>,
    waits_first: Priority,
    takes: Priority,
) -> Checkout<'a> {
    let unrepeatable = Reuse::Unrepeatable(Some(SAFE_IDLE));
    let wait = std::time::Duration::from_millis(50);
    let other = lanes.checkout_reusing(waits_first, unrepeatable);
    tokio::pin!(other);
    assert!(
        tokio::time::timeout(wait, &mut other).await.is_err(),
        "no lane"
    );
    let taker = lanes.checkout_reusing(takes, unrepeatable);
    tokio::pin!(taker);
    assert!(
        tokio::time::timeout(wait, &mut taker).await.is_err(),
        "no lane yet"
    );
    drop(held.pop()); // one comes back idle
    // Both looked at, the other first: the lane is the taker's.
    let taken = tokio::time::timeout(std::time::Duration::from_millis(500), async {
        tokio::select! {
            biased;
            _ = &mut other => None,
            taken = &mut taker => Some(taken.unwrap()),
        }
    })
    .await
    .expect("a create took the lane")
    .unwrap_or_else(|| panic!("{takes:?}'s create took it, though {waits_first:?}'s waited first"));
    assert!(taken.lane().proven.load(Ordering::Relaxed));
    assert!(
        tokio::time::timeout(wait, &mut other).await.is_err(),
        "the other create still waits"
    );
    taken
}

#[tokio::test]
async fn a_fixtures_create_takes_the_first_lane_back_and_its_read_goes_past_a_full_level() {
    // The run's fixtures (a pet to read, the marker's baseline) waited in line behind every
    // chain request for four round trips at 50 ms, and most rules wait on them.
    let lanes = lanes(16 * START);
    let (mut held, _reads) = a_full_level(&lanes, Priority::Chain).await;
    let _taken = the_lane_back_goes_to(&lanes, &mut held, Priority::Chain, Priority::First).await;
    let wait = std::time::Duration::from_millis(50);
    // The level full: a fixture's read goes past it, another waits.
    let read = lanes.checkout_reusing(Priority::Chain, Reuse::Any);
    tokio::pin!(read);
    assert!(
        tokio::time::timeout(wait, &mut read).await.is_err(),
        "the level is full"
    );
    let fixture_read = lanes.checkout_reusing(Priority::First, Reuse::Any);
    assert!(
        tokio::time::timeout(wait, fixture_read).await.is_ok(),
        "one of the places past the level"
    );
    // Never past `--concurrency`.
    let capped = self::lanes(START);
    let _full = checkouts(&capped, START).await;
    let fixture_read = capped.checkout_reusing(Priority::First, Reuse::Any);
    assert!(tokio::time::timeout(wait, fixture_read).await.is_err());
}

#[tokio::test]
async fn throttling_answers_cut_the_level_and_never_grow_it_back() {
    let lanes = lanes(256);
    let held = checkouts(&lanes, START).await;
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    let top = lanes.level();
    assert!(top > START, "{top}");
    // A store that throttles everything from now on: one cut, then a thousand 429s within the
    // cool-down win nothing back (counted as answers, they grew the level to where it was).
    lanes.throttled(held[0].lane());
    let cut = lanes.level();
    assert_eq!(cut, top / 2);
    for _ in 0..1000 {
        lanes.throttled(held[0].lane());
    }
    assert_eq!(lanes.level(), cut);
    assert!(lanes.tally().concurrency_final < lanes.tally().concurrency_reached);
    drop(held);
}

/// A round of [`START`] requests answered and given back idle, then as many creates, each on a
/// lane of its own (kept connections not yet seen to answer), each closing an idle one for it.
async fn creates_after_a_served_round(lanes: &Lanes) -> Vec<Checkout<'_>> {
    let first = checkouts(lanes, START).await;
    for checkout in &first {
        lanes.answered(checkout.lane(), 50, true);
    }
    drop(first);
    assert!(lanes.level() > START, "the first round grew it");
    futures_util::future::join_all(
        (0..START).map(|_| lanes.checkout_reusing(Priority::Chain, Reuse::Unrepeatable(None))),
    )
    .await
    .into_iter()
    .map(Result::unwrap)
    .collect()
}

/// A lane closed to make room for a request that may not be sent twice hands its proof to the
/// lane that replaces it: the target freed the place it gave the one for the other. A round of
/// creates, each on a connection of its own (kept connections not yet seen to answer), then
/// keeps the lanes proven, and slow start doubles the level on its answers; counted as closed,
/// the proven fell to none, and the level grew on the last answers only (to 14, not 16).
#[tokio::test]
async fn a_lane_closed_for_room_hands_its_proof_to_its_replacement() {
    let lanes = lanes(16 * START);
    let creates = creates_after_a_served_round(&lanes).await;
    assert_eq!(lanes.live(), START, "each closed an idle lane for its own");
    assert_eq!(lanes.proven.load(Ordering::Relaxed), START);
    for checkout in &creates {
        lanes.answered(checkout.lane(), 50, true);
    }
    assert_eq!(lanes.level(), 2 * START, "slow start on every answer");
    assert_eq!(lanes.proven.load(Ordering::Relaxed), START);
}

/// A proof taken over from a lane closed for room is given up when the fresh connection is not
/// served (refused, reset or stalled before any answer): the cut that follows is then to the
/// lanes the target did serve, none here, not to the proofs handed on.
#[tokio::test]
async fn a_fresh_lane_not_served_gives_up_the_proof_it_took_over() {
    let lanes = lanes(16 * START);
    let creates = creates_after_a_served_round(&lanes).await;
    assert_eq!(lanes.proven.load(Ordering::Relaxed), START);
    for checkout in &creates {
        lanes.not_served(checkout.lane());
        lanes.not_served(checkout.lane()); // once only
    }
    assert_eq!(lanes.proven.load(Ordering::Relaxed), 0);
    lanes.overloaded(Overload::Refused);
    assert_eq!(lanes.level(), 1, "capped at the lanes served: none, so one");
    drop(creates);
    assert_eq!(lanes.proven.load(Ordering::Relaxed), 0, "never below zero");
}

#[tokio::test]
async fn a_lane_coming_back_goes_with_its_place_to_a_waiting_create_not_to_the_read_in_line() {
    // Given back apart, the place went to the first read in line, which took the lane with it:
    // a run's creates at 50 ms waited from its second round trip to its seventh for the reads
    // to thin out.
    let lanes = lanes(16 * START);
    let mut held = checkouts(&lanes, START).await;
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    lanes.kept_answered();
    let level = lanes.level();
    for _ in START..level {
        held.push(
            lanes
                .checkout_reusing(Priority::Chain, Reuse::Any)
                .await
                .unwrap(),
        );
    }
    let wait = std::time::Duration::from_millis(50);
    let create = lanes.checkout_reusing(Priority::Chain, Reuse::Unrepeatable(Some(SAFE_IDLE)));
    tokio::pin!(create);
    assert!(
        tokio::time::timeout(wait, &mut create).await.is_err(),
        "the level is full"
    );
    let read = lanes.checkout_reusing(Priority::Chain, Reuse::Any);
    tokio::pin!(read);
    assert!(
        tokio::time::timeout(wait, &mut read).await.is_err(),
        "in line"
    );
    drop(held.swap_remove(0)); // a proven lane comes back, with its place
    let create = tokio::time::timeout(std::time::Duration::from_millis(500), create)
        .await
        .expect("the create took the lane and the place that came back")
        .unwrap();
    assert!(create.lane().proven.load(Ordering::Relaxed));
    assert!(
        tokio::time::timeout(wait, &mut read).await.is_err(),
        "the read is still in line: no place went to it"
    );
    drop(create); // its place goes back to the line
    let read = tokio::time::timeout(std::time::Duration::from_millis(500), read)
        .await
        .expect("the place came back to the line")
        .unwrap();
    drop(read);
    drop(held);
    assert_eq!(
        lanes.permits.available_permits(),
        lanes.level(),
        "every place is back"
    );
    assert!(lanes.live.load(Ordering::Relaxed) <= lanes.level());
}
