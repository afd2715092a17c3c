// Package logdir reads where a TensorBoard's logs are: the locations of
// logDir (PVCs, S3, HTTP) and trainingLogFilesets, checked and turned into
// the runs of TensorBoard's --logdir_spec, the PVCs to mount, the Secret S3
// is read with and the files to download. It is a leaf, so that a T9k Job's
// tensorboardSpec is checked without the TensorBoard controller.
package logdir

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// Where the logs are in the TensorBoard container.
const (
	// PVCMountRoot holds each PVC, read-only, at PVCMountRoot/<pvc>.
	PVCMountRoot = "/t9k/logs/pvc"
	// HTTPDownloadRoot holds the files of logDir.http, downloaded before
	// TensorBoard starts, the i-th URL's in HTTPDownloadRoot/<i>.
	HTTPDownloadRoot = "/t9k/logs/http"
)

// The schemes of the URIs in a TensorBoard's spec.
const (
	// FilesetScheme starts trainingLogFilesets: t9k://pvc/<pvc>/<path> or
	// t9k://minio/<secret>/<bucket>/<path>.
	FilesetScheme = "t9k://"
	// S3Scheme starts logDir.s3.uri: s3://<bucket>[/<path>].
	S3Scheme = "s3://"
)

// Run is one entry of TensorBoard's --logdir_spec: a run name and the
// directory or URI of its logs.
type Run struct {
	Name, Path string
}

// Download is a file of logDir.http: URL saved as Dir/File.
type Download struct {
	URL, Dir, File string
}

// Plan is what a TensorBoard's spec asks for: the runs, the PVCs to mount,
// the one Secret S3 is read with, and the files to download.
type Plan struct {
	Runs      []Run
	PVCs      []string
	S3Secret  string
	Downloads []Download
}

// bucketRE matches an S3 bucket name.
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// Validate returns what is wrong with the locations of logs of a
// TensorBoard's spec at the path p: a location that is not one (unknown
// scheme or storage type, a path climbing out of its volume or bucket with
// "..", a character --logdir_spec cannot carry), S3 locations read with
// different Secrets, or no location at all.
func Validate(spec *tensorstackv1beta1.TensorBoardSpec, p *field.Path) field.ErrorList {
	_, errs := Build(spec, p)
	return errs
}

// Build reads the locations of logs of spec, logDir's first (PVCs, S3,
// HTTP), then trainingLogFilesets, naming each run after its location.
func Build(spec *tensorstackv1beta1.TensorBoardSpec, path *field.Path) (*Plan, field.ErrorList) {
	p := &Plan{}
	var errs field.ErrorList
	logDirPath := path.Child("logDir")
	if ld := spec.LogDir; ld != nil {
		for i, src := range ld.PVC {
			fp := logDirPath.Child("pvc").Index(i)
			if e := checkName(src.Name, fp.Child("name")); e != nil {
				errs = append(errs, e)
				continue
			}
			if len(src.SubPath) == 0 {
				p.addPVC(src.Name, "")
			}
			for j, sub := range src.SubPath {
				clean, e := cleanPath(sub, fp.Child("subPath").Index(j))
				if e != nil {
					errs = append(errs, e)
					continue
				}
				p.addPVC(src.Name, clean)
			}
		}
		if s3 := ld.S3; s3 != nil {
			fp := logDirPath.Child("s3")
			if e := checkName(s3.SecretRef.Name, fp.Child("secretRef", "name")); e != nil {
				errs = append(errs, e)
			} else {
				p.S3Secret = s3.SecretRef.Name
			}
			for i, uri := range s3.URI {
				bucket, key, e := parseS3URI(uri, fp.Child("uri").Index(i))
				if e != nil {
					errs = append(errs, e)
					continue
				}
				p.addS3(bucket, key)
			}
		}
		if h := ld.HTTP; h != nil {
			for i, raw := range h.URL {
				file, e := checkHTTPURL(raw, logDirPath.Child("http", "url").Index(i))
				if e != nil {
					errs = append(errs, e)
					continue
				}
				p.addHTTP(raw, file)
			}
		}
	}
	for i, fs := range spec.TrainingLogFilesets {
		errs = append(errs, p.addFileset(fs, path.Child("trainingLogFilesets").Index(i))...)
	}
	if len(errs) == 0 && len(p.Runs) == 0 {
		errs = append(errs, field.Required(path, "no location of logs: logDir or trainingLogFilesets must name at least one"))
	}
	return p, errs
}

// addFileset adds a t9k://pvc/<pvc>/<path> or
// t9k://minio/<secret>/<bucket>/<path> location.
func (p *Plan) addFileset(fs string, fp *field.Path) field.ErrorList {
	rest, ok := strings.CutPrefix(fs, FilesetScheme)
	if !ok {
		return field.ErrorList{field.Invalid(fp, fs, "unsupported scheme: want t9k://pvc/<pvc>/<path> or t9k://minio/<secret>/<bucket>/<path>")}
	}
	kind, rest, _ := strings.Cut(rest, "/")
	switch kind {
	case "pvc":
		name, sub, _ := strings.Cut(rest, "/")
		if e := checkName(name, fp); e != nil {
			return field.ErrorList{e}
		}
		clean, e := cleanPath(sub, fp)
		if e != nil {
			e.BadValue = fs
			return field.ErrorList{e}
		}
		p.addPVC(name, clean)
	case "minio":
		secret, rest, _ := strings.Cut(rest, "/")
		if e := checkName(secret, fp); e != nil {
			return field.ErrorList{e}
		}
		bucket, key, e := parseS3URI(S3Scheme+rest, fp)
		if e != nil {
			e.BadValue = fs
			return field.ErrorList{e}
		}
		if p.S3Secret != "" && p.S3Secret != secret {
			return field.ErrorList{field.Invalid(fp, fs, fmt.Sprintf("a TensorBoard reads S3 with one Secret, and %s is already named", p.S3Secret))}
		}
		p.S3Secret = secret
		p.addS3(bucket, key)
	default:
		return field.ErrorList{field.NotSupported(fp, kind, []string{"pvc", "minio"})}
	}
	return nil
}

