"""Shared setup of the Spark suite (run by e2e/spark_test.go through pytest): one SparkSession
(local[2]) with the Lance Spark connector's catalog pointed at lancecat serve.

Environment (set by the Go test):
  LANCECAT_URL              the catalog, http://127.0.0.1:<port>
  LANCECAT_SPARK_JARS       the connector's jars (scripts/python/install-maven.sh lance-spark-0.4.0)
  LANCECAT_E2E_ROOT         the catalog root (a local path or s3://bucket/prefix)
  LANCECAT_E2E_AUTHZ=1      authorization is on; then
  LANCECAT_E2E_API_KEY      an estate admin's API key (catalog "lance" sends it as x-api-key)
  LANCECAT_E2E_READER_KEY   the key of a user with no grant but the reader ones the suite gives
                            (catalog "asreader")
  LANCECAT_E2E_MANAGED=1    the root has table_version_management=true: every commit goes through
                            the catalog (CreateTableVersion), so the catalog can refuse one
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
                            the engine's own S3 credentials (an S3 root: lancecat answers table
                            locations with endpoint hints only)
"""

import glob
import json
import os
import urllib.error
import urllib.parse
import urllib.request

import pytest
from pyspark.sql import SparkSession

URL = os.environ.get("LANCECAT_URL", "http://127.0.0.1:2333")
ROOT = os.environ.get("LANCECAT_E2E_ROOT", "")
AUTHZ = os.environ.get("LANCECAT_E2E_AUTHZ") == "1"
API_KEY = os.environ.get("LANCECAT_E2E_API_KEY", "")
READER_KEY = os.environ.get("LANCECAT_E2E_READER_KEY", "")
MANAGED = os.environ.get("LANCECAT_E2E_MANAGED") == "1"
# snippet-begin: catalog
CATALOG_CLASS = "org.lance.spark.LanceNamespaceSparkCatalog"


def _catalog(builder, name, key):
    p = f"spark.sql.catalog.{name}"
    builder = builder.config(p, CATALOG_CLASS).config(p + ".impl", "rest").config(p + ".uri", URL)
    if key:
        # The connector hands its catalog options to the REST namespace, which sends every
        # "header.<name>" property as a request header.
        builder = builder.config(p + ".header.x-api-key", key)
    return builder
# snippet-end: catalog


@pytest.fixture(scope="session")
def spark():
    jars = sorted(glob.glob(os.path.join(os.environ["LANCECAT_SPARK_JARS"], "*.jar")))
    assert jars, "no connector jars in LANCECAT_SPARK_JARS"
    b = (
        SparkSession.builder.master("local[2]")
        .appName("lancecat-e2e")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.lance.spark.extensions.LanceSparkSessionExtensions")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "1g")
    )
    b = _catalog(b, "lance", API_KEY)
    if AUTHZ:
        b = _catalog(b, "asreader", READER_KEY)
        b = _catalog(b, "nokey", "lck_not_a_key")
    s = b.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    yield s


def rows(spark, sql):
    """The statement's rows as tuples."""
    return [tuple(r) for r in spark.sql(sql).collect()]


def api(path, body=None, key=None, method="POST"):
    """A request to the catalog itself (the cross-check of what the engine did): (status, JSON)."""
    key = API_KEY if key is None else key
    headers = {"content-type": "application/json"}
    if key:
        headers["x-api-key"] = key
    data = None if method == "GET" else json.dumps(body or {}).encode()
    req = urllib.request.Request(URL + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def table_path(*parts):
    return "/v1/table/" + urllib.parse.quote("$".join(parts), safe="") + "/"
