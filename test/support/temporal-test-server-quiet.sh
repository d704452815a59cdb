#!/bin/sh
# sdk-java's time-skipping test server with its own log kept out of the test output: it prints
# gRPC stream warnings and, at each refused unlock, its whole time-lock history, which grows with
# the run (docs/testing.md "One Temporal server of each kind per run"). `exec` keeps the server
# this process, so the SDK's shutdown reaches it. TEMPORAL_TEST_SERVER_LOG names a file to keep it.
exec "$PIXFLOW_TEST_SERVER_BINARY" "$@" >>"${TEMPORAL_TEST_SERVER_LOG:-/dev/null}" 2>&1
