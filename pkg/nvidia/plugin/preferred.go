package plugin

import (
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	configv1 "github.com/accelstack/accelstack/api/config/v1"
)

// maxCombinations bounds the exhaustive search for whole GPUs; larger
// searches fall back to a greedy pick.
const maxCombinations = 20000

// preferred picks size IDs out of available, always including mustInclude.
// Replicas are spread over the least-used GPUs (or packed on the most-used
// ones); whole GPUs prefer NVLink-connected sets, then a shared NUMA node.
func preferred(r *resourceSpec, byID map[string]*advertised, nvlink [][]bool, policy string, available, must []string, size int) ([]string, error) {
	if size < 1 {
		return nil, status.Errorf(codes.InvalidArgument, "allocation size %d for %s must be at least 1", size, r.name)
	}
	if size > len(available) {
		return nil, status.Errorf(codes.InvalidArgument, "allocation size %d for %s exceeds the %d available devices", size, r.name, len(available))
	}
	if len(must) > size {
		return nil, status.Errorf(codes.InvalidArgument, "%d must-include devices exceed allocation size %d for %s", len(must), size, r.name)
	}
	avail := map[string]bool{}
	for _, id := range available {
		if _, ok := byID[id]; !ok {
			return nil, status.Errorf(codes.InvalidArgument, "unknown device ID %q for resource %s", id, r.name)
		}
		avail[id] = true
	}
	for _, id := range must {
		if !avail[id] {
			return nil, status.Errorf(codes.InvalidArgument, "must-include device %q is not among the available devices of %s", id, r.name)
		}
	}
	if r.replicated {
		return spreadReplicas(byID, available, must, size, policy == configv1.SharedPolicyPacked), nil
	}
	return bestSet(byID, nvlink, available, must, size), nil
}

// spreadReplicas takes must, then one replica at a time from the GPU with
// the most free replicas (distributed) or the fewest (packed).
func spreadReplicas(byID map[string]*advertised, available, must []string, size int, packed bool) []string {
	chosen := map[string]bool{}
	out := append([]string{}, must...)
	for _, id := range must {
		chosen[id] = true
	}
	free := map[string][]string{} // parent UUID -> free replica IDs
	order := map[string]int{}
	for _, id := range available {
		if chosen[id] {
			continue
		}
		p := byID[id].dev.UUID
		if _, ok := order[p]; !ok {
			order[p] = byID[id].dev.GPUIndex*1000 + len(order)
		}
		free[p] = append(free[p], id)
	}
	taken := map[string]int{}
	for _, id := range must {
		taken[byID[id].dev.UUID]++
	}
	for len(out) < size {
		best := ""
		for p, ids := range free {
			if len(ids) == 0 {
				continue
			}
			if best == "" || better(p, best, free, taken, order, packed) {
				best = p
			}
		}
		out = append(out, free[best][0])
		free[best] = free[best][1:]
		taken[best]++
	}
	return out
}

func better(p, q string, free map[string][]string, taken, order map[string]int, packed bool) bool {
	// Within one request, spread first: a GPU we already took from is worse.
	if !packed && taken[p] != taken[q] {
		return taken[p] < taken[q]
	}
	if len(free[p]) != len(free[q]) {
		if packed {
			return len(free[p]) < len(free[q])
		}
		return len(free[p]) > len(free[q])
	}
	return order[p] < order[q]
}

// bestSet returns the set with the highest topology score.
func bestSet(byID map[string]*advertised, nvlink [][]bool, available, must []string, size int) []string {
	mustSet := map[string]bool{}
	for _, id := range must {
		mustSet[id] = true
	}
	var rest []string
	for _, id := range available {
		if !mustSet[id] {
			rest = append(rest, id)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return byID[rest[i]].dev.GPUIndex < byID[rest[j]].dev.GPUIndex })
	need := size - len(must)
	score := func(ids []string) int {
		s := 0
		for i := range ids {
			for j := i + 1; j < len(ids); j++ {
				a, b := byID[ids[i]].dev, byID[ids[j]].dev
				if a.GPUIndex < len(nvlink) && b.GPUIndex < len(nvlink[a.GPUIndex]) && nvlink[a.GPUIndex][b.GPUIndex] {
					s += 10
				}
				if a.NUMANode >= 0 && a.NUMANode == b.NUMANode {
					s++
				}
				if a.GPUIndex == b.GPUIndex {
					s += 20
				}
			}
		}
		return s
	}
	if binomial(len(rest), need) > maxCombinations {
		out := append([]string{}, must...)
		used := map[string]bool{}
		for len(out) < size {
			bestID, bestScore := "", -1
			for _, id := range rest {
				if used[id] {
					continue
				}
				if s := score(append(out, id)); s > bestScore {
					bestID, bestScore = id, s
				}
			}
			used[bestID] = true
			out = append(out, bestID)
		}
		return out
	}
	var best []string
	bestScore := -1
	cur := append([]string{}, must...)
	var walk func(start int)
	walk = func(start int) {
		if len(cur) == size {
			if s := score(cur); s > bestScore {
				bestScore, best = s, append([]string{}, cur...)
			}
			return
		}
		for i := start; i <= len(rest)-(size-len(cur)); i++ {
			cur = append(cur, rest[i])
			walk(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	walk(0)
	return best
}

func binomial(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
		if r > maxCombinations*10 {
			return r
		}
	}
	return r
}
