//! Runs one benchmark case's translation in a loop, for a profiler (`valgrind --tool=callgrind`,
//! `perf record`) to look at without criterion's own work in the picture.
//!
//! `profile <case> <0.3|1.0> <iterations> [baseline|serde]`: translates the case's document in
//! that revision into the other one `iterations` times; with `baseline` runs the
//! `serde_json::Value` round trip instead, with `serde` translates with the codecs' serde wire
//! types alone (no direct paths).

// The allocator the bridge binary runs with (crates/a2a-bridge/src/main.rs), so both the
// translation and the baseline are timed as the bridge would run them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::process::ExitCode;

use bridge_bench::{cases, codec, serde_codec, translate, value_round_trip};
use bridge_ir::Revision;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(from), Some(iterations)) = (args.first(), args.get(1), args.get(2))
    else {
        eprintln!("usage: profile <case> <0.3|1.0> <iterations> [baseline|serde]");
        return ExitCode::FAILURE;
    };
    let (from, to) = match from.as_str() {
        "0.3" => (Revision::V0_3, Revision::V1_0),
        "1.0" => (Revision::V1_0, Revision::V0_3),
        other => {
            eprintln!("unknown revision {other}");
            return ExitCode::FAILURE;
        }
    };
    let Ok(iterations) = iterations.parse::<u32>() else {
        eprintln!("iterations must be a number");
        return ExitCode::FAILURE;
    };
    let baseline = args.get(3).is_some_and(|a| a == "baseline");
    let codec = if args.get(3).is_some_and(|a| a == "serde") {
        serde_codec
    } else {
        codec
    };
    let Some(case) = cases()
        .ok()
        .and_then(|cases| cases.into_iter().find(|c| c.name == name.as_str()))
    else {
        eprintln!("no case {name}");
        return ExitCode::FAILURE;
    };
    let input = case.document(from);
    for _ in 0..iterations {
        if baseline {
            let _ = black_box(value_round_trip(black_box(input)));
        } else if let Err(error) = black_box(translate(
            case.kind,
            codec(from),
            codec(to),
            black_box(input),
        )) {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
