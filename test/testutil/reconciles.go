package testutil

import (
	"fmt"
	"strings"
)

// Reconciles counts, in the log of a controller-runtime controller, the
// reconciles of the object ns/name of kind (the kind's name, as the log's
// key for the object) that started and those that ended, with or without
// an error.
func Reconciles(log, kind, ns, name string) (started, ended int) {
	tag := fmt.Sprintf(`%q={"name"=%q "namespace"=%q} "namespace"=%q "name"=%q "reconcileID"=`, kind, name, ns, ns, name)
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, tag) {
			continue
		}
		switch {
		case strings.Contains(line, `"msg"="Reconciling"`):
			started++
		case strings.Contains(line, `"msg"="Reconcile successful"`), strings.Contains(line, `"msg"="Reconcile done`),
			strings.Contains(line, `"msg"="Reconciler error"`):
			ended++
		}
	}
	return started, ended
}
