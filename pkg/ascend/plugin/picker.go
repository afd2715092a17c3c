package plugin

import (
	"context"

	"github.com/accelstack/accelstack/pkg/ascend"
)

// ChipPicker chooses the chips an Allocate gives in place of the kubelet's
// device IDs, as Volcano mode (pkg/ascend/volcano) gives the chips the
// scheduler annotated on the pod. The vendor calls Start from its Start,
// before advertising, and Stop from its Stop; a stopped picker may be
// started again. PickChips runs inside Allocate, so it must return within
// a short bound (see deviceplugin.Resource).
type ChipPicker interface {
	// Start prepares picking; an error fails the vendor's Start.
	Start(ctx context.Context) error
	// PickChips returns the chips of resource (e.g. huawei.com/Ascend910)
	// for an Allocate of the kubelet's device IDs. resolve maps chosen
	// device IDs to this node's chips of resource and refuses empty,
	// unknown or duplicate IDs (InvalidArgument) and unhealthy chips
	// (FailedPrecondition). Errors are gRPC status errors.
	PickChips(ctx context.Context, resource string, kubeletIDs []string, resolve func(ids []string) ([]ascend.Chip, error)) ([]ascend.Chip, error)
	// Stop ends what Start started and waits for it.
	Stop()
}
