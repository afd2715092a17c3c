package t9kcli

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// simpleMLService is the SimpleMLService kind of the command tree.
var simpleMLService = kindNamed("simplemlservice")

// The frameworks smls create serves a model with.
const (
	techTensorFlow = "tensorflow"
	techPyTorch    = "pytorch"
)

// createSimpleCommand creates a SimpleMLService serving a model from S3
// or a PVC with TF Serving or TorchServe.
func (o *options) createSimpleCommand() *cobra.Command {
	var (
		c                    changeFlags
		model, image, secret string
		tech                 string
	)
	cmd := &cobra.Command{
		Use:   "create NAME --model=URL --image=IMAGE",
		Short: "Create a SimpleMLService serving a model with TF Serving or TorchServe",
		Long: "Create a SimpleMLService serving the model at --model with the server image --image.\n\n" +
			"--model is s3://<bucket>/<path> (downloaded with the S3 Secret --secret: keys endpoint,\n" +
			"accessKeyID, secretAccessKey) or pvc://<pvc>/<path> (mounted). --tech is tensorflow or\n" +
			"pytorch; without it the image's name tells (tensorflow, torch). Other servers: write the\n" +
			"SimpleMLService's spec.custom and use t9k create -f.",
		Example: "  t9k smls create mnist --model=s3://models/mnist/ --secret=s3-cred --image=t9kpublic/tensorflow-serving:2.6.0 -p demo\n" +
			"  t9k smls create mnist --model=pvc://models/mnist --image=t9kpublic/pytorch-serve:0.4.1-cpu -p demo",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := c.validate(cmd); err != nil {
				return err
			}
			if image == "" {
				return usageError(cmd, "--image is required")
			}
			storage, err := modelStorage(model, secret)
			if err != nil {
				return usageError(cmd, "--model: %v", err)
			}
			s := &tensorstackv1beta1.SimpleMLService{
				TypeMeta:   metav1.TypeMeta{APIVersion: tensorstackv1beta1.GroupVersion.String(), Kind: "SimpleMLService"},
				ObjectMeta: metav1.ObjectMeta{Name: args[0]},
				Spec:       tensorstackv1beta1.SimpleMLServiceSpec{Storage: storage},
			}
			switch t := techOf(tech, image); t {
			case techTensorFlow:
				s.Spec.TensorFlow = &tensorstackv1beta1.TensorFlowServer{Image: image}
			case techPyTorch:
				s.Spec.PyTorch = &tensorstackv1beta1.PyTorchServer{Image: image}
			case "":
				return usageError(cmd, "--tech: the image's name does not tell the framework; give --tech=tensorflow or --tech=pytorch")
			default:
				return usageError(cmd, "--tech %q: a SimpleMLService serves tensorflow or pytorch; write spec.custom for another server and use t9k create -f", t)
			}
			r, err := o.resource(simpleMLService)
			if err != nil {
				return err
			}
			saved, err := o.save(cmd.Context(), &c, r, s, true)
			if err != nil {
				return fmt.Errorf("creating SimpleMLService %s: %w", args[0], err)
			}
			if !c.dryRun {
				fmt.Fprintf(o.streams.Out, "simplemlservice %q created\n", saved.GetName())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "The model: s3://<bucket>/<path> or pvc://<pvc>/<path>")
	cmd.Flags().StringVar(&image, "image", "", "The serving image")
	cmd.Flags().StringVar(&secret, "secret", "", "The Secret of the S3 endpoint and credentials, for an s3:// model")
	cmd.Flags().StringVar(&tech, "tech", "", "The framework: tensorflow or pytorch (default: from the image's name)")
	c.add(cmd)
	return cmd
}

// techOf is the framework given, or the one the image's name tells, ""
// when neither.
func techOf(tech, image string) string {
	if tech != "" {
		return strings.ToLower(tech)
	}
	name := strings.ToLower(image)
	switch {
	case strings.Contains(name, "tensorflow"):
		return techTensorFlow
	case strings.Contains(name, "torch"):
		return techPyTorch
	}
	return ""
}

// modelStorage reads a model URL into the storage of a SimpleMLService.
func modelStorage(model, secret string) (*tensorstackv1beta1.ModelStorage, error) {
	u, err := url.Parse(model)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%q is not s3://<bucket>/<path> or pvc://<pvc>/<path>", model)
	}
	switch u.Scheme {
	case "s3":
		if secret == "" {
			return nil, fmt.Errorf("an s3:// model needs --secret, the Secret of the S3 endpoint and credentials")
		}
		return &tensorstackv1beta1.ModelStorage{S3: &tensorstackv1beta1.S3ModelStorage{
			URI: model, SecretRef: tensorstackv1beta1.SecretRef{Name: secret}}}, nil
	case "pvc":
		return &tensorstackv1beta1.ModelStorage{PVC: &tensorstackv1beta1.PVCModelStorage{
			Name: u.Host, SubPath: strings.Trim(u.Path, "/")}}, nil
	case "mms":
		return nil, fmt.Errorf("mms:// (the model management service) is not served here: put the model in S3 or a PVC")
	}
	return nil, fmt.Errorf("scheme %q: the model is s3://<bucket>/<path> or pvc://<pvc>/<path>", u.Scheme)
}
