//! Integration tests of the 0.3 codec through its public port.

mod direct;
mod golden;
mod grpc;
mod properties;
mod rest_direct;
