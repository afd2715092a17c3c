package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs/pytorch"
)

// The shape of every PyTorch job: one master and three workers, each with a
// pod and a Service of the same name.
const (
	masters        = 1
	workers        = 3
	replicasPerJob = masters + workers
)

// pytorchWorkload is a PyTorchTrainingJob for accelstack, a PyTorchJob for
// the training operator.
var pytorchWorkload = workload{
	title:      "PyTorch",
	reconciler: pytorch.Kind{}.Component(),
	scheme:     "pytorchjob",
	ours:       pytorchTrainingJob,
	theirs:     pytorchJob,
}

// pytorchTemplate is the pod template of every replica of both
// controllers' PyTorch jobs: a PyTorch training container. Nothing runs it
// (no kubelet).
func pytorchTemplate() corev1.PodTemplateSpec {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:      "pytorch",
		Image:     "docker.io/pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime",
		Command:   []string{"python", "/workspace/train.py"},
		Args:      []string{"--epochs", "10"},
		Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
	}}}}
}

// pytorchTrainingJob is accelstack's PyTorch job.
func pytorchTrainingJob(namespace, name string) client.Object {
	return &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{
			{Type: pytorch.MasterType, Replicas: ptr.To[int32](masters), Template: pytorchTemplate()},
			{Type: pytorch.WorkerType, Replicas: ptr.To[int32](workers), Template: pytorchTemplate()},
		}},
	}
}

// pytorchJob is the training operator's PyTorch job.
func pytorchJob(namespace, name string) client.Object {
	return kubeflowJob("PyTorchJob", namespace, name, "pytorchReplicaSpecs", map[string]any{
		"Master": kubeflowReplica(masters, "OnFailure", pytorchTemplate()),
		"Worker": kubeflowReplica(workers, "OnFailure", pytorchTemplate()),
	})
}

// replicaNames returns the names of a PyTorch job's pods, which its
// Services share: <job>-master-0 and <job>-worker-0 to -2, as both
// controllers name them.
func replicaNames(job string) []string {
	names := make([]string, 0, replicasPerJob)
	for i := range masters {
		names = append(names, podName(job, "master", i))
	}
	for i := range workers {
		names = append(names, podName(job, "worker", i))
	}
	return names
}
