//! Slow start's doubling, whatever order a round trip's answers come back in.

use super::tests::{checkouts, lanes};
use super::*;

/// A round trip on the 6 lanes a preflight proved and 8 fresh ones: the answers on the kept
/// lanes come back first, while the level stands at its bound (twice the proven lanes, or
/// [`START`] past them), and still count once the fresh lanes are proven. Every answer grows
/// the level by one, as slow start says, and the bound holds throughout.
#[tokio::test]
async fn answers_that_came_back_at_the_proven_bound_count_once_more_lanes_are_proven() {
    let lanes = lanes(16 * START);
    let preflight = checkouts(&lanes, 6).await;
    for checkout in &preflight {
        lanes.answered(checkout.lane(), 50, true);
    }
    drop(preflight);
    assert_eq!(lanes.level(), 6 + START, "one place per answer");
    let round = checkouts(&lanes, lanes.level()).await;
    let (kept, fresh): (Vec<_>, Vec<_>) = round
        .iter()
        .partition(|checkout| checkout.lane().proven.load(Ordering::Relaxed));
    assert_eq!((kept.len(), fresh.len()), (6, START));
    for checkout in &kept {
        lanes.answered(checkout.lane(), 50, true);
    }
    assert_eq!(
        lanes.level(),
        6 + START,
        "at the bound: none proven past the 6"
    );
    for (n, checkout) in fresh.iter().enumerate() {
        lanes.answered(checkout.lane(), 50, true);
        let proven = 6 + n + 1;
        assert!(lanes.level() <= (2 * proven).max(proven + START));
    }
    assert_eq!(
        lanes.level(),
        2 * (6 + START),
        "each of the round trip's 14 answers grew it by one"
    );
}
