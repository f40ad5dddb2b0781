//! Runs the benchmark scripts on native QuickJS, the same engine version the component embeds,
//! and prints one JSON object of timings (milliseconds). `cargo xtask bench` compares them with
//! the component's.

use std::time::Instant;

use rquickjs::{Context, Runtime};

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// A fresh runtime and context, then `source` as an async function body: what the component does
/// per execution, minus the sandbox.
fn run(source: &str) -> f64 {
    let started = Instant::now();
    let runtime = Runtime::new().expect("runtime");
    let context = Context::full(&runtime).expect("context");
    context.with(|ctx| {
        let body: rquickjs::Function = ctx
            .eval(format!("(async function () {{{source}\n}})"))
            .expect("compiles");
        let promise: rquickjs::Promise = body.call(()).expect("runs");
        while ctx.execute_pending_job() {}
        let _: rquickjs::Value = promise.finish().expect("settles");
    });
    started.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let mut return_one: Vec<f64> = (0..300).map(|_| run("return 1")).collect();
    let cpu = "let s = 0; for (let i = 1; i <= 10000000; i++) s += i; return s;";
    let mut cpu_runs: Vec<f64> = (0..3).map(|_| run(cpu)).collect();
    println!(
        "{}",
        serde_json::json!({
            "native_return_1_p50_ms": percentile(&mut return_one, 0.5),
            "native_cpu_sum_1e7_ms": percentile(&mut cpu_runs, 0.5),
        })
    );
}
