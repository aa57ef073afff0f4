//! Compiles this revision's gRPC proto (`proto/a2a.proto`) into the descriptor set the crate
//! embeds (`grpc::DESCRIPTORS`).

fn main() {
    bridge_proto::build_script();
}
