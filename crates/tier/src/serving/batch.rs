//! A batch of queries known up front (a TREC topic set, a Python `batch_search`) answered by
//! a [`LiveService`]'s query threads: the requests are admitted a window at a time, so the
//! queue never refuses one and the prefetch worker sees the queries just ahead of the
//! threads, as it does under live traffic.

use std::sync::mpsc;

use super::live::{LiveAnswer, LiveError, LiveRequest, LiveService};

/// Runs `requests` on `service`'s query threads, keeping at most `window` of them admitted
/// and unanswered (1 or more; at most the service's queue depth, else the queue may refuse
/// one). Returns one answer per request, in the requests' order.
///
/// # Errors
///
/// [`LiveError`] when the service refuses a request (it is shutting down, or `window` is
/// over its queue depth and the queue is full); the answers of requests that failed in
/// evaluation are in the returned list, each its own `Err`.
pub fn run_batch(
    service: &LiveService,
    requests: impl IntoIterator<Item = LiveRequest>,
    window: usize,
) -> Result<Vec<Result<LiveAnswer, LiveError>>, LiveError> {
    let window = window.max(1);
    let (tx, rx) = mpsc::channel::<(usize, Result<LiveAnswer, LiveError>)>();
    let mut answers: Vec<Option<Result<LiveAnswer, LiveError>>> = Vec::new();
    let mut tickets = Vec::new();
    let mut in_flight = 0;
    let receive = |answers: &mut Vec<Option<_>>| -> Result<(), LiveError> {
        let (i, answer) = rx.recv().map_err(|_| LiveError::ShuttingDown)?;
        answers[i] = Some(answer);
        Ok(())
    };
    for (i, request) in requests.into_iter().enumerate() {
        if in_flight == window {
            receive(&mut answers)?;
            in_flight -= 1;
        }
        answers.push(None);
        let tx = tx.clone();
        // A ticket dropped cancels its request: they are kept until every answer is in.
        tickets.push(service.submit(request, move |answer| {
            let _ = tx.send((i, answer));
        })?);
        in_flight += 1;
    }
    for _ in 0..in_flight {
        receive(&mut answers)?;
    }
    drop(tickets);
    Ok(answers
        .into_iter()
        .map(|answer| answer.expect("every request answered"))
        .collect())
}
