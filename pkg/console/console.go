package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
)

// BuildPrefix is where the Build Console is served, as in the platform's
// URLs.
const BuildPrefix = gatewayapi.BuildConsolePath

// staticDir is the path of the assets under a console's prefix; below it,
// the assets' version (a digest of them all) and then their names, so that
// browsers keep them (immutable) until the console changes.
const staticDir = "static/"

//go:embed web/index.html web/*.js web/*.css web/kinds.json web/vendor
var web embed.FS

// Config is what the front end is told of where things are; the defaults
// are the gateway's paths.
type Config struct {
	// Prefix is the console's path, ending in a slash.
	Prefix string `json:"prefix"`
	// KubernetesPath is the Kubernetes API as the user.
	KubernetesPath string `json:"kubernetesPath"`
	// SessionPath answers the login session (user, groups, CSRF token).
	SessionPath string `json:"sessionPath"`
	// LoginPath starts a login; LogoutPath ends the session.
	LoginPath  string `json:"loginPath"`
	LogoutPath string `json:"logoutPath"`
	// ProjectsPath answers the user's projects and their scopes.
	ProjectsPath string `json:"projectsPath"`
	// CSRFHeader is the header a change carries the session's token in.
	CSRFHeader string `json:"csrfHeader"`
}

// DefaultConfig is the Build Console behind the gateway.
func DefaultConfig() Config {
	return Config{
		Prefix:         BuildPrefix,
		KubernetesPath: gatewayapi.KubernetesPath,
		SessionPath:    gatewayapi.SessionPath,
		LoginPath:      gatewayapi.LoginPath,
		LogoutPath:     gatewayapi.LogoutPath,
		ProjectsPath:   gatewayapi.ProjectsPath,
		CSRFHeader:     gatewayapi.CSRFHeader,
	}
}

// asset is an embedded file as served.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves a console: its assets under Prefix+"static/<version>/", and its
// page at every other path under Prefix, where the front end routes.
type Handler struct {
	cfg    Config
	assets map[string]asset
	// static is the assets' path under Prefix: staticDir, their version
	// and a slash.
	static string
	page   []byte
	csp    string
}

// importMapMark is where the page template takes the import map.
const importMapMark = "IMPORT-MAP"

// importMap resolves the packages' bare names for the browser, under the
// assets' path static.
func importMap(static string) map[string]map[string]string {
	return map[string]map[string]string{"imports": {
		"preact":           "./" + static + "vendor/preact.mjs",
		"preact/hooks":     "./" + static + "vendor/preact-hooks.mjs",
		"htm":              "./" + static + "vendor/htm.mjs",
		"js-yaml":          "./" + static + "vendor/js-yaml.mjs",
		"@xterm/xterm":     "./" + static + "vendor/xterm.mjs",
		"@xterm/addon-fit": "./" + static + "vendor/xterm-addon-fit.mjs",
	}}
}

// NewHandler returns the handler of the console cfg describes.
func NewHandler(cfg Config) (*Handler, error) {
	if !strings.HasPrefix(cfg.Prefix, "/") || !strings.HasSuffix(cfg.Prefix, "/") {
		return nil, fmt.Errorf("console prefix %q: want a path that starts and ends with /", cfg.Prefix)
	}
	h := &Handler{cfg: cfg, assets: map[string]asset{}}
	sub, err := fs.Sub(web, "web")
	if err != nil {
		return nil, fmt.Errorf("the embedded assets: %w", err)
	}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "index.html" {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		sum := sha256.Sum256(b)
		h.assets[p] = asset{body: b, contentType: contentType(p), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the embedded assets: %w", err)
	}
	h.static = staticDir + h.version() + "/"
	if err := h.render(sub); err != nil {
		return nil, err
	}
	return h, nil
}

// render writes the page with its configuration and import map, and the
// Content-Security-Policy that lets the page run its own scripts only:
// the import map, inline, is allowed by its digest. Styles may be inline:
// the terminal (xterm.js) writes its measured cell sizes and colors into a
// style element; with images and connections to the page's own origin
// only, injected CSS can neither load nor send anything.
func (h *Handler) render(sub fs.FS) error {
	tmpl, err := template.ParseFS(sub, "index.html")
	if err != nil {
		return fmt.Errorf("the page template: %w", err)
	}
	imports, err := json.Marshal(importMap(h.static))
	if err != nil {
		return fmt.Errorf("the import map: %w", err)
	}
	config, err := json.Marshal(h.cfg)
	if err != nil {
		return fmt.Errorf("the configuration: %w", err)
	}
	var page bytes.Buffer
	err = tmpl.Execute(&page, map[string]any{
		"Base":   h.cfg.Prefix,
		"Static": h.static,
		// JSON of the package's own making, in a script element the
		// browser reads as data.
		"Config": template.JS(config),
	})
	if err != nil {
		return fmt.Errorf("rendering the page: %w", err)
	}
	// html/template knows no import maps: the map, the package's own
	// JSON, goes in as it is, where the template marks its place.
	if bytes.Count(page.Bytes(), []byte(importMapMark)) != 1 {
		return fmt.Errorf("the page template must hold %s once", importMapMark)
	}
	sum := sha256.Sum256(imports)
	h.page = bytes.Replace(page.Bytes(), []byte(importMapMark), imports, 1)
	h.csp = "default-src 'self'; script-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
	return nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, h.cfg.Prefix)
	if !ok {
		if r.URL.Path+"/" == h.cfg.Prefix {
			http.Redirect(w, r, h.cfg.Prefix, http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "same-origin")
	if strings.HasPrefix(rest, staticDir) {
		name, ok := strings.CutPrefix(rest, h.static)
		if !ok { // another version's, or no version
			http.NotFound(w, r)
			return
		}
		h.serveAsset(w, r, name)
		return
	}
	hdr.Set("Content-Security-Policy", h.csp)
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	_, _ = w.Write(h.page)
}

// version is a digest of every asset's name and content.
func (h *Handler) version() string {
	names := slices.Sorted(maps.Keys(h.assets))
	sum := sha256.New()
	for _, n := range names {
		fmt.Fprintf(sum, "%s %s\n", n, h.assets[n].etag)
	}
	return hex.EncodeToString(sum.Sum(nil))[:16]
}

// serveAsset serves an embedded file. Its path names the version of all
// the assets, so a browser keeps it as long as it likes.
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := h.assets[path.Clean(name)]
	if !ok || path.Clean(name) != name {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("ETag", a.etag)
	hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", a.contentType)
	_, _ = w.Write(a.body)
}

// contentType is the type of an asset by its extension; ES modules
// (.mjs) are JavaScript, which browsers insist on for modules.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".mjs", ".js":
		return "text/javascript; charset=utf-8"
	case ".LICENSE":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}
