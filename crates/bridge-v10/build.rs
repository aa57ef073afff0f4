//! Compiles this revision's gRPC proto (`proto/a2a.proto`) into the descriptor set the crate
//! embeds (`grpc::DESCRIPTORS`).

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    println!("cargo:rerun-if-changed={}", root.display());
    let set = match bridge_proto::compile(&root, "a2a.proto") {
        Ok(set) => set,
        Err(why) => {
            println!("cargo:warning=proto/a2a.proto does not compile: {why}");
            std::process::exit(1);
        }
    };
    let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("a2a.bin");
    if let Err(why) = std::fs::write(&out, set) {
        println!("cargo:warning=cannot write {}: {why}", out.display());
        std::process::exit(1);
    }
}
