package pytorch

import (
	"sort"

	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// elastic is the resolved size range of an elastic training.
type elastic struct {
	min, max, expected int32
}

// elasticOf returns the size range of pj, or nil unless it trains
// elastically (elastic and torchrun both enabled). Unset bounds default to
// the replicas the spec lists.
func elasticOf(pj *batchv1beta1.PyTorchTrainingJob) *elastic {
	e, tc := pj.Spec.Elastic, pj.Spec.TorchrunConfig
	if e == nil || !e.Enabled || tc == nil || !tc.Enabled {
		return nil
	}
	var sum int32
	for _, rs := range pj.Spec.ReplicaSpecs {
		sum += jobs.ReplicaCount(rs.Replicas)
	}
	out := &elastic{}
	out.min = ptr.Deref(e.MinReplicas, ptr.Deref(e.MaxReplicas, sum))
	out.max = ptr.Deref(e.MaxReplicas, max(out.min, sum))
	out.expected = min(max(ptr.Deref(e.ExpectedReplicas, sum), out.min), out.max)
	return out
}

// weights returns the scaling weight of each type: the spec's, or, when no
// type has one, 1 for the worker type (or the last type).
func weights(pj *batchv1beta1.PyTorchTrainingJob) map[string]int32 {
	w := map[string]int32{}
	for _, rs := range pj.Spec.ReplicaSpecs {
		if n := ptr.Deref(rs.ScalingWeight, 0); n > 0 {
			w[rs.Type] = n
		}
	}
	if len(w) > 0 || len(pj.Spec.ReplicaSpecs) == 0 {
		return w
	}
	t := pj.Spec.ReplicaSpecs[len(pj.Spec.ReplicaSpecs)-1].Type
	for _, rs := range pj.Spec.ReplicaSpecs {
		if rs.Type == WorkerType {
			t = rs.Type
		}
	}
	w[t] = 1
	return w
}

// counts returns the replicas of each type at the expected size, and the
// least of each (the PodGroup roles) at the minimum size: types without a
// weight keep their replicas, the weighted types share the rest.
func (e *elastic) counts(pj *batchv1beta1.PyTorchTrainingJob) (counts, mins map[string]int32) {
	w := weights(pj)
	var fixed int32
	counts, mins = map[string]int32{}, map[string]int32{}
	for _, rs := range pj.Spec.ReplicaSpecs {
		if w[rs.Type] == 0 {
			n := jobs.ReplicaCount(rs.Replicas)
			counts[rs.Type], mins[rs.Type] = n, n
			fixed += n
		}
	}
	for t, n := range share(max(e.expected-fixed, 0), w, pj) {
		counts[t] = n
	}
	for t, n := range share(max(e.min-fixed, 0), w, pj) {
		mins[t] = n
	}
	return counts, mins
}

// share divides total among the weighted types in proportion to their
// weights, the remainder going to the largest fractions (spec order on
// ties).
func share(total int32, w map[string]int32, pj *batchv1beta1.PyTorchTrainingJob) map[string]int32 {
	var sum int32
	var types []string
	for _, rs := range pj.Spec.ReplicaSpecs {
		if w[rs.Type] > 0 {
			types = append(types, rs.Type)
			sum += w[rs.Type]
		}
	}
	out := map[string]int32{}
	if sum == 0 {
		return out
	}
	type frac struct {
		t   string
		rem int32
		i   int
	}
	var fr []frac
	var given int32
	for i, t := range types {
		out[t] = total * w[t] / sum
		given += out[t]
		fr = append(fr, frac{t, total * w[t] % sum, i})
	}
	sort.SliceStable(fr, func(a, b int) bool { return fr[a].rem > fr[b].rem })
	for i := 0; given < total; i++ {
		out[fr[i%len(fr)].t]++
		given++
	}
	return out
}
