package reclaim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/accelstack/accelstack/pkg/activity"
)

// UserAgent is the User-Agent of the Keeper's probes.
const UserAgent = "accelstack-resource-keeper"

// maxBody bounds what the Keeper reads of a probe's answer.
const maxBody = 4 << 20

// getJSON GETs url and decodes its JSON answer into v.
func getJSON(ctx context.Context, c *http.Client, url string, header http.Header, v any) error {
	body, err := get(ctx, c, url, header)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decoding the answer of %s: %w", url, err)
	}
	return nil
}

// get GETs url and returns the body of a 200 answer.
func get(ctx context.Context, c *http.Client, url string, header http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", UserAgent)
	// The sidecar proxies a request carrying activity.ProbeHeader without
	// counting it as a client's: probing Jupyter through it must not keep
	// the notebook active. The Keeper also discounts a last request within
	// its own last Jupyter call, should a sidecar count it anyway.
	req.Header.Set(activity.ProbeHeader, "1")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}

// readReport reads the activity sidecar's report at base, e.g.
// http://10.1.2.3:8080.
func readReport(ctx context.Context, c *http.Client, base string) (*activity.Report, error) {
	var r activity.Report
	if err := getJSON(ctx, c, base+activity.ReportPath, nil, &r); err != nil {
		return nil, err
	}
	if r.Since.IsZero() {
		return nil, fmt.Errorf("the report of %s has no since", base)
	}
	return &r, nil
}

// JupyterStatus is the answer of Jupyter's /api/status.
type JupyterStatus struct {
	// Started is when the server started.
	Started time.Time `json:"started"`
	// LastActivity is the server's last activity: an API request of a
	// client, a kernel's message or a terminal's.
	LastActivity time.Time `json:"last_activity"`
	// Connections counts the clients connected to kernels.
	Connections int `json:"connections"`
	// Kernels counts the running kernels.
	Kernels int `json:"kernels"`
}

// JupyterKernel is one kernel in the answer of Jupyter's /api/kernels.
type JupyterKernel struct {
	// ID of the kernel.
	ID string `json:"id"`
	// Name of the kernel spec.
	Name string `json:"name"`
	// LastActivity is the kernel's last message.
	LastActivity time.Time `json:"last_activity"`
	// ExecutionState: idle, busy or starting.
	ExecutionState string `json:"execution_state"`
}

// JupyterActivity is what Jupyter's API says.
type JupyterActivity struct {
	// Status is the answer of /api/status.
	Status JupyterStatus
	// Kernels is the answer of /api/kernels.
	Kernels []JupyterKernel
}

// Busy counts the kernels executing.
func (a JupyterActivity) Busy() int {
	n := 0
	for _, k := range a.Kernels {
		if k.ExecutionState == "busy" {
			n++
		}
	}
	return n
}

// Last is the latest of the server's and the kernels' last activity.
func (a JupyterActivity) Last() time.Time {
	last := a.Status.LastActivity
	for _, k := range a.Kernels {
		if k.LastActivity.After(last) {
			last = k.LastActivity
		}
	}
	return last
}

// readJupyter reads Jupyter's API at base, the server's URL with its base
// path (e.g. http://10.1.2.3:8080/notebook/ns/name). token, when set, is
// sent as Jupyter's token; access holds the sidecar's access token (see
// accessHeader). Both calls ask Jupyter not to count them as activity
// (no_track_activity, which /api/status needs not).
func readJupyter(ctx context.Context, c *http.Client, base, token string, access http.Header) (*JupyterActivity, error) {
	h := access.Clone()
	if token != "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("Authorization", "token "+token)
	}
	var a JupyterActivity
	if err := getJSON(ctx, c, base+"/api/status?no_track_activity=1", h, &a.Status); err != nil {
		return nil, err
	}
	if err := getJSON(ctx, c, base+"/api/kernels?no_track_activity=1", h, &a.Kernels); err != nil {
		return nil, err
	}
	if a.Status.LastActivity.IsZero() {
		return nil, fmt.Errorf("the status of %s has no last_activity", base)
	}
	return &a, nil
}
