//! Bursts: lanes taken together for requests sent at one moment.

use super::tests::{checkouts, lanes};
use super::*;

/// Lanes on which a first round of [`START`] requests was answered, given back idle.
async fn served_round() -> Lanes {
    let lanes = lanes(16 * START);
    let held = checkouts(&lanes, START).await;
    for checkout in &held {
        lanes.answered(checkout.lane(), 50, true);
    }
    drop(held);
    lanes
}

/// A burst of creates opens no connection past those the target has served at once: a server
/// that resets connections past its cap would take a create with its connection. It takes
/// what it may, waits a little for lanes to come back, and goes with what it has; its other
/// requests follow on its lanes.
#[tokio::test]
async fn a_burst_of_creates_opens_no_connection_past_those_served_at_once() {
    let lanes = served_round().await;
    lanes.kept_answered();
    // Reads take the idle lanes and probe past them, as they may.
    let mut reads = checkouts(&lanes, START + 2).await;
    assert_eq!(
        lanes.live(),
        START + 2,
        "the reads probe past the served lanes"
    );
    let back = reads.pop();
    let lanes_back = &lanes;
    let (burst, ()) = tokio::join!(
        lanes.checkout_many(START, Reuse::Unrepeatable(Some(SAFE_IDLE))),
        async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            if let Some(back) = back {
                lanes_back.answered(back.lane(), 50, true);
            }
        }
    );
    let burst = burst.unwrap();
    assert_eq!(
        burst.len(),
        1,
        "no room for a create on a fresh connection: the one lane back goes, the others follow it"
    );
    assert!(burst[0].lane().proven.load(Ordering::Relaxed));
    assert_eq!(lanes.live(), START + 2, "no connection opened");
    drop(burst);
    // Lanes back from the reads are the burst's to take, all of them.
    drop(reads);
    let burst = lanes
        .checkout_many(START, Reuse::Unrepeatable(Some(SAFE_IDLE)))
        .await
        .unwrap();
    assert_eq!(burst.len(), START, "idle lanes served the whole burst");
    assert_eq!(lanes.live(), START + 2, "and it opened none");
}

/// A burst of reads may open fresh connections past those served: a read lost with one is sent
/// again.
#[tokio::test]
async fn a_burst_of_reads_probes_past_the_served_lanes() {
    let lanes = served_round().await;
    let burst = lanes.checkout_many(2 * START, Reuse::Any).await.unwrap();
    assert_eq!(burst.len(), 2 * START);
    assert_eq!(lanes.live(), 2 * START);
}

/// Before the target is seen to keep connections, a burst of creates short of lanes waits for
/// all it needs: one following another on a lane could go on a connection the server closed
/// after its one answer, and be lost with it.
#[tokio::test]
async fn before_kept_connections_are_seen_a_burst_of_creates_waits_for_all_its_lanes() {
    let lanes = served_round().await;
    let mut reads = checkouts(&lanes, START + 2).await;
    let first = reads.pop();
    let lanes_back = &lanes;
    let (burst, ()) = tokio::join!(
        lanes.checkout_many(START / 2, Reuse::Unrepeatable(None)),
        async move {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            drop(first);
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            for read in reads {
                lanes_back.answered(read.lane(), 50, true);
            }
        }
    );
    assert_eq!(
        burst.unwrap().len(),
        START / 2,
        "it waited for the lanes back"
    );
}

/// With no other lane out, a burst of creates larger than the connections the target has
/// served at once still opens none past them: it goes with the lanes it may take, its other
/// creates following on them (the client shows the target more connections first:
/// `Client::send_at_once`).
#[tokio::test]
async fn with_nothing_else_out_a_burst_of_creates_still_opens_none_past_the_served() {
    let lanes = served_round().await;
    lanes.kept_answered();
    let burst = lanes
        .checkout_many(3 * START, Reuse::Unrepeatable(Some(SAFE_IDLE)))
        .await
        .unwrap();
    assert_eq!(burst.len(), START, "the lanes served, no more");
    assert_eq!(lanes.live(), START);
}
