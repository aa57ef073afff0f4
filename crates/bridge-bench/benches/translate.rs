//! Times the translation of whole JSON-RPC documents between A2A 0.3 and 1.0.
//!
//! Each case is timed in both directions, and beside it, on the same input document, the
//! baseline: a `serde_json::Value` round trip. Throughput is the input document's size, so the
//! 1 MiB inline-file case reads in bytes per second. `scripts/bench-translate.sh` runs this and
//! writes the table in `docs/benchmarks.md`.
//!
//! Group names are `<case>.<source>-to-<target>`, functions `bridge` and `value_round_trip`.
//! Each function's samples are taken with the other side running interleaved ([`paired`]), so
//! the two figures of a group come from the same moments of the machine.

// The allocator the bridge binary runs with (crates/a2a-bridge/src/main.rs), so both the
// translation and the baseline are timed as the bridge would run them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bridge_bench::{cases, codec, translate, value_round_trip};
use bridge_ir::Revision;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn translation(c: &mut Criterion) {
    let cases = match cases() {
        Ok(cases) => cases,
        Err(error) => {
            eprintln!("cannot build the benchmark documents: {error}");
            return;
        }
    };
    for case in &cases {
        for (from, to) in [
            (Revision::V0_3, Revision::V1_0),
            (Revision::V1_0, Revision::V0_3),
        ] {
            let (source, target) = (codec(from), codec(to));
            let input = case.document(from);
            // A translation that fails would time an early return, not the work.
            if let Err(error) = translate(case.kind, source, target, input) {
                eprintln!("skipping {} {from}->{to}: {error}", case.name);
                continue;
            }
            let mut group = c.benchmark_group(format!("{}.{from}-to-{to}", case.name));
            group.throughput(Throughput::Bytes(input.len() as u64));
            let bridge = || {
                let _ = black_box(translate(case.kind, source, target, black_box(input)));
            };
            let baseline = || {
                let _ = black_box(value_round_trip(black_box(input)));
            };
            let chunk = chunk_for(input.len());
            group.bench_function("bridge", |b| {
                b.iter_custom(|iters| paired(iters, chunk, bridge, baseline).0);
            });
            group.bench_function("value_round_trip", |b| {
                b.iter_custom(|iters| paired(iters, chunk, bridge, baseline).1);
            });
            group.finish();
        }
    }
}

/// Calls per timed chunk: about 64 KiB of input (at most 256 calls, at least one), enough that
/// the clock's own cost is noise, few enough that the two sides alternate every few hundred
/// microseconds whatever the document's size, so a slow moment of the machine falls on both.
const fn chunk_for(input_bytes: usize) -> u64 {
    let calls = 64 * 1024 / if input_bytes == 0 { 1 } else { input_bytes };
    if calls > 256 {
        256
    } else if calls < 1 {
        1
    } else {
        calls as u64
    }
}

/// Runs `iters` calls of `a` and of `b` in alternating chunks of `chunk` calls and answers the
/// time each side took. A shared machine's slow moments (another tenant, a frequency change)
/// then fall on both sides alike, which two back-to-back measurements do not guarantee: the
/// ratio of the two is what the benchmark reports.
fn paired(
    iters: u64,
    chunk: u64,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (Duration, Duration) {
    let (mut a_time, mut b_time) = (Duration::ZERO, Duration::ZERO);
    let mut left = iters;
    while left > 0 {
        let n = left.min(chunk);
        let start = Instant::now();
        for _ in 0..n {
            a();
        }
        a_time += start.elapsed();
        let start = Instant::now();
        for _ in 0..n {
            b();
        }
        b_time += start.elapsed();
        left -= n;
    }
    (a_time, b_time)
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(800))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = translation
}
criterion_main!(benches);
