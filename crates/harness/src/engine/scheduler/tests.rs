//! The scheduler's waits: phases, first passes, the quiet store's answers and room.

use super::*;
use std::sync::Arc;

#[test]
fn a_rule_of_a_later_phase_starts_once_every_earlier_one_is_judged() {
    let scheduler = Arc::new(Scheduler::default());
    scheduler.select([Phase::QuietStore, Phase::Main], 1, 0);
    let last = {
        let scheduler = Arc::clone(&scheduler);
        std::thread::spawn(move || {
            scheduler.wait_for_earlier_phases(Phase::Last);
            Instant::now()
        })
    };
    std::thread::sleep(Duration::from_millis(30));
    let quiet_judged = Instant::now();
    scheduler.judged(Phase::QuietStore);
    std::thread::sleep(Duration::from_millis(30));
    let main_judged = Instant::now();
    scheduler.judged(Phase::Main);
    let started = last.join().unwrap();
    assert!(started >= main_judged && started > quiet_judged);
}

/// The later rules' creates take the places of the store's first page the quiet-store
/// rules leave while those rules list it (none while their own creates are out), and go
/// as they please once they are judged, whatever the reads run beside them still do.
#[test]
fn a_later_rules_creates_wait_for_room_while_the_quiet_store_rules_list() {
    let scheduler = Arc::new(Scheduler::default());
    // One quiet-store rule, and a rule that only reads, run in its phase beside it.
    scheduler.select([Phase::QuietStore, Phase::QuietStore, Phase::Main], 1, 21);
    let room = scheduler.quiet_room(10);
    assert_eq!(room, 99 - 10 - 21 - FIXTURE_PETS);
    assert_eq!(scheduler.quiet_room(100), 0, "a full page leaves none");
    assert!(scheduler.wait_for_room(60, room, &|| false), "counted");
    let waiting = |wanted: u64, room: u64| {
        let scheduler = Arc::clone(&scheduler);
        let (sent, got) = std::sync::mpsc::channel();
        std::thread::spawn(move || sent.send(scheduler.wait_for_room(wanted, room, &|| false)));
        got
    };
    let ten = waiting(10, room);
    assert!(
        ten.recv_timeout(Duration::from_millis(60)).is_err(),
        "no room for ten"
    );
    scheduler.room_back(10);
    assert_eq!(
        ten.recv_timeout(Duration::from_secs(5)),
        Ok(true),
        "room for ten now"
    );
    scheduler.quiet_creating(true);
    let one = waiting(1, room);
    assert!(
        one.recv_timeout(Duration::from_millis(60)).is_err(),
        "after the quiet creates"
    );
    let fixture = waiting(1, u64::MAX);
    assert_eq!(
        fixture.recv_timeout(Duration::from_secs(5)),
        Ok(true),
        "a fixture goes"
    );
    scheduler.quiet_creating(false);
    assert_eq!(one.recv_timeout(Duration::from_secs(5)), Ok(true));
    let many = waiting(500, room);
    assert!(many.recv_timeout(Duration::from_millis(60)).is_err());
    scheduler.judged(Phase::QuietStore); // the reads beside: they count for no room
    assert!(many.recv_timeout(Duration::from_millis(60)).is_err());
    scheduler.quiet_rule_judged();
    scheduler.judged(Phase::QuietStore);
    assert!(scheduler.quiet_store_judged());
    assert_eq!(
        many.recv_timeout(Duration::from_secs(5)),
        Ok(false),
        "not counted after"
    );
}

