//! Times the translation of whole JSON-RPC documents between A2A 0.3 and 1.0.
//!
//! Each case is timed in both directions, and beside it, on the same input document, the
//! baseline: a `serde_json::Value` round trip. Throughput is the input document's size, so the
//! 1 MiB inline-file case reads in bytes per second. `scripts/bench-translate.sh` runs this and
//! writes the table in `docs/benchmarks.md`.
//!
//! Group names are `<case>.<source>-to-<target>`, functions `bridge` and `value_round_trip`.

// The allocator the bridge binary runs with (crates/a2a-bridge/src/main.rs), so both the
// translation and the baseline are timed as the bridge would run them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Duration;

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
            group.bench_function("bridge", |b| {
                b.iter(|| translate(case.kind, source, target, black_box(input)));
            });
            group.bench_function("value_round_trip", |b| {
                b.iter(|| value_round_trip(black_box(input)));
            });
            group.finish();
        }
    }
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
