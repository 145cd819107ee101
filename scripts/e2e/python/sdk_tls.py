"""The official LanceDB Python SDK in remote mode against lancecat over HTTPS: the CA in
ClientConfig(tls_config=TlsConfig(ssl_ca_cert=...)), plus cert_file/key_file for mTLS. A table is
created, written, counted and read back; a client without the CA (or the client certificate) must
be refused. Exits non-zero on the first failure.

usage: python sdk_tls.py <https url> <ca file> [<client cert> <client key>]
"""

import os
import sys

import lancedb
from lancedb.remote import ClientConfig, RetryConfig, TlsConfig

url, ca = sys.argv[1], sys.argv[2]
cert, key = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else (None, None)
no_retry = RetryConfig(retries=0, connect_retries=0, read_retries=0)


def connect(tls):
    return lancedb.connect("db://lancecat", api_key="tls-e2e", host_override=url,
                           client_config=ClientConfig(tls_config=tls, retry_config=no_retry))


db = connect(TlsConfig(ssl_ca_cert=ca, cert_file=cert, key_file=key))
tbl = db.create_table("over_tls_py", data=[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
tbl.add([{"id": 3, "name": "c"}])
n = tbl.count_rows()
assert n == 3, f"count_rows over TLS: {n}, want 3"
rows = tbl.search().where("id = 3").to_list()
assert len(rows) == 1 and rows[0]["name"] == "c", f"query over TLS: {rows}"
assert "over_tls_py" in list(db.table_names()), "table_names over TLS"


def refused(tls, what):
    try:
        list(connect(tls).table_names())
    except Exception as e:  # the SDK's error type differs across versions
        print(f"{what}: refused ({str(e).splitlines()[0][:160]})")
        return
    raise SystemExit(f"{what}: the connection was accepted")


refused(TlsConfig(), "no CA")
if cert:
    refused(TlsConfig(ssl_ca_cert=ca), "no client certificate")
print(f"sdk_tls.py ok: {n} rows over {'mTLS' if cert else 'TLS'}")

# lancedb 0.30.2's runtime threads can abort the interpreter while it finalizes ("PyGILState_Release:
# thread state ... must be current"), after every check above has passed; leave without finalizing
# so that the exit status says what the checks found.
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
