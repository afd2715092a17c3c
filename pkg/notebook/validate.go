package notebook

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// ValidateSpec returns what keeps the spec of nb from running, naming the
// fields: a template without containers, names and ports
// the controller adds to the pod, invalid or repeated Secret names in
// spec.ssh.authorized_keys, and a queue name that is no label value. The
// webhook refuses such Notebooks; the controller reports them in Ready.
func ValidateSpec(nb *tensorstackv1beta1.Notebook) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	pod := spec.Child("template", "spec")
	for i, c := range nb.Spec.Template.Spec.Containers {
		p := pod.Child("containers").Index(i)
		if c.Name == activity.ContainerName {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, "is the name of the activity sidecar the controller adds"))
		}
		for j, port := range c.Ports {
			if port.ContainerPort == activity.HTTPPort || port.ContainerPort == activity.SSHPort {
				errs = append(errs, field.Invalid(p.Child("ports").Index(j).Child("containerPort"), port.ContainerPort,
					fmt.Sprintf("ports %d and %d are the activity sidecar's", activity.HTTPPort, activity.SSHPort)))
			}
		}
	}
	if len(nb.Spec.Template.Spec.Containers) == 0 {
		errs = append(errs, field.Required(pod.Child("containers"),
			fmt.Sprintf("a container runs the notebook server: the one named %q, or else the first", tensorstackv1beta1.NotebookContainer)))
	}
	for i, c := range nb.Spec.Template.Spec.InitContainers {
		if c.Name == activity.ContainerName {
			errs = append(errs, field.Invalid(pod.Child("initContainers").Index(i).Child("name"), c.Name, "is the name of the activity sidecar the controller adds"))
		}
	}
	for i, v := range nb.Spec.Template.Spec.Volumes {
		if v.Name == sshKeysVolume {
			errs = append(errs, field.Invalid(pod.Child("volumes").Index(i).Child("name"), v.Name, "is the name of the volume of the SSH authorized keys the controller adds"))
		}
		if v.Name == activity.AccessVolumeName {
			errs = append(errs, field.Invalid(pod.Child("volumes").Index(i).Child("name"), v.Name, "is the name of the volume of the access Secret the controller adds"))
		}
	}
	if ssh := nb.Spec.SSH; ssh != nil {
		p := spec.Child("ssh", "authorized_keys")
		seen := map[string]bool{}
		for i, name := range ssh.AuthorizedKeys {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(p.Index(i), name, "is not a Secret name: "+msg))
			}
			if seen[name] {
				errs = append(errs, field.Duplicate(p.Index(i), name))
			}
			seen[name] = true
		}
	}
	return append(errs, interactive.ValidateScheduler(nb.Spec.Scheduler, spec.Child("scheduler"))...)
}
