//! Compiles an A2A revision's `.proto` into an encoded `FileDescriptorSet` at build time, with
//! protox (a protobuf compiler in Rust, so no system `protoc` is needed), against the Google API
//! protos vendored here (`proto/google`, see its README). The codec crates call it from their
//! build scripts and embed the result; the gRPC adapters read messages through it.

use std::path::{Path, PathBuf};

/// Where the vendored Google API protos are.
#[must_use]
pub fn google_protos() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("proto")
}

/// The encoded `FileDescriptorSet` of `file` (found below `root`), its imports included, with
/// the `google.rpc` status and error-detail messages added.
///
/// # Errors
///
/// The compiler's message when the file does not compile.
pub fn compile(root: &Path, file: &str) -> Result<Vec<u8>, String> {
    let google = google_protos();
    let mut compiler =
        protox::Compiler::new([root.to_path_buf(), google]).map_err(|e| e.to_string())?;
    compiler.include_imports(true).include_source_info(false);
    compiler
        .open_files([
            file,
            "google/rpc/status.proto",
            "google/rpc/error_details.proto",
        ])
        .map_err(|e| format!("{file}: {e}"))?;
    Ok(compiler.encode_file_descriptor_set())
}

/// The whole build script of a codec crate: compiles `proto/a2a.proto` below the crate's
/// manifest directory into `$OUT_DIR/a2a.bin` and its message types ([`generate`]), and asks to
/// run again when the protos change.
/// A failure is printed as a cargo warning and fails the build.
#[expect(
    clippy::print_stdout,
    reason = "a build script speaks to cargo on stdout"
)]
pub fn build_script() {
    let root = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("proto");
    println!("cargo:rerun-if-changed={}", root.display());
    let set = match compile(&root, "a2a.proto") {
        Ok(set) => set,
        Err(why) => {
            println!("cargo:warning=proto/a2a.proto does not compile: {why}");
            std::process::exit(1);
        }
    };
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let out = out_dir.join("a2a.bin");
    if let Err(why) = std::fs::write(&out, &set) {
        println!("cargo:warning=cannot write {}: {why}", out.display());
        std::process::exit(1);
    }
    if let Err(why) = generate(&set, &out_dir) {
        println!("cargo:warning=cannot generate the message types: {why}");
        std::process::exit(1);
    }
}

/// Generates the Rust message types of every file in the encoded `set` into `out_dir` (one
/// file per package, `lf.a2a.v1.rs`, `a2a.v1.rs`, `google.rpc.rs`, …), with prost-build; the
/// well-known types are `prost_types`' (prost-build's default).
///
/// # Errors
///
/// The message when the set does not decode or the code cannot be written.
pub fn generate(set: &[u8], out_dir: &Path) -> Result<(), String> {
    use prost::Message as _;
    let set = prost_types::FileDescriptorSet::decode(set).map_err(|e| e.to_string())?;
    prost_build::Config::new()
        .out_dir(out_dir)
        .compile_fds(set)
        .map_err(|e| e.to_string())
}
