// Package kubernetes holds the manifests that run dbprobe's clients as a
// Kubernetes Indexed Job; its test decodes them. It is a package of its
// own so that only this test, never the dbprobe binary, depends on the
// Kubernetes API's modules.
package kubernetes

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/dbprobe/dbprobe/internal/cli"
)

// manifests are the documents of every *.yaml here, decoded strictly
// into the Kubernetes API's own types: a field the API does not have (a
// typo, a field at the wrong level) fails the test, as kubectl apply
// --validate=strict would refuse it.
type manifests struct {
	jobs       map[string]*batchv1.Job
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
	claims     map[string]*corev1.PersistentVolumeClaim
}

func load(t *testing.T) manifests {
	t.Helper()
	m := manifests{jobs: map[string]*batchv1.Job{}, secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			var obj any
			var name func() string
			switch meta.APIVersion + " " + meta.Kind {
			case "batch/v1 Job":
				o := &batchv1.Job{}
				obj, name = o, func() string { m.jobs[o.Name] = o; return o.Name }
			case "v1 Secret":
				o := &corev1.Secret{}
				obj, name = o, func() string { m.secrets[o.Name] = o; return o.Name }
			case "v1 ConfigMap":
				o := &corev1.ConfigMap{}
				obj, name = o, func() string { m.configMaps[o.Name] = o; return o.Name }
			case "v1 PersistentVolumeClaim":
				o := &corev1.PersistentVolumeClaim{}
				obj, name = o, func() string { m.claims[o.Name] = o; return o.Name }
			default:
				t.Fatalf("%s document %d: %s %s is not a kind this test knows; add it", f, i+1, meta.APIVersion, meta.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			if name() == "" {
				t.Fatalf("%s document %d has no name", f, i+1)
			}
		}
	}
	return m
}

func TestManifestsDecodeStrictly(t *testing.T) {
	m := load(t)
	for _, name := range []string{"dbprobe-load", "dbprobe-run", "dbprobe-merge"} {
		if m.jobs[name] == nil {
			t.Fatalf("no Job %s", name)
		}
	}
	if m.secrets["dbprobe-db"] == nil || m.configMaps["dbprobe-start-at"] == nil || m.claims["dbprobe-results"] == nil {
		t.Fatal("the Secret, the ConfigMap or the volume claim is missing")
	}
}

func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	// The test's own check: a field at the wrong level must fail.
	bad := []byte("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\nspec:\n  completionMode: Indexed\n  complettions: 3\n")
	if err := yaml.UnmarshalStrict(bad, &batchv1.Job{}); err == nil {
		t.Fatal("a misspelt field was accepted")
	}
}

