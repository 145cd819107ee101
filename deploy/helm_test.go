// Package deploy tests lancecat's deployment artefacts (the Helm chart, the compose file); the
// image and its builder are in ./image. It is its own module so that helm, the Kubernetes API types
// and compose-go stay out of the server's go.mod.
package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/lancecat"

// valueSets are the chart's tested configurations: its defaults, a production one (secrets by
// reference, OIDC, webhooks, HPA, ServiceMonitor, restricted egress) and a MinIO trial one.
var valueSets = []struct {
	name, file string
	want       []string // kind/name-suffix of every rendered object, sorted
}{
	{"default", "", []string{"Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
	{"production", "testdata/values-production.yaml", []string{"Deployment", "HorizontalPodAutoscaler", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount", "ServiceMonitor"}},
	{"minio", "testdata/values-minio.yaml", []string{"Deployment", "Service"}},
	{"tls", "testdata/values-tls.yaml", []string{"ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "Service", "ServiceAccount"}},
}

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if file != "" {
		raw, err := os.ReadFile(file)
		assert.NilError(t, err)
		assert.NilError(t, yaml.UnmarshalStrict(raw, &vals))
	}
	return vals
}

// TestChartLint is `helm lint --strict` for every value set.
func TestChartLint(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			lint := action.NewLint()
			lint.Strict = true
			res := lint.Run([]string{chartDir}, readValues(t, vs.file))
			for _, m := range res.Messages {
				t.Logf("lint: %s", m)
			}
			assert.Assert(t, len(res.Errors) == 0, "helm lint: %v", res.Errors)
			assert.Assert(t, !action.HasWarningsOrErrors(res), "helm lint --strict found warnings: %v", res.Messages)
		})
	}
}

// render is `helm template rel <chart> -f file`: the rendered manifests by template name.
func render(t *testing.T, vals map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	assert.NilError(t, err)
	rv, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{Name: "rel", Namespace: "lake", IsInstall: true, Revision: 1}, common.DefaultCapabilities)
	assert.NilError(t, err)
	return engine.Render(ch, rv)
}

// serviceMonitor mirrors the fields of monitoring.coreos.com/v1 the chart sets (the Prometheus
// Operator's Go types are not a dependency): a field the chart adds and this lacks fails decoding.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port      string         `json:"port"`
			Path      string         `json:"path"`
			Interval  string         `json:"interval"`
			Scheme    string         `json:"scheme"`
			TLSConfig map[string]any `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func typed(kind string) any {
	switch kind {
	case "Deployment":
		return &appsv1.Deployment{}
	case "Service":
		return &corev1.Service{}
	case "ServiceAccount":
		return &corev1.ServiceAccount{}
	case "PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case "NetworkPolicy":
		return &networkingv1.NetworkPolicy{}
	case "ServiceMonitor":
		return &serviceMonitor{}
	case "ConfigMap":
		return &corev1.ConfigMap{}
	}
	return nil
}

// decodeStrict decodes every YAML document of the rendered chart into its API type, failing on an
// unknown field or kind; it answers the objects by kind.
func decodeStrict(t *testing.T, rendered map[string]string) map[string]any {
	t.Helper()
	objs := map[string]any{}
	names := make([]string, 0, len(rendered))
	for n := range rendered {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !strings.HasSuffix(n, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(rendered[n], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			assert.NilError(t, err, "%s", n)
			var tm metav1.TypeMeta
			assert.NilError(t, json.Unmarshal(js, &tm), "%s", n)
			obj := typed(tm.Kind)
			assert.Assert(t, obj != nil, "%s: unexpected kind %s/%s", n, tm.APIVersion, tm.Kind)
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.DisallowUnknownFields()
			assert.NilError(t, dec.Decode(obj), "%s: %s", n, doc)
			_, err = dec.Token()
			assert.Assert(t, errors.Is(err, io.EOF), "%s: trailing data", n)
			_, dup := objs[tm.Kind]
			assert.Assert(t, !dup, "two %s", tm.Kind)
			objs[tm.Kind] = obj
		}
	}
	return objs
}

func env(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

// TestChartTemplate renders each value set, decodes every object strictly into the k8s.io/api
// types, and checks what the chart promises: probes on the real endpoints, a non-root read-only
// container, secrets by reference, the operations port for metrics, the maintenance settings.
func TestChartTemplate(t *testing.T) {
	serveFlags := lancecatEnvVars(t)
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			rendered, err := render(t, readValues(t, vs.file))
			assert.NilError(t, err)
			objs := decodeStrict(t, rendered)
			var kinds []string
			for k, o := range objs {
				kinds = append(kinds, k)
				t.Logf("%s/%s", k, o.(metav1.Object).GetName())
			}
			sort.Strings(kinds)
			assert.DeepEqual(t, kinds, vs.want)

			d := objs["Deployment"].(*appsv1.Deployment)
			pod := d.Spec.Template.Spec
			assert.Equal(t, len(pod.Containers), 1)
			c := pod.Containers[0]
			assert.Equal(t, c.ReadinessProbe.HTTPGet.Path, "/readyz")
			assert.Equal(t, c.LivenessProbe.HTTPGet.Path, "/healthz")
			assert.Assert(t, *pod.SecurityContext.RunAsNonRoot && *pod.SecurityContext.RunAsUser == 65532)
			assert.Assert(t, *c.SecurityContext.ReadOnlyRootFilesystem && !*c.SecurityContext.AllowPrivilegeEscalation)
			assert.Assert(t, c.Resources.Requests.Cpu().MilliValue() > 0 && !c.Resources.Limits.Memory().IsZero())
			if hpa, ok := objs["HorizontalPodAutoscaler"].(*autoscalingv2.HorizontalPodAutoscaler); ok {
				assert.Assert(t, d.Spec.Replicas == nil, "the HPA owns replicas")
				assert.Assert(t, *hpa.Spec.MinReplicas >= 2)
			} else {
				assert.Assert(t, *d.Spec.Replicas >= 2)
			}
			e := env(c)
			for name := range e {
				// Every variable the chart sets is one lancecat reads (TMPDIR is Go's).
				if name == "TMPDIR" {
					continue
				}
				assert.Assert(t, slices.Contains(serveFlags, name), "the chart sets %s, which `lancecat serve` does not read", name)
			}
			for _, v := range c.Env {
				if v.ValueFrom != nil {
					assert.Assert(t, v.ValueFrom.SecretKeyRef != nil, "%s", v.Name)
				}
			}
			switch vs.name {
			case "default":
				assert.Equal(t, e["LANCECAT_AUTHZ"].Value, "openfga")
				assert.Equal(t, e["LANCECAT_METRICS_ADDR"].Value, "0.0.0.0:9090")
				assert.Equal(t, e["LANCECAT_MAINTENANCE_INTERVAL"].Value, "1h")
			case "production":
				for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
					assert.Equal(t, p.HTTPGet.Port.String(), "http")
					assert.Equal(t, p.HTTPGet.Scheme, corev1.URISchemeHTTPS, "the API port serves HTTPS")
				}
				sm := objs["ServiceMonitor"].(*serviceMonitor)
				assert.Equal(t, sm.Spec.Endpoints[0].Scheme, "https")
				assert.DeepEqual(t, sm.Spec.Endpoints[0].TLSConfig, map[string]any{"serverName": "lancecat-ops"})
				for name, secret := range map[string]string{"LANCECAT_S3_ACCESS_KEY": "lancecat-s3", "LANCECAT_S3_SECRET_KEY": "lancecat-s3", "LANCECAT_OPENFGA_TOKEN": "lancecat-openfga"} {
					assert.Equal(t, e[name].ValueFrom.SecretKeyRef.Name, secret, name)
				}
				assert.Equal(t, e["LANCECAT_CONSOLE_OIDC_CLIENT_SECRET_FILE"].Value, "/var/run/secrets/lancecat/oidc/client-secret")
				assert.Equal(t, e["LANCECAT_WEBHOOK_SECRET_FILE"].Value, "/var/run/secrets/lancecat/webhook/secret")
				var secrets []string
				for _, v := range pod.Volumes {
					if v.Secret != nil {
						secrets = append(secrets, v.Secret.SecretName)
					}
				}
				assert.DeepEqual(t, secrets, []string{"lancecat-tls", "lancecat-oidc", "lancecat-webhook"})
				assert.Equal(t, sm.Spec.Endpoints[0].Port, "ops")
				svc := objs["Service"].(*corev1.Service)
				assert.Equal(t, svc.Spec.Ports[1].Name, "ops")
				assert.Equal(t, svc.Spec.Ports[1].Port, int32(9090))
			case "tls":
				// HTTPS on the API port with client certificates required: the kubelet has none,
				// so the probes ask the operations port, plain.
				for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
					assert.Equal(t, p.HTTPGet.Port.String(), "ops")
					assert.Equal(t, p.HTTPGet.Scheme, corev1.URISchemeHTTP)
				}
				assert.Equal(t, e["LANCECAT_TLS_CERT_FILE"].Value, "/var/run/secrets/lancecat/tls/tls.crt")
				assert.Equal(t, e["LANCECAT_TLS_KEY_FILE"].Value, "/var/run/secrets/lancecat/tls/tls.key")
				assert.Equal(t, e["LANCECAT_TLS_CLIENT_CA_FILE"].Value, "/var/run/secrets/lancecat/client-ca/ca.crt")
				assert.Equal(t, e["LANCECAT_TLS_CLIENT_AUTH"].Value, "require")
				assert.Equal(t, e["LANCECAT_TLS_RELOAD_INTERVAL"].Value, "30s")
				assert.Equal(t, e["LANCECAT_CONFIG"].Value, "/etc/lancecat/config.yaml")
				mounts := map[string]string{}
				for _, m := range c.VolumeMounts {
					assert.Assert(t, m.SubPath == "", "%s: a subPath mount is never updated, so a rotated certificate would not reach the server", m.Name)
					mounts[m.Name] = m.MountPath
				}
				assert.Equal(t, mounts["tls"], "/var/run/secrets/lancecat/tls")
				assert.Equal(t, mounts["config"], "/etc/lancecat")
				sources := map[string]string{}
				for _, v := range pod.Volumes {
					switch {
					case v.Secret != nil:
						sources[v.Name] = v.Secret.SecretName
					case v.ConfigMap != nil:
						sources[v.Name] = v.ConfigMap.Name
					}
				}
				assert.DeepEqual(t, sources, map[string]string{"tls": "lancecat-tls", "client-ca": "lancecat-client-ca", "config": d.Name})
				assert.Assert(t, d.Spec.Template.Annotations["checksum/config"] != "", "a changed file rolls the replicas")
				// The file's keys are settings lancecat reads (as their LANCECAT_* variables).
				cm := objs["ConfigMap"].(*corev1.ConfigMap)
				var file map[string]any
				assert.NilError(t, yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &file))
				assert.DeepEqual(t, flatKeys("", file), []string{"maintenance-interval", "openfga-timeout", "trusted-proxies"})
				for _, k := range flatKeys("", file) {
					v := "LANCECAT_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
					assert.Assert(t, slices.Contains(serveFlags, v), "config key %s is no setting", k)
				}
			case "minio":
				assert.Equal(t, *d.Spec.Replicas, int32(3))
				assert.Equal(t, e["LANCECAT_S3_ENDPOINT"].Value, "minio:9000")
				assert.Equal(t, e["LANCECAT_S3_ACCESS_KEY"].ValueFrom.SecretKeyRef.Key, "rootUser")
				_, metrics := e["LANCECAT_METRICS_ADDR"]
				assert.Assert(t, !metrics)
				_, fga := e["LANCECAT_OPENFGA_URL"]
				assert.Assert(t, !fga)
			}
		})
	}
}

// TestChartRefuses: values that cannot give a working multi-replica catalog fail rendering with a
// message naming the problem.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		vals map[string]any
		want string
	}{
		{map[string]any{"replicaCount": 1}, "replicaCount must be at least 2"},
		{map[string]any{"root": "/data"}, "root must be an s3:// root"},
		{map[string]any{"tls": map[string]any{"existingSecret": "t", "clientCASecret": "ca"}, "metrics": map[string]any{"enabled": false}}, "tls.clientAuth require needs metrics.enabled"},
		{map[string]any{"tls": map[string]any{"existingSecret": "t", "clientCASecret": "ca", "metrics": true}}, "leaves no port the kubelet can probe"},
		{map[string]any{"tls": map[string]any{"clientCASecret": "ca"}}, "tls.clientCASecret needs tls.existingSecret"},
		{map[string]any{"tls": map[string]any{"metrics": true}}, "tls.metrics needs tls.existingSecret"},
		{map[string]any{"config": map[string]any{"config": "/x.yaml"}}, "config must not name another config file"},
	} {
		_, err := render(t, tc.vals)
		assert.ErrorContains(t, err, tc.want)
	}
}

// lancecatEnvVars are the LANCECAT_* variables the server's non-test source names (its flag
// definitions pair each flag with one), read from the source: this module does not import the server.
func lancecatEnvVars(t *testing.T) []string {
	t.Helper()
	// The settings live in the composition root (app/config*.go) since it moved out of server/.
	files, err := filepath.Glob("../app/*.go")
	assert.NilError(t, err)
	more, err := filepath.Glob("../server/*.go")
	assert.NilError(t, err)
	files = append(files, more...)
	var vars []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		assert.NilError(t, err)
		vars = append(vars, envVar.FindAllString(string(raw), -1)...)
	}
	assert.Assert(t, slices.Contains(vars, "LANCECAT_ROOT"), "no LANCECAT_ROOT in %v", files)
	return vars
}

var envVar = regexp.MustCompile(`LANCECAT_[A-Z0-9_]+`)

// flatKeys are a --config file's settings: nested keys joined with "-", sorted.
func flatKeys(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		if prefix != "" {
			k = prefix + "-" + k
		}
		if sub, ok := v.(map[string]any); ok {
			out = append(out, flatKeys(k, sub)...)
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
