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
