package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The shape of every job: one master and three workers, each with a pod and
// a Service of the same name.
const (
	masters        = 1
	workers        = 3
	replicasPerJob = masters + workers
)

// podTemplate is the pod template of every replica of both controllers'
// jobs: a PyTorch training container. Nothing runs it (no kubelet).
func podTemplate() corev1.PodTemplateSpec {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:      "pytorch",
		Image:     "docker.io/pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime",
		Command:   []string{"python", "/workspace/train.py"},
		Args:      []string{"--epochs", "10"},
		Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
	}}}}
}

// replicaNames returns the names of job's pods, which its Services share:
// <job>-master-0 and <job>-worker-0 to -2, as both controllers name them.
func replicaNames(job string) []string {
	names := make([]string, 0, replicasPerJob)
	for i := range masters {
		names = append(names, fmt.Sprintf("%s-master-%d", job, i))
	}
	for i := range workers {
		names = append(names, fmt.Sprintf("%s-worker-%d", job, i))
	}
	return names
}
