package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/accelstack/accelstack/test/cluster/modelserver"
	"github.com/accelstack/accelstack/test/cluster/standin"
	"github.com/accelstack/accelstack/test/harness"
)

// The images of the training workloads that the jobs tests and the demo
// run: Debian's builds of the frameworks, CPU only, built from Debian
// packages (DebianImage) and imported like the other images.
var (
	// PyTorchImage has python3 with PyTorch 1.13 and NumPy.
	PyTorchImage = Image("pytorch")
	// XGBoostImage has python3 with XGBoost 1.7 and NumPy.
	XGBoostImage = Image("xgboost")
	// MPIImage has Open MPI, OpenSSH's client and server, and python3 with
	// mpi4py, for the launcher-and-sshd jobs.
	MPIImage = Image("mpi")
	// PDSHImage has python3 with PyTorch 1.13, pdsh (whose command is a
	// bash script) and OpenSSH's client and server: what a DeepSpeedJob's
	// workers need, less DeepSpeed, which Debian does not package.
	PDSHImage = Image("pdsh")
	// NotebookImage has Jupyter Notebook 6 with the Python 3 kernel, for
	// the Notebooks of the e2e tests and the demo. Jupyter needs a writable
	// HOME, which the image leaves to the pod (HOME=/tmp), and runs as
	// root, so it needs --allow-root.
	NotebookImage = Image("notebook")
	// ExplorerImage runs an Explorer's file browser and code-server in the
	// local cluster: python3 with the stand-ins of package standin at the
	// paths of the real images' programs.
	ExplorerImage = Image("explorer")
	// ServingImage serves models in the serving tests and the demo:
	// python3 with the model server of package modelserver at
	// /usr/bin/model-server.
	ServingImage = Image("serving")
)

// accountFiles are the accounts of images with sshd: root, whose login
// shell runs the commands that ssh sends, and sshd's privilege separation
// user, which the package's scripts would have added.
var accountFiles = map[string]string{
	"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\nsshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n",
	"/etc/group":  "root:x:0:\nnogroup:x:65534:\n",
}

// workloadPATH is the PATH of the workload images.
const workloadPATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// workloadImages define the workload images. What they omit is never
// loaded by a Python program training on the CPU in a container: the
// tools that maintainer scripts use (which never run in an image); Mesa's
// GPU drivers with the LLVM they are compiled with, which only a program
// drawing with OpenGL loads; PyTorch's C++ test programs; and Pythran, the
// compiler SciPy's extensions were built with, with the C++ toolchain it
// needs.
var workloadImages = []DebianImage{
	{
		Ref:      PyTorchImage,
		Packages: []string{"python3-torch=1.13", "python3-numpy"},
		Omit:     append([]string{"libtorch-test"}, maintainerTools...),
		Env:      []string{workloadPATH},
	},
	{
		Ref:      XGBoostImage,
		Packages: []string{"python3-xgboost=1.7", "python3-numpy"},
		Omit:     append([]string{"python3-pythran"}, maintainerTools...),
		Env:      []string{workloadPATH},
	},
	{
		Ref: MPIImage,
		// The shell and coreutils are Essential, which no package asks
		// for: sshd's command runs through the shell.
		Packages: []string{"openmpi-bin", "openssh-server", "openssh-client", "python3-mpi4py", "dash", "coreutils"},
		Omit:     maintainerTools,
		Env:      []string{workloadPATH},
		Files:    accountFiles,
	},
	{
		Ref:      PDSHImage,
		Packages: []string{"python3-torch=1.13", "python3-numpy", "pdsh", "openssh-server", "openssh-client", "dash", "bash", "coreutils"},
		Omit:     append([]string{"libtorch-test"}, maintainerTools...),
		Env:      []string{workloadPATH},
		Files:    accountFiles,
	},
	{
		Ref:      NotebookImage,
		Packages: []string{"jupyter-notebook=6", "python3-ipykernel", "dash", "coreutils"},
		Omit:     maintainerTools,
		Env:      []string{workloadPATH},
		Files:    rootAccount,
	},
	{
		Ref:      ExplorerImage,
		Packages: []string{"python3", "dash"},
		Omit:     maintainerTools,
		Env:      []string{workloadPATH},
		Files: map[string]string{
			"/filebrowser":         standin.FileBrowser,
			"/usr/bin/code-server": standin.CodeServer,
			"/usr/bin/dumb-init":   standin.DumbInit,
		},
	},
	{
		Ref:      ServingImage,
		Packages: []string{"python3"},
		Omit:     maintainerTools,
		Env:      []string{workloadPATH},
		Files:    map[string]string{modelserver.Path: modelserver.Script},
	},
}

// rootAccount is the account of an image whose programs look their user up
// (Jupyter's terminals, Python's getpass).
var rootAccount = map[string]string{
	"/etc/passwd": "root:x:0:0:root:/root:/bin/sh\n",
	"/etc/group":  "root:x:0:\n",
}

// maintainerTools are the packages of tools that maintainer scripts run,
// and Mesa's drivers.
var maintainerTools = []string{"adduser", "debconf", "passwd", "libgl1-mesa-dri"}

// BuildWorkloadImages builds the workload images that changed into the
// image directory, as Up would: a run before Up (CI starts one while it
// compiles) leaves Up only the images it has to import.
func (c *Cluster) BuildWorkloadImages(ctx context.Context) error {
	_, err := c.buildWorkloadImages(ctx)
	return err
}

// buildWorkloadImages builds the workload images that changed and returns
// their archives.
func (c *Cluster) buildWorkloadImages(ctx context.Context) ([]string, error) {
	// On a new machine, nothing has made the image cache yet.
	if err := os.MkdirAll(c.opts.ImageDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the image cache: %w", err)
	}
	cache := debianCache{dir: filepath.Join(harness.CacheDir(), "debian")}
	var paths []string
	for _, img := range workloadImages {
		path := filepath.Join(c.opts.ImageDir, archiveName(img.Ref))
		if _, err := buildDebianImage(ctx, cache, img, path); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// archiveName is the file name of the archive of the image ref.
func archiveName(ref string) string {
	return strings.NewReplacer("/", "_", ":", "_").Replace(strings.TrimPrefix(ref, "localhost/")) + ".tar"
}
