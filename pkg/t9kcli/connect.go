package t9kcli

import (
	"fmt"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/accelstack/accelstack/pkg/t9kconfig"
)

// connection is how t9k reaches the cluster: through the platform's
// gateway with a context of the T9k config, or as kubectl does. The T9k
// config is used when no kubeconfig is named (--kubeconfig, $KUBECONFIG,
// --server) and it has the context of -x/--context, or a current one; a
// -x that the T9k config does not have names a kubeconfig context, unless
// -c/--config named the T9k config.
type connection struct {
	*genericclioptions.ConfigFlags
	// configPath is -c/--config, the T9k config's path.
	configPath string

	once sync.Once
	err  error
}

// prepare settles the connection once: with a T9k context, it sets the
// connection flags to the gateway and the context's credential, and reads
// no kubeconfig.
func (c *connection) prepare() error {
	c.once.Do(func() { c.err = c.useT9kContext() })
	return c.err
}

// useT9kContext sets the flags from the T9k context in effect, if any.
func (c *connection) useT9kContext() error {
	if *c.KubeConfig != "" || *c.APIServer != "" || os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		return nil
	}
	path, named := c.configPath, c.configPath != ""
	if !named {
		path = t9kconfig.DefaultPath()
	}
	cfg, err := t9kconfig.Load(path)
	if err != nil {
		return err
	}
	name := *c.Context
	if name == "" {
		name = cfg.CurrentContext
	}
	ctx := cfg.Find(name)
	switch {
	case ctx == nil && named && name == "":
		return fmt.Errorf("the T9k config %s has no current context: t9k config use-context NAME", path)
	case ctx == nil && named:
		return fmt.Errorf("the T9k config %s has no context %q", path, name)
	case ctx == nil:
		return nil
	}
	rc, err := ctx.RESTConfig()
	if err != nil {
		return err
	}
	*c.KubeConfig = os.DevNull
	*c.Context = ""
	*c.APIServer, *c.BearerToken, *c.Insecure = rc.Host, rc.BearerToken, rc.Insecure
	if len(rc.CAData) > 0 {
		c.WrapConfigFn = func(r *rest.Config) *rest.Config {
			r.CAData = rc.CAData
			return r
		}
	}
	return nil
}

// ToRESTConfig implements genericclioptions.RESTClientGetter.
func (c *connection) ToRESTConfig() (*rest.Config, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	return c.ConfigFlags.ToRESTConfig()
}

// ToDiscoveryClient implements genericclioptions.RESTClientGetter.
func (c *connection) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	return c.ConfigFlags.ToDiscoveryClient()
}

// ToRESTMapper implements genericclioptions.RESTClientGetter.
func (c *connection) ToRESTMapper() (meta.RESTMapper, error) {
	if err := c.prepare(); err != nil {
		return nil, err
	}
	return c.ConfigFlags.ToRESTMapper()
}

// ToRawKubeConfigLoader implements genericclioptions.RESTClientGetter; a
// T9k config that cannot be read leaves the flags as they are, and
// ToRESTConfig reports it.
func (c *connection) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	_ = c.prepare()
	return c.ConfigFlags.ToRawKubeConfigLoader()
}
