package nodeagent

import "strconv"

// Ascend node label keys.
const (
	// LabelAscendServerType is the Ascend device plugin's servertype label,
	// <chip>-<AI cores>, e.g. Ascend910B-20, read by Volcano.
	LabelAscendServerType = "servertype"
	// LabelAscendNPUCount is the number of NPUs on the node.
	LabelAscendNPUCount = "huawei.com/npu.count"
)

// AscendLabels returns the labels of a node with count NPUs of the given
// chip (e.g. Ascend910B) and AI cores per chip; an Ascend Source puts
// them in its SourceSnapshot.
func AscendLabels(chip string, aiCores, count int) map[string]string {
	out := map[string]string{LabelAscendNPUCount: strconv.Itoa(count)}
	if chip != "" && aiCores > 0 {
		out[LabelAscendServerType] = labelValue(chip + "-" + strconv.Itoa(aiCores))
	}
	return out
}