// addPVC adds the directory sub of the PVC name.
func (p *Plan) addPVC(name, sub string) {
	if !slices.Contains(p.PVCs, name) {
		p.PVCs = append(p.PVCs, name)
	}
	p.addRun(path.Join(name, sub), path.Join(PVCMountRoot, name, sub))
}

// addS3 adds the prefix key of bucket.
func (p *Plan) addS3(bucket, key string) {
	uri := S3Scheme + bucket
	if key != "" {
		uri += "/" + key
	}
	p.addRun(path.Join(bucket, key), uri)
}

// addHTTP adds the file at url, downloaded as file.
func (p *Plan) addHTTP(url, file string) {
	dir := path.Join(HTTPDownloadRoot, strconv.Itoa(len(p.Downloads)))
	p.Downloads = append(p.Downloads, Download{URL: url, Dir: dir, File: file})
	p.addRun("http/"+strconv.Itoa(len(p.Downloads)-1), dir)
}

// addRun adds a run of the logs at dir, named name, or name-2, name-3...
// when it is taken. ':' would end a run's name in --logdir_spec.
func (p *Plan) addRun(name, dir string) {
	name = strings.ReplaceAll(name, ":", "_")
	for _, r := range p.Runs {
		if r.Path == dir {
			return
		}
	}
	taken := func(n string) bool {
		return slices.ContainsFunc(p.Runs, func(r Run) bool { return r.Name == n })
	}
	unique := name
	for i := 2; taken(unique); i++ {
		unique = name + "-" + strconv.Itoa(i)
	}
	p.Runs = append(p.Runs, Run{Name: unique, Path: dir})
}

// LogdirSpec returns the value of --logdir_spec.
func (p *Plan) LogdirSpec() string {
	parts := make([]string, len(p.Runs))
	for i, r := range p.Runs {
		parts[i] = r.Name + ":" + r.Path
	}
	return strings.Join(parts, ",")
}

// checkName checks the name of a PVC or Secret.
func checkName(name string, fp *field.Path) *field.Error {
	if name == "" {
		return field.Required(fp, "a PVC or Secret name")
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.Invalid(fp, name, msgs[0])
	}
	return nil
}

// cleanPath returns a path within a volume or bucket, relative and
// cleaned ("" for the root; a leading '/' is the root too), or an error
// when it climbs out with "..", holds a control character, or holds a ','
// that would split --logdir_spec.
func cleanPath(p string, fp *field.Path) (string, *field.Error) {
	if e := checkChars(p, fp); e != nil {
		return "", e
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", field.Invalid(fp, p, "must not contain '..'")
		}
	}
	clean := strings.TrimPrefix(path.Clean("/"+p), "/")
	return clean, nil
}

// checkChars refuses control characters and ','.
func checkChars(s string, fp *field.Path) *field.Error {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return field.Invalid(fp, s, "must not contain control characters")
	}
	if strings.Contains(s, ",") {
		return field.Invalid(fp, s, "must not contain ','")
	}
	return nil
}

// parseS3URI splits s3://<bucket>[/<path>] into the bucket and the
// cleaned path.
func parseS3URI(uri string, fp *field.Path) (bucket, key string, _ *field.Error) {
	rest, ok := strings.CutPrefix(uri, S3Scheme)
	if !ok {
		return "", "", field.Invalid(fp, uri, "unsupported scheme: want s3://<bucket>[/<path>]")
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if !bucketRE.MatchString(bucket) || strings.Contains(bucket, "..") {
		return "", "", field.Invalid(fp, uri, "the bucket must be 3 to 63 lower-case letters, digits, '.' and '-'")
	}
	key, e := cleanPath(key, fp)
	return bucket, key, e
}

// checkHTTPURL checks an http(s) URL of a file and returns the file's name.
func checkHTTPURL(raw string, fp *field.Path) (string, *field.Error) {
	if e := checkChars(raw, fp); e != nil {
		return "", e
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", field.Invalid(fp, raw, "unsupported scheme: want an http:// or https:// URL")
	}
	if u.Host == "" {
		return "", field.Invalid(fp, raw, "the URL has no host")
	}
	if e := checkChars(u.Path, fp); e != nil {
		return "", e
	}
	for _, part := range strings.Split(u.Path, "/") {
		if part == ".." {
			return "", field.Invalid(fp, raw, "must not contain '..'")
		}
	}
	file := path.Base(u.Path)
	if file == "/" || file == "." || file == "" {
		return "", field.Invalid(fp, raw, "the URL must name a file")
	}
	return file, nil
}
