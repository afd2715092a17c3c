// Package ascend discovers Huawei Ascend NPUs for the device plugin and the
// node agent, through the DCMI library or a simulated machine.
package ascend