/// An oracle starts beside the last phase (its reads go out with theirs), and reads its
/// tally only once that phase is judged.
#[test]
fn an_oracle_starts_with_the_last_phase_and_waits_for_it() {
    let scheduler = Scheduler::default();
    scheduler.select([Phase::Last, Phase::Oracles], 0, 0);
    let times = Mutex::new(Vec::new());
    let queue = [(Phase::Last, "last"), (Phase::Oracles, "oracle")];
    scheduler.judge_all(&queue, 2, &|item: &&str| {
        let mark = |what: &'static str| times.lock().unwrap().push((what, Instant::now()));
        if *item == "last" {
            std::thread::sleep(Duration::from_millis(80));
            mark("last judged");
        } else {
            mark("oracle started");
            scheduler.wait_for_last_phase(&|| false);
            mark("oracle reads");
        }
    });
    let times = times.into_inner().unwrap();
    let at = |what| times.iter().find(|(w, _)| *w == what).unwrap().1;
    assert!(at("oracle started") < at("last judged"), "{times:?}");
    assert!(at("oracle reads") >= at("last judged"), "{times:?}");
}

#[test]
fn the_first_passes_end_when_every_rule_said_so_and_storing_counts_down_with_them() {
    let scheduler = Scheduler::default();
    scheduler.select(
        [Phase::QuietStore, Phase::Main, Phase::Main, Phase::Last],
        0,
        0,
    );
    assert_eq!(scheduler.state().first_passes_left, 3);
    scheduler.storing_started();
    scheduler.first_pass_over(true);
    scheduler.first_pass_over(false);
    assert_eq!(scheduler.state().storing, 0);
    assert_eq!(scheduler.state().first_passes_left, 1);
    // One left: a wait with a deadline gives up at it.
    let started = Instant::now();
    scheduler.wait_for_first_passes(Some(started + Duration::from_millis(40)), &|| false);
    assert!(started.elapsed() >= Duration::from_millis(40));
    scheduler.first_pass_over(false);
    scheduler.wait_for_first_passes(None, &|| false);
    // Never below zero: a rule that says so twice is counted once by its context.
    scheduler.first_pass_over(false);
    assert_eq!(scheduler.state().first_passes_left, 0);
}

#[test]
fn a_stop_ends_a_wait_that_no_change_would() {
    let scheduler = Scheduler::default();
    scheduler.select([Phase::QuietStore], 1, 0);
    let started = Instant::now();
    scheduler.wait_for_quiet_answers(Duration::from_secs(60), &|| {
        started.elapsed() > Duration::from_millis(30)
    });
    assert!(started.elapsed() < Duration::from_secs(5));
    scheduler.quiet_answered();
    scheduler.wait_for_quiet_answers(Duration::from_secs(60), &|| false);
}

/// The reads beside the quiet-store rules wait for those rules' first answers, unless the
/// target answered [`ANSWERING_SHOWN`] requests in a row; one lost starts the count again.
#[test]
fn answers_in_a_row_end_the_wait_for_the_quiet_creates() {
    use crate::outcome::{ExchangeState, RecordedResponse, TransportError, TransportKind};
    let response = RecordedResponse {
        version: "HTTP/1.1".into(),
        status: 200,
        headers: Vec::new(),
        body: "[]".into(),
        body_truncated: false,
        body_omitted: 0,
        json: None,
        json_error: None,
        duplicate_names: Vec::new(),
    };
    let lost = TransportError {
        kind: TransportKind::RequestFailed,
        body_cut: false,
        detail: String::new(),
    };
    let scheduler = Scheduler::default();
    scheduler.select([Phase::QuietStore, Phase::Main], 1, 0);
    let waited = |scheduler: &Scheduler| {
        let started = Instant::now();
        scheduler.wait_for_quiet_answers(Duration::from_millis(200), &|| false);
        started.elapsed()
    };
    for _ in 1..ANSWERING_SHOWN {
        scheduler.heard(ExchangeState::Answered(&response));
    }
    scheduler.heard(ExchangeState::Unanswered(Some(&lost)));
    scheduler.heard(ExchangeState::Answered(&response));
    assert!(
        waited(&scheduler) >= Duration::from_millis(200),
        "one lost: it waits"
    );
    for _ in 1..ANSWERING_SHOWN {
        scheduler.heard(ExchangeState::Answered(&response));
    }
    assert!(
        waited(&scheduler) < Duration::from_millis(100),
        "answered in a row: it goes"
    );
}
