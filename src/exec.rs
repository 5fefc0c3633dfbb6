//! An ordered, bounded, parallel map: the streaming core of every command.
//!
//! ## What it does
//! [`run_ordered`] pulls items from a source on one thread, runs `work` on
//! each of them on a rayon pool, and hands the results to a sink on the
//! calling thread **in source order**, with at most `in_flight` items between
//! the source and the sink at any moment.
//!
//! ## Why
//! A batch-then-write loop (read 512 records, process them, write them, read
//! again) leaves the workers idle while the main thread reads and writes, and
//! waits at the end of every batch for its slowest session. Here reading,
//! working and writing overlap, and a worker that finishes takes the next
//! item at once. Back-pressure is a fixed number of permits: the source takes
//! one before it dispatches an item and the sink returns it after it has
//! written that item, so memory is bounded by `in_flight` items whatever the
//! size of the archive, and a slow sink (or one stalled item at the head of
//! the order) stops the reading instead of growing a queue.
//!
//! ## Invariants
//! - The sink sees results in exactly the order the source produced items,
//!   whatever the thread count: output bytes never depend on scheduling.
//! - When the sink fails, or the `stop` flag is raised, no new item is read;
//!   items already dispatched finish and are dropped, and the error is returned.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// Runs `work` over every item of `source` on `pool` and feeds `sink` in order.
///
/// `stop` is polled before each item is read (Ctrl-C handling raises it);
/// stopping early is not an error: the caller checks the flag.
pub fn run_ordered<I, O, S, W, K>(
    pool: &rayon::ThreadPool,
    in_flight: usize,
    stop: &AtomicBool,
    mut source: S,
    work: W,
    mut sink: K,
) -> anyhow::Result<()>
where
    I: Send,
    O: Send,
    S: FnMut() -> Option<I> + Send,
    W: Fn(I) -> O + Sync,
    K: FnMut(O) -> anyhow::Result<()>,
{
    let in_flight = in_flight.max(1);
    let (results_tx, results_rx) = mpsc::channel::<(u64, O)>();
    let (permit_tx, permit_rx) = mpsc::sync_channel::<()>(in_flight);
    for _ in 0..in_flight {
        // The channel holds exactly `in_flight` permits; this cannot block.
        let _ = permit_tx.try_send(());
    }
    let failed = AtomicBool::new(false);
    let work = &work;
    let failed_ref = &failed;
    std::thread::scope(|threads| {
        threads.spawn(move || {
            pool.in_place_scope(|scope| {
                let mut seq = 0u64;
                while permit_rx.recv().is_ok() {
                    if stop.load(Ordering::Relaxed) || failed_ref.load(Ordering::Relaxed) {
                        break;
                    }
                    let Some(item) = source() else { break };
                    let tx = results_tx.clone();
                    let n = seq;
                    scope.spawn(move |_| {
                        let _ = tx.send((n, work(item)));
                    });
                    seq += 1;
                }
            });
            // `results_tx` drops here, after every spawned item has sent: the
            // sink's loop below ends when the last result is in.
            drop(results_tx);
        });

        let mut pending: BTreeMap<u64, O> = BTreeMap::new();
        let mut next = 0u64;
        let mut outcome = Ok(());
        let mut permits = Some(permit_tx);
        for (seq, out) in results_rx {
            pending.insert(seq, out);
            while let Some(out) = pending.remove(&next) {
                next += 1;
                if outcome.is_ok() {
                    outcome = sink(out);
                    if outcome.is_err() {
                        failed.store(true, Ordering::Relaxed);
                        // No more permits: the reader stops at its next item.
                        permits = None;
                    }
                }
                if let Some(p) = &permits {
                    let _ = p.send(());
                }
            }
        }
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn pool(n: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap()
    }

    #[test]
    fn results_come_in_source_order_for_any_thread_count() {
        for threads in [1, 2, 8] {
            let mut items = 0..500u64;
            let mut got = Vec::new();
            run_ordered(
                &pool(threads),
                7,
                &AtomicBool::new(false),
                || items.next(),
                |i| {
                    // Uneven work so that completion order differs from source order.
                    let spin = (i * 7919) % 2000;
                    std::hint::black_box((0..spin).fold(i, |a, b| a.wrapping_mul(31) ^ b));
                    i
                },
                |o| {
                    got.push(o);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(got, (0..500).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn no_more_than_in_flight_items_are_between_source_and_sink() {
        let outstanding = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let mut items = 0..200u32;
        run_ordered(
            &pool(4),
            5,
            &AtomicBool::new(false),
            || {
                let n = outstanding.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(n, Ordering::SeqCst);
                items.next()
            },
            |i| i,
            |_| {
                outstanding.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            },
        )
        .unwrap();
        assert!(peak.load(Ordering::SeqCst) <= 5, "peak {}", peak.load(Ordering::SeqCst));
    }

    #[test]
    fn a_failing_sink_stops_the_reading_and_returns_its_error() {
        let read = AtomicUsize::new(0);
        let mut items = 0..10_000u32;
        let mut seen = 0;
        let err = run_ordered(
            &pool(2),
            4,
            &AtomicBool::new(false),
            || {
                read.fetch_add(1, Ordering::SeqCst);
                items.next()
            },
            |i| i,
            |i| {
                seen += 1;
                if i == 10 { anyhow::bail!("disk full") } else { Ok(()) }
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(seen, 11, "nothing after the failure reaches the sink");
        assert!(read.load(Ordering::SeqCst) <= 11 + 4, "read {}", read.load(Ordering::SeqCst));
    }

    #[test]
    fn a_raised_stop_flag_ends_the_run_early_and_cleanly() {
        let stop = AtomicBool::new(false);
        let mut items = 0..10_000u32;
        let mut got = Vec::new();
        run_ordered(
            &pool(2),
            3,
            &stop,
            || items.next(),
            |i| i,
            |i| {
                got.push(i);
                if i == 20 {
                    stop.store(true, Ordering::Relaxed);
                }
                Ok(())
            },
        )
        .unwrap();
        assert!(got.len() < 30, "{} items after the stop", got.len());
        assert_eq!(got, (0..got.len() as u32).collect::<Vec<_>>(), "still in order, no gaps");
    }
}
