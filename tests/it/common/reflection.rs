//! A reflection client, as grpcurl is one: it lists the services a server offers and fetches the
//! descriptors of a symbol (with every file they import), from which a status's details decode
//! with no `.proto` file at hand. Built from crates (tonic-reflection's client, prost-reflect),
//! so `cargo test` needs nothing installed; the README's session runs the real grpcurl.

use prost::Message;
use prost_reflect::DescriptorPool;
use std::collections::BTreeMap;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
use tonic_reflection::pb::v1::ServerReflectionRequest;

/// One reflection question to the server at `addr` (host:port), and its answer.
async fn ask(addr: &str, request: MessageRequest) -> MessageResponse {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap_or_else(|e| panic!("connecting to {addr}: {e}"));
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(request),
    };
    let mut answers = ServerReflectionClient::new(channel)
        .server_reflection_info(tokio_stream::once(request))
        .await
        .expect("reflection answers")
        .into_inner();
    answers
        .message()
        .await
        .expect("a reflection answer")
        .expect("one answer")
        .message_response
        .expect("an answer with a response")
}

/// The services the server lists (`grpcurl list`).
pub async fn list(addr: &str) -> Vec<String> {
    match ask(addr, MessageRequest::ListServices(String::new())).await {
        MessageResponse::ListServicesResponse(r) => r.service.into_iter().map(|s| s.name).collect(),
        other => panic!("ListServices answered {other:?}"),
    }
}

/// The descriptors of the files that define `symbols`, and of every file they import, as the
/// server's reflection serves them.
pub async fn pool(addr: &str, symbols: &[&str]) -> DescriptorPool {
    let mut files: BTreeMap<String, prost_types::FileDescriptorProto> = BTreeMap::new();
    let mut wanted: Vec<MessageRequest> = symbols
        .iter()
        .map(|s| MessageRequest::FileContainingSymbol(s.to_string()))
        .collect();
    while let Some(request) = wanted.pop() {
        let asked = format!("{request:?}");
        let MessageResponse::FileDescriptorResponse(r) = ask(addr, request).await else {
            panic!("{asked}: no file descriptors");
        };
        for bytes in r.file_descriptor_proto {
            let file = prost_types::FileDescriptorProto::decode(bytes.as_slice()).unwrap();
            for import in &file.dependency {
                if !files.contains_key(import) {
                    wanted.push(MessageRequest::FileByFilename(import.clone()));
                }
            }
            files.insert(file.name().to_string(), file);
        }
    }
    DescriptorPool::from_file_descriptor_set(prost_types::FileDescriptorSet {
        file: files.into_values().collect(),
    })
    .expect("the served descriptors form a whole set")
}
