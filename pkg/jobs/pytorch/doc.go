// Package pytorch is the PyTorchTrainingJob kind of the jobs engine: the
// environment torch.distributed reads (as the Kubeflow training operator
// sets it), the torchrun launch, elastic sizing, and the job's TensorBoard.
package pytorch
