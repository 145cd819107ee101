"""Schemathesis hooks for e2e/schemathesis_test.go (SCHEMATHESIS_HOOKS=schemathesis_hooks).

The Arrow IPC doors (create, insert, merge_insert) take application/vnd.apache.arrow.stream, which
schemathesis has no serializer for: they get whatever hypothesis generated, as bytes — junk the
Arrow decoder must refuse with a 4xx, never a 5xx.
"""
import json

import schemathesis


@schemathesis.serializer("application/vnd.apache.arrow.stream")
def raw_bytes(ctx, value):
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return json.dumps(value, default=str).encode()
