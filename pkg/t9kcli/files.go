package t9kcli

import (
	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/cmd/create"
	"k8s.io/kubectl/pkg/cmd/delete"
)

// createCommand is kubectl create -f: the objects of files (the
// platform's kinds, PVCs, Secrets, ...) created in the project.
func (o *options) createCommand() *cobra.Command {
	cmd := create.NewCmdCreate(o.factory, o.streams)
	cmd.ResetCommands() // kubectl's create <kind> generators are not the platform's
	cmd.Use = "create -f FILENAME"
	cmd.Short = "Create the objects of a file (-f), e.g. a Notebook, a job, a PVC or a Secret"
	cmd.Long = "Create the objects of the files given with -f (YAML or JSON; - is the standard input) in the project."
	cmd.Example = "  t9k create -f notebook.yaml -p demo"
	return cmd
}

// deleteFilesCommand is kubectl delete -f: the objects of files deleted.
func (o *options) deleteFilesCommand() *cobra.Command {
	cmd := delete.NewCmdDelete(o.factory, o.streams)
	cmd.Use = "delete -f FILENAME"
	cmd.Short = "Delete the objects of a file (-f)"
	cmd.Long = "Delete the objects named in the files given with -f from the project."
	cmd.Example = "  t9k delete -f notebook.yaml -p demo"
	return cmd
}
