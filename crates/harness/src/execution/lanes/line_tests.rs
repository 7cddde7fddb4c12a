//! The line for places: who takes a place given back when the level is full, and which of the
//! creates waiting takes a lane that comes back.

use super::tests::{a_full_level, checkouts, lanes, the_lane_back_goes_to};
use super::*;

/// A plain request that has waited its usual answer's time joins the line, but not while a
/// chain request waits there: the line is first come, first served, and plain reads that had
/// joined it between one chain request and the next held a quiet-store rule's listing for four
/// round trips at 50 ms.
#[tokio::test]
async fn a_plain_request_stays_out_of_the_line_while_a_chain_request_waits_there() {
    let short = std::time::Duration::from_millis(30);
    let lanes = lanes(START);
    let mut held = checkouts(&lanes, START).await;
    let first_chain = lanes.checkout(Priority::Chain);
    tokio::pin!(first_chain);
    assert!(tokio::time::timeout(short, &mut first_chain).await.is_err());
    // No answer yet, so no usual answer to wait for: it would join the line at once.
    let plain = lanes.checkout(Priority::Plain);
    tokio::pin!(plain);
    assert!(tokio::time::timeout(short, &mut plain).await.is_err());
    let second_chain = lanes.checkout(Priority::Chain);
    tokio::pin!(second_chain);
    assert!(
        tokio::time::timeout(short, &mut second_chain)
            .await
            .is_err()
    );
    drop(held.pop());
    let first = tokio::time::timeout(short * 100, &mut first_chain).await;
    assert!(
        first.is_ok(),
        "the first chain request took the first place back"
    );
    drop(held.pop());
    let second = tokio::time::timeout(short * 100, &mut second_chain).await;
    assert!(
        second.is_ok(),
        "the second chain request, not the plain one before it, took the next"
    );
    assert!(tokio::time::timeout(short, &mut plain).await.is_err());
    drop(held.pop());
    let plain = tokio::time::timeout(short * 100, &mut plain).await;
    assert!(plain.is_ok(), "and the plain one the one after");
}

/// One plain request at a time waits in the line: a chain request that comes later goes after
/// that one, not after every plain request that had joined before it (a quiet-store rule's
/// creates waited four round trips behind the reads beside them at 50 ms).
#[tokio::test]
async fn a_chain_request_waits_behind_one_plain_request_in_line_at_most() {
    let short = std::time::Duration::from_millis(30);
    let lanes = lanes(START);
    let mut held = checkouts(&lanes, START).await;
    // No answer yet, so no usual answer to wait for: both join the line at once.
    let first_plain = lanes.checkout(Priority::Plain);
    tokio::pin!(first_plain);
    assert!(tokio::time::timeout(short, &mut first_plain).await.is_err());
    let second_plain = lanes.checkout(Priority::Plain);
    tokio::pin!(second_plain);
    assert!(
        tokio::time::timeout(short, &mut second_plain)
            .await
            .is_err()
    );
    let chain = lanes.checkout(Priority::Chain);
    tokio::pin!(chain);
    assert!(tokio::time::timeout(short, &mut chain).await.is_err());
    drop(held.pop());
    let first = tokio::time::timeout(short * 100, &mut first_plain).await;
    assert!(
        first.is_ok(),
        "the plain request first in line took the first place back"
    );
    drop(held.pop());
    let next = tokio::time::timeout(short * 100, &mut chain).await;
    assert!(
        next.is_ok(),
        "the chain request, not the second plain one before it, took the next"
    );
    assert!(
        tokio::time::timeout(short, &mut second_plain)
            .await
            .is_err()
    );
    drop(held.pop());
    let last = tokio::time::timeout(short * 100, &mut second_plain).await;
    assert!(last.is_ok(), "and the second plain one the one after");
}

/// A chain's create (a quiet-store rule's, a long chain's) takes a lane back before a plain
/// one that waited first: the quiet-store rules' creates go before the later rules' creates
/// that are let beside them, and a long chain's before the bulk.
#[tokio::test]
async fn a_chains_create_takes_a_lane_back_before_a_plain_one() {
    let lanes = lanes(16 * START);
    let (mut held, _reads) = a_full_level(&lanes, Priority::Plain).await;
    let _taken = the_lane_back_goes_to(&lanes, &mut held, Priority::Plain, Priority::Chain).await;
}
