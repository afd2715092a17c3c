package csis3

import csipb "github.com/container-storage-interface/spec/lib/go/csi"

// supportedAccessModes are the modes any S3 volume can serve.
var supportedAccessModes = map[csipb.VolumeCapability_AccessMode_Mode]bool{
	csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER:       true,
	csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY:  true,
	csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY:   true,
	csipb.VolumeCapability_AccessMode_MULTI_NODE_SINGLE_WRITER: true,
	csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER:  true,
}

// checkCapabilities returns why caps cannot be served, or "" when they can.
// The Controller and Node services both check requests with it.
func checkCapabilities(caps []*csipb.VolumeCapability) string {
	for _, c := range caps {
		if c.GetBlock() != nil {
			return "block access is not supported"
		}
		if c.GetMount() == nil {
			return "a mount access type is required"
		}
		if fs := c.GetMount().GetFsType(); fs != "" && fs != "fuse" {
			return "fsType " + fs + " is not supported"
		}
		if !supportedAccessModes[c.GetAccessMode().GetMode()] {
			return "access mode " + c.GetAccessMode().GetMode().String() + " is not supported"
		}
	}
	return ""
}
