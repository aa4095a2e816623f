# Loaded by scripts/schemathesis.sh (SCHEMATHESIS_HOOKS): tus PATCH bodies (application/offset+octet-stream,
# docs/openapi.yaml's Proof section) are raw bytes, sent as schemathesis sends application/octet-stream.
import schemathesis

schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")
