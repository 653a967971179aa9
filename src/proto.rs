//! The generated `nudge.v1` types, clients and servers (from `proto/nudge/v1/*.proto`), and the
//! encoded descriptor set that server reflection serves.

/// The `nudge.v1` package.
pub mod v1 {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("nudge.v1");
}

/// Every `nudge.v1` file, encoded, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("nudge_descriptor");
