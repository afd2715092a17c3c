package main

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs/mpijob"
)

// kubeflowMPIContainer is the training operator's main container name of
// MPI pods (its default for mainContainer).
const kubeflowMPIContainer = "mpi"

// mpiWorkload is MPI jobs of n workers and a launcher: accelstack's
// MPIJob, the training operator's kubeflow.org/v1 MPIJob.
func mpiWorkload(n int) workload {
	return workload{
		title:      "MPI",
		reconciler: mpijob.Kind{}.Component(),
		scheme:     "mpijob",
		ours: func(namespace, name string) client.Object {
			return &batchv1beta1.MPIJob{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
				Spec: batchv1beta1.MPIJobSpec{ReplicaSpecs: []batchv1beta1.MPIReplicaSpec{
					{Type: batchv1beta1.MPILauncher, Template: ptr.To(mpiLauncherTemplate(mpijob.Launcher, n))},
					{Type: batchv1beta1.MPIWorker, Replicas: ptr.To(int32(n)), Template: ptr.To(mpiWorkerTemplate(mpijob.Worker))},
				}},
			}
		},
		theirs: func(namespace, name string) client.Object {
			return kubeflowJob("MPIJob", namespace, name, "mpiReplicaSpecs", map[string]any{
				"Launcher": kubeflowReplica(1, "Never", mpiLauncherTemplate(kubeflowMPIContainer, n)),
				"Worker":   kubeflowReplica(int64(n), "Never", mpiWorkerTemplate(kubeflowMPIContainer)),
			})
		},
	}
}

// mpiImage is the image of every MPI pod; nothing runs it (the bench plays
// the kubelet).
const mpiImage = "docker.io/mpioperator/mpi-pi:openmpi"

// mpiWorkerTemplate is the pod template of every worker, its container
// named container. accelstack runs sshd in it, the training operator a
// sleep; each in place of the command.
func mpiWorkerTemplate(container string) corev1.PodTemplateSpec {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:      container,
		Image:     mpiImage,
		Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
	}}}}
}

// mpiLauncherTemplate is the pod template of the launcher of n workers, its
// container named container: pi on 2 slots of each worker. accelstack
// builds the mpirun command line itself.
func mpiLauncherTemplate(container string, n int) corev1.PodTemplateSpec {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:      container,
		Image:     mpiImage,
		Command:   []string{"mpirun", "-n", strconv.Itoa(2 * n), "/home/mpiuser/pi"},
		Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
	}}}}
}

// mpiWorkerNames are the names of the n worker pods of job, as both
// controllers name them.
func mpiWorkerNames(job string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = podName(job, "worker", i)
	}
	return names
}

// launcherName is the name of job's launcher pod, as both controllers name
// it.
func launcherName(job string) string { return job + "-launcher" }
