package harness

import (
	"crypto/tls"
	"net/http"
)

// insecureTransport reaches the self-signed health endpoints of the
// components a test started itself on loopback.
func insecureTransport() *http.Transport {
	return &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback health probe of a test-owned process
}