// varRef is a $(VAR) reference, which Kubernetes expands in args from the
// container's environment.
var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestIndexedJobsWiring checks what a cluster cannot show until it runs:
// the completion index becomes --client-index, completions and
// parallelism are --client-count, every client writes its own result on
// the shared volume, the merge step reads exactly those, the database
// comes from the Secret and nothing secret is on a command line, and the
// args are flags dbprobe takes.
func TestIndexedJobsWiring(t *testing.T) {
	m := load(t)
	written := map[string][]string{}
	for _, phase := range []string{"load", "run"} {
		j := m.jobs["dbprobe-"+phase]
		s := j.Spec
		if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
			t.Fatalf("%s: completionMode is not Indexed", j.Name)
		}
		if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
			t.Fatalf("%s: completions and parallelism must be equal, every client at once", j.Name)
		}
		n := int(*s.Completions)
		pod := s.Template.Spec
		if pod.RestartPolicy != corev1.RestartPolicyNever || s.BackoffLimit == nil || *s.BackoffLimit != 0 {
			t.Fatalf("%s: a failed client must not be run again after --start-at", j.Name)
		}
		if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Fatalf("%s: not run as a non-root user", j.Name)
		}
		if len(pod.Containers) != 1 {
			t.Fatalf("%s: %d containers, want the one client", j.Name, len(pod.Containers))
		}
		c := pod.Containers[0]
		env := map[string]corev1.EnvVar{}
		for _, e := range c.Env {
			env[e.Name] = e
		}
		idx := env["JOB_COMPLETION_INDEX"]
		if idx.ValueFrom == nil || idx.ValueFrom.FieldRef == nil || idx.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			t.Fatalf("%s: JOB_COMPLETION_INDEX is not the pod's completion index annotation: %+v", j.Name, idx)
		}
		for _, key := range []string{"DBPROBE_DB", "DBPROBE_PASSWORD"} {
			e := env[key]
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Fatalf("%s: %s does not come from a Secret", j.Name, key)
			}
			sec := m.secrets[e.ValueFrom.SecretKeyRef.Name]
			if sec == nil {
				t.Fatalf("%s: %s names Secret %s, which no manifest holds", j.Name, key, e.ValueFrom.SecretKeyRef.Name)
			}
			if _, ok := sec.StringData[e.ValueFrom.SecretKeyRef.Key]; !ok {
				t.Fatalf("%s: Secret %s has no key %s", j.Name, sec.Name, e.ValueFrom.SecretKeyRef.Key)
			}
		}
		start := env["START_AT"]
		if start.ValueFrom == nil || start.ValueFrom.ConfigMapKeyRef == nil || m.configMaps[start.ValueFrom.ConfigMapKeyRef.Name] == nil {
			t.Fatalf("%s: START_AT does not come from the ConfigMap", j.Name)
		}
		for _, a := range c.Args {
			for _, bad := range []string{"password", "DBPROBE_PASSWORD", "--db"} {
				if strings.Contains(a, bad) {
					t.Fatalf("%s: argument %q: the database and its password come from the Secret, never the command line", j.Name, a)
				}
			}
		}
		mounts := map[string]string{}
		for _, v := range c.VolumeMounts {
			mounts[v.Name] = v.MountPath
		}
		for _, v := range pod.Volumes {
			if v.PersistentVolumeClaim != nil && m.claims[v.PersistentVolumeClaim.ClaimName] == nil {
				t.Fatalf("%s: volume %s claims %s, which no manifest holds", j.Name, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}

		// Each client as Kubernetes starts it: $(VAR) expanded from its
		// environment, then parsed by dbprobe's own command.
		for i := range n {
			values := map[string]string{
				"JOB_COMPLETION_INDEX": strconv.Itoa(i),
				"START_AT":             time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			}
			args := make([]string, len(c.Args))
			for k, a := range c.Args {
				args[k] = varRef.ReplaceAllStringFunc(a, func(ref string) string {
					name := varRef.FindStringSubmatch(ref)[1]
					if _, declared := env[name]; !declared {
						t.Fatalf("%s: %s is not in the container's environment: Kubernetes would leave it as it is", j.Name, ref)
					}
					return values[name]
				})
			}
			cmd, rest, err := cli.NewRoot().Find(args)
			if err != nil || cmd.Name() != phase {
				t.Fatalf("%s: args %q are not dbprobe %s: %v", j.Name, args, phase, err)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("%s: dbprobe %s refuses %q: %v", j.Name, phase, rest, err)
			}
			get := func(flag string) string {
				f := cmd.Flags().Lookup(flag)
				if f == nil || !f.Changed {
					t.Fatalf("%s: no --%s", j.Name, flag)
				}
				return f.Value.String()
			}
			if got := get("client-index"); got != strconv.Itoa(i) {
				t.Fatalf("%s: pod %d runs as --client-index %s", j.Name, i, got)
			}
			if got := get("client-count"); got != strconv.Itoa(n) {
				t.Fatalf("%s: --client-count %s, but the Job has %d completions", j.Name, got, n)
			}
			get("start-at")
			out := get("out")
			if !strings.HasPrefix(out, mounts["results"]+"/") {
				t.Fatalf("%s: --out %s is not on the results volume (%s)", j.Name, out, mounts["results"])
			}
			written[phase] = append(written[phase], out)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(written[phase])))) != n {
			t.Fatalf("%s: the clients write %q: not one file each", j.Name, written[phase])
		}
	}

	// The merge step reads exactly the files the clients wrote.
	merge := m.jobs["dbprobe-merge"].Spec.Template.Spec
	steps := append(append([]corev1.Container{}, merge.InitContainers...), merge.Containers...)
	merged := map[string]bool{}
	for _, c := range steps {
		cmd, rest, err := cli.NewRoot().Find(c.Args)
		if err != nil || cmd.Name() != "merge" {
			t.Fatalf("merge step %s: args %q are not dbprobe merge: %v", c.Name, c.Args, err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("merge step %s: %v", c.Name, err)
		}
		inputs := cmd.Flags().Args()
		for phase, files := range written {
			if slices.Equal(slices.Sorted(slices.Values(inputs)), slices.Sorted(slices.Values(files))) {
				merged[phase] = true
			}
		}
	}
	for phase := range written {
		if !merged[phase] {
			t.Fatalf("no merge step reads exactly the %s clients' results %q", phase, written[phase])
		}
	}
}
