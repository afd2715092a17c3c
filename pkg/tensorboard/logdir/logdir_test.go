package logdir

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// specPath is the path of a TensorBoard's spec.
var specPath = field.NewPath("spec")

func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		name          string
		spec          tensorstackv1beta1.TensorBoardSpec
		wantLogdir    string
		wantPVCs      []string
		wantSecret    string
		wantDownloads []Download
	}{{
		name:       "seed fileset",
		spec:       tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://pvc/pytorchtrainingjob-tensorboard-pvc/log"}},
		wantLogdir: "pytorchtrainingjob-tensorboard-pvc/log:/t9k/logs/pvc/pytorchtrainingjob-tensorboard-pvc/log",
		wantPVCs:   []string{"pytorchtrainingjob-tensorboard-pvc"},
	}, {
		name:       "minio fileset",
		spec:       tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://minio/secret-name/bucket1/log/model"}},
		wantLogdir: "bucket1/log/model:s3://bucket1/log/model",
		wantSecret: "secret-name",
	}, {
		name: "logDir of every kind",
		spec: tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{
			PVC:  []tensorstackv1beta1.PVCDataSource{{Name: "a", SubPath: []string{"/log/", "x/./y"}}, {Name: "b"}},
			S3:   &tensorstackv1beta1.S3DataSource{SecretRef: tensorstackv1beta1.SecretRef{Name: "s3"}, URI: []string{"s3://bucket/run", "s3://bucket"}},
			HTTP: &tensorstackv1beta1.HTTPDataSource{URL: []string{"https://example.com/logs/events.out.tfevents.1?sig=x"}},
		}},
		wantLogdir: "a/log:/t9k/logs/pvc/a/log,a/x/y:/t9k/logs/pvc/a/x/y,b:/t9k/logs/pvc/b,bucket/run:s3://bucket/run,bucket:s3://bucket,http/0:/t9k/logs/http/0",
		wantPVCs:   []string{"a", "b"},
		wantSecret: "s3",
		wantDownloads: []Download{{
			URL: "https://example.com/logs/events.out.tfevents.1?sig=x", Dir: "/t9k/logs/http/0", File: "events.out.tfevents.1",
		}},
	}, {
		name: "same name twice, same place once",
		spec: tensorstackv1beta1.TensorBoardSpec{
			LogDir:              &tensorstackv1beta1.TensorBoardDataSource{PVC: []tensorstackv1beta1.PVCDataSource{{Name: "abc", SubPath: []string{"log"}}}},
			TrainingLogFilesets: []string{"t9k://pvc/abc/log", "t9k://minio/s/abc/log", "t9k://pvc/abc/c:d"},
		},
		wantLogdir: "abc/log:/t9k/logs/pvc/abc/log,abc/log-2:s3://abc/log,abc/c_d:/t9k/logs/pvc/abc/c:d",
		wantPVCs:   []string{"abc"},
		wantSecret: "s",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, errs := Build(&tc.spec, specPath)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if got := p.LogdirSpec(); got != tc.wantLogdir {
				t.Errorf("logdir_spec\n got %s\nwant %s", got, tc.wantLogdir)
			}
			if diff := cmp.Diff(tc.wantPVCs, p.PVCs); diff != "" {
				t.Errorf("PVCs (-want +got):\n%s", diff)
			}
			if p.S3Secret != tc.wantSecret {
				t.Errorf("S3 Secret %q, want %q", p.S3Secret, tc.wantSecret)
			}
			if diff := cmp.Diff(tc.wantDownloads, p.Downloads); diff != "" {
				t.Errorf("downloads (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateRefuses(t *testing.T) {
	pvc := func(name string, sub ...string) tensorstackv1beta1.TensorBoardSpec {
		return tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{PVC: []tensorstackv1beta1.PVCDataSource{{Name: name, SubPath: sub}}}}
	}
	s3 := func(secret string, uri ...string) tensorstackv1beta1.TensorBoardSpec {
		return tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{S3: &tensorstackv1beta1.S3DataSource{SecretRef: tensorstackv1beta1.SecretRef{Name: secret}, URI: uri}}}
	}
	http := func(url string) tensorstackv1beta1.TensorBoardSpec {
		return tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{HTTP: &tensorstackv1beta1.HTTPDataSource{URL: []string{url}}}}
	}
	filesets := func(fs ...string) tensorstackv1beta1.TensorBoardSpec {
		return tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: fs}
	}
	for _, tc := range []struct {
		name      string
		spec      tensorstackv1beta1.TensorBoardSpec
		wantField string
		wantText  string
	}{
		{"nothing", tensorstackv1beta1.TensorBoardSpec{}, "spec", "no location of logs"},
		{"unknown fileset scheme", filesets("s3://bucket/log"), "spec.trainingLogFilesets[0]", "unsupported scheme"},
		{"unknown fileset type", filesets("t9k://nfs/server/log"), "spec.trainingLogFilesets[0]", `"nfs"`},
		{"fileset traversal", filesets("t9k://pvc/a/log/../../etc"), "spec.trainingLogFilesets[0]", "'..'"},
		{"fileset bad PVC", filesets("t9k://pvc/A_B/log"), "spec.trainingLogFilesets[0]", "RFC 1123"},
		{"minio traversal", filesets("t9k://minio/s/bucket/../x"), "spec.trainingLogFilesets[0]", "'..'"},
		{"two S3 secrets", filesets("t9k://minio/s/bucket/x", "t9k://minio/t/bucket/y"), "spec.trainingLogFilesets[1]", "one Secret"},
		{"S3 secret and minio secret", func() tensorstackv1beta1.TensorBoardSpec {
			s := s3("s", "s3://bucket/x")
			s.TrainingLogFilesets = []string{"t9k://minio/t/bucket/y"}
			return s
		}(), "spec.trainingLogFilesets[0]", "one Secret"},
		{"subPath traversal", pvc("a", "log/.."), "spec.logDir.pvc[0].subPath[0]", "'..'"},
		{"subPath comma", pvc("a", "a,b"), "spec.logDir.pvc[0].subPath[0]", "','"},
		{"subPath newline", pvc("a", "a\nb"), "spec.logDir.pvc[0].subPath[0]", "control"},
		{"PVC without name", pvc(""), "spec.logDir.pvc[0].name", "Required"},
		{"S3 scheme", s3("s", "gs://bucket/x"), "spec.logDir.s3.uri[0]", "unsupported scheme"},
		{"S3 bucket", s3("s", "s3://B/x"), "spec.logDir.s3.uri[0]", "bucket"},
		{"S3 traversal", s3("s", "s3://bucket/../other"), "spec.logDir.s3.uri[0]", "'..'"},
		{"S3 secret", s3("", "s3://bucket/x"), "spec.logDir.s3.secretRef.name", "Required"},
		{"HTTP scheme", http("ftp://example.com/events"), "spec.logDir.http.url[0]", "unsupported scheme"},
		{"HTTP no file", http("https://example.com/"), "spec.logDir.http.url[0]", "name a file"},
		{"HTTP traversal", http("https://example.com/a/%2e%2e/b"), "spec.logDir.http.url[0]", "'..'"},
		{"HTTP NUL", http("https://example.com/a%00b"), "spec.logDir.http.url[0]", "control"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := Validate(&tc.spec, specPath)
			if len(errs) == 0 {
				t.Fatal("admitted")
			}
			if errs[0].Field != tc.wantField || !strings.Contains(errs[0].Error(), tc.wantText) {
				t.Errorf("got %v, want field %s and %q", errs, tc.wantField, tc.wantText)
			}
		})
	}
}

// TestValidateAtPath: a training job's tensorboardSpec is checked at its
// own path.
func TestValidateAtPath(t *testing.T) {
	spec := tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://pvc/logs/../.."}}
	errs := Validate(&spec, field.NewPath("spec", "tensorboardSpec"))
	if len(errs) != 1 || errs[0].Field != "spec.tensorboardSpec.trainingLogFilesets[0]" {
		t.Errorf("got %v", errs)
	}
}
