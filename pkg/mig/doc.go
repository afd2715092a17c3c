// Package mig names and advertises NVIDIA MIG devices under the none, single
// and mixed strategies (nvidia.com/mig-<g>g.<mem>gb).
package mig
