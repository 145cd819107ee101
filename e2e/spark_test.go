package e2e

import (
	"path/filepath"
	"testing"

	"github.com/lancecat/lancecat/internal/testenv"
)

// The engines' venvs and jars: scripts/with-fixtures.sh exports them (scripts/python/versions.txt
// sets spark-*, ray-*; scripts/python/maven-versions.txt set lance-spark-*), or says why it could not
// (the package index or Maven Central unreachable: the only reason these suites skip under make test).
const (
	SparkVenvEnv = "LANCECAT_PYTHON_SPARK"
	RayVenvEnv   = "LANCECAT_PYTHON_RAY"
	SparkJarsEnv = "LANCECAT_MAVEN_LANCE_SPARK"
)

func engineScripts(engine string) string {
	return filepath.Join(pythonScripts(), "..", engine)
}

// TestSpark: Spark 3.5 (PySpark) with the Lance Spark connector, its catalog configured with the REST
// namespace at lancecat serve (the API key as a header): CREATE NAMESPACE, CTAS, INSERT, filtered and
// projected SELECT, DESCRIBE, the connector's ADD COLUMNS backfill, UPDATE/DELETE/MERGE, an index,
// OPTIMIZE, time travel, DROP (scripts/e2e/spark/test_spark.py, value-checked in Spark and in the
// catalog), on a local root and a MinIO root. With authorization off the root is plain (the engine
// commits to storage itself); with it on the root manages table versions, so every commit is the
// catalog's CreateTableVersion and a reader's INSERT is refused there.
func TestSpark(t *testing.T) {
	venv := testenv.PythonVenv(t, SparkVenvEnv)
	jars := testenv.MavenJars(t, SparkJarsEnv)
	eachRootAndAuthz(t, func(t *testing.T, rk rootKind, authorized bool) {
		cfg, root, dirStorage, admin := cellConfig(t, rk, authorized)
		env := []string{"LANCECAT_E2E_ROOT=" + root, "LANCECAT_SPARK_JARS=" + jars}
		headers := map[string]string{}
		if authorized {
			reader := apiKeys(t, cfg, "engine e2e", "spark-reader")[0]
			env = append(env, "LANCECAT_E2E_AUTHZ=1", "LANCECAT_E2E_API_KEY="+admin, "LANCECAT_E2E_READER_KEY="+reader)
			headers["x-api-key"] = admin
		}
		url := serve(t, cfg)
		if authorized {
			enableManagedVersioning(t, url, headers)
			env = append(env, "LANCECAT_E2E_MANAGED=1")
		}
		env = append(env, "LANCECAT_URL="+url)
		if dirStorage != nil {
			// The engine's own credentials (lancecat answers endpoint hints only).
			env = append(env, "AWS_ACCESS_KEY_ID="+dirStorage["aws_access_key_id"], "AWS_SECRET_ACCESS_KEY="+dirStorage["aws_secret_access_key"])
		}
		n := runPytestIn(t, engineScripts("spark"), venv, env, "test_spark.py")
		t.Logf("cell spark-3.5.8+lance-spark-0.4.0/%s/%s: %s", rk.name, authzName(authorized), n)
	})
}
