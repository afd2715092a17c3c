package deviceplugin

import "context"

// NullVendor advertises nothing. It stands in for a vendor whose backend is
// not built in, so the plugin idles instead of crash-looping.
type NullVendor struct {
	// VendorName is returned by Name.
	VendorName string
}

var _ Vendor = NullVendor{}

// Name returns the vendor name.
func (n NullVendor) Name() string { return n.VendorName }

// Start returns no resources.
func (NullVendor) Start(context.Context) ([]Resource, error) { return nil, nil }

// Stop does nothing.
func (NullVendor) Stop() error { return nil }

// Reload reports no change.
func (NullVendor) Reload() (bool, error) { return false, nil }
