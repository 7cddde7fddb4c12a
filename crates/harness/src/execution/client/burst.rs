//! Requests sent at one moment, for races a sequential client cannot show.

use super::Client;
use crate::execution::lanes::{Priority, Reuse};
use crate::generation::request::RequestSpec;
use crate::outcome::Exchange;

impl Client {
    /// Sends every request at the same moment and returns the exchanges in the order of
    /// `specs`: for races a sequential client cannot show. The batch takes its lanes together
    /// (as many as the level allows, so a burst never passes it); requests past that follow on
    /// the same lanes as they come free.
    pub fn send_at_once(&self, specs: &[RequestSpec]) -> Vec<Exchange> {
        self.runtime.block_on(async {
            // A burst of creates goes on connections the target has shown it takes at once (a
            // server that resets what is past its cap would take a create with one): where it
            // asks for more, the plainest read goes first on as many connections at once, so
            // that the race goes whole where the target takes them (a rule run alone, after the
            // preflight's 6, went with a third of its lanes and missed a racy id counter), and
            // on fewer where it does not.
            let repeatable = specs.iter().all(RequestSpec::repeatable);
            let mut shown = Vec::new();
            if !repeatable && self.lanes.unserved(specs.len()) > 0 && self.halt.reason().is_none() {
                shown = self.show_connections(specs.len()).await;
            }
            // A burst of creates takes no idle connection the server may be closing as the
            // request goes out (a create lost so may not be sent again).
            let reuse = self.lanes.reuse_for(repeatable);
            // The lanes just shown, each answered and kept, are the race's: given back, the
            // creates and reads waiting took them first, and the burst waited two round trips
            // more at 50 ms to gather as many again.
            let kept = matches!(reuse, Reuse::Unrepeatable(Some(_)));
            let checkouts = if kept && shown.len() == specs.len() {
                shown
            } else {
                drop(shown);
                match self
                    .until_halt(self.lanes.checkout_many(specs.len(), reuse))
                    .await
                {
                    Ok(checkouts) => checkouts,
                    Err(reason) => {
                        return specs
                            .iter()
                            .map(|spec| self.not_sent(spec, &reason))
                            .collect();
                    }
                }
            };
            if let Some(reason) = self.halt.reason() {
                return specs
                    .iter()
                    .map(|spec| self.not_sent(spec, &reason))
                    .collect();
            }
            // The lanes take the requests in turn. A lane whose fresh connection the server left
            // in its backlog hands its request to the others and closes (keeping it would hold
            // the burst's other connections open, and the server full, until it timed out);
            // the last lane left sends again itself.
            // What is left to send, and the lanes still taking from it; one lock, so that a
            // request handed back always finds a lane that has not left.
            let queue = std::sync::Mutex::new((
                (0..specs.len()).collect::<std::collections::VecDeque<usize>>(),
                checkouts.len(),
            ));
            let results: Vec<std::sync::Mutex<Option<Exchange>>> =
                specs.iter().map(|_| std::sync::Mutex::new(None)).collect();
            futures_util::future::join_all(checkouts.into_iter().map(|mut checkout| {
                let (queue, results) = (&queue, &results);
                async move {
                    loop {
                        let next = {
                            let mut queue = queue.lock().unwrap_or_else(|e| e.into_inner());
                            let next = queue.0.pop_front();
                            if next.is_none() {
                                queue.1 -= 1; // this lane leaves
                            }
                            next
                        };
                        let Some(index) = next else { break };
                        let spec = &specs[index];
                        let hand_off = || {
                            let mut queue = queue.lock().unwrap_or_else(|e| e.into_inner());
                            if queue.1 < 2 {
                                return false; // the last lane sends again itself
                            }
                            queue.1 -= 1;
                            queue.0.push_back(index);
                            true
                        };
                        let sent = self
                            .send_bounded(
                                spec,
                                self.send_async(
                                    spec,
                                    Some(checkout.lane()),
                                    Priority::Chain,
                                    &hand_off,
                                ),
                            )
                            .await;
                        let Some(exchange) = sent else {
                            self.lanes.resending();
                            checkout.discard();
                            break;
                        };
                        *results[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(exchange);
                    }
                }
            }))
            .await;
            results
                .into_iter()
                .zip(specs)
                .map(|(slot, spec)| {
                    slot.into_inner()
                        .unwrap_or_else(|e| e.into_inner())
                        .unwrap_or_else(|| self.not_sent(spec, "not sent"))
                })
                .collect()
        })
    }
}
